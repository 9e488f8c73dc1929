/** The Slack approver's settings (SLACK_*, TOLLGATE_SLACK_*), read by loadConfig. */
import { ConfigError } from './config-error';

export interface SlackConfig {
  botToken: string;
  signingSecret: string;
  /** Channel id (or name) the approval requests are posted to. */
  channel: string;
  /** Web API base URL, e.g. https://slack.com/api/ (tests point it at a stand-in). */
  apiUrl: string;
  /** The tenant whose requests Slack shows and in which Slack approvers act. */
  tenant: string;
  /** Slack user id → Tollgate roles (TOLLGATE_SLACK_APPROVERS="U123:approver,U456:admin"). */
  approvers: Record<string, string[]>;
}

const SLACK_REQUIRED = ['SLACK_BOT_TOKEN', 'SLACK_SIGNING_SECRET', 'SLACK_CHANNEL'] as const;

/** All three Slack settings or none: a half-configured Slack would silently ask no one. */
export function slackConfig(env: NodeJS.ProcessEnv): SlackConfig | undefined {
  const missing = SLACK_REQUIRED.filter((k) => !env[k]);
  if (missing.length === SLACK_REQUIRED.length) return undefined;
  if (missing.length > 0)
    throw new ConfigError(`Slack needs ${SLACK_REQUIRED.join(', ')}; missing: ${missing.join(', ')}`);
  const apiUrl = env.SLACK_API_URL || 'https://slack.com/api/';
  if (!/^https?:\/\//.test(apiUrl)) throw new ConfigError(`SLACK_API_URL must be an http(s) URL, got "${apiUrl}"`);
  return {
    botToken: env.SLACK_BOT_TOKEN!,
    signingSecret: env.SLACK_SIGNING_SECRET!,
    channel: env.SLACK_CHANNEL!,
    apiUrl: apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`,
    tenant: env.TOLLGATE_SLACK_TENANT || 'default',
    approvers: parseSlackApprovers(env.TOLLGATE_SLACK_APPROVERS ?? ''),
  };
}

/** `U123:approver,U456:admin` (a user named twice gets both roles; `U789:approver+admin` works too). */
export function parseSlackApprovers(raw: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const entry of raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const m = /^([A-Z0-9]+):([a-z_]+(?:\+[a-z_]+)*)$/i.exec(entry);
    if (!m)
      throw new ConfigError(`TOLLGATE_SLACK_APPROVERS: "${entry}" is not <Slack user id>:<role>, e.g. U123:approver`);
    const roles = m[2].split('+');
    if (roles.includes('agent'))
      throw new ConfigError(
        `TOLLGATE_SLACK_APPROVERS: "${entry}": Slack users are people; the agent role cannot decide`,
      );
    out[m[1]] = [...new Set([...(out[m[1]] ?? []), ...roles])];
  }
  return out;
}
