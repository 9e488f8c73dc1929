import { ErrorCode, LogLevel, WebClient } from '@slack/web-api';
import type { SlackConfig } from '../../infrastructure/config/config';

export const SLACK_CLIENT = Symbol('SlackWebClient');

/**
 * The Web API client. No retries of its own: a failed call throws, and the outbox retries the delivery
 * with its own backoff (so a Slack outage delays only Slack). The token is sent in the Authorization
 * header and never logged.
 */
export function slackWebClient(config: SlackConfig): WebClient {
  return new WebClient(config.botToken, {
    slackApiUrl: config.apiUrl,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: 10_000,
    logLevel: LogLevel.ERROR,
  });
}

/** Slack's answer `{ok: false, error}`, e.g. `message_not_found`; undefined for transport failures. */
export function slackPlatformError(e: unknown): string | undefined {
  const err = e as { code?: string; data?: { error?: string } };
  return err?.code === ErrorCode.PlatformError ? err.data?.error : undefined;
}

/**
 * Errors that retrying can cure: Slack itself struggling, or a setting an operator can fix (a revoked token,
 * a channel the bot is not in). Anything else (a deleted message, blocks Slack refuses) would block the
 * channel's stream forever, so it is logged and passed over.
 */
const CURABLE = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'no_permission',
  'missing_scope',
  'channel_not_found',
  'not_in_channel',
  'is_archived',
  'ratelimited',
  'fatal_error',
  'internal_error',
  'service_unavailable',
  'request_timeout',
]);

export function isCurable(e: unknown): boolean {
  const platform = slackPlatformError(e);
  return platform === undefined || CURABLE.has(platform);
}
