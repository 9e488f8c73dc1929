import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack refuses replays older than this, and so do we. */
export const SLACK_MAX_AGE_SECONDS = 5 * 60;

export type SlackSignatureCheck = { ok: true } | { ok: false; reason: string };

/** `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<raw body>` under the app's signing secret. */
export function slackSignature(signingSecret: string, timestamp: string, rawBody: Buffer | string): string {
  return `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:`).update(rawBody).digest('hex')}`;
}

/**
 * Checks `X-Slack-Signature` over the exact bytes received, within five minutes of
 * `X-Slack-Request-Timestamp` (either way), comparing in constant time.
 */
export function verifySlackSignature(
  signingSecret: string,
  headers: { timestamp?: string | string[]; signature?: string | string[] },
  rawBody: Buffer,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): SlackSignatureCheck {
  const timestamp = single(headers.timestamp);
  const signature = single(headers.signature);
  if (!timestamp || !signature)
    return { ok: false, reason: 'X-Slack-Request-Timestamp and X-Slack-Signature are required' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'X-Slack-Request-Timestamp is not a Unix time' };
  if (Math.abs(nowSeconds - Number(timestamp)) > SLACK_MAX_AGE_SECONDS)
    return { ok: false, reason: 'The request is older than five minutes (or from the future)' };
  const expected = Buffer.from(slackSignature(signingSecret, timestamp, rawBody));
  const given = Buffer.from(signature);
  // timingSafeEqual wants equal lengths; a wrong length is wrong, and says nothing about the secret.
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, reason: 'X-Slack-Signature does not verify' };
  return { ok: true };
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? (v.length === 1 ? v[0] : undefined) : v;
}
