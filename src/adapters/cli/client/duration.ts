import { InvalidArgumentError } from 'commander';

/** The longest lifetime a standing grant may have: 90 days, as the server bounds it. */
const MAX_GRANT_SECONDS = 90 * 24 * 3600;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

/** `--expires-in`: seconds, or a number and a unit (90s, 30m, 8h, 7d, 2w); from 1 s to 90 days. */
export function grantLifetime(v: string): number {
  const m = /^(\d+)\s*(s|m|h|d|w)?$/.exec(v.trim());
  if (!m) throw new InvalidArgumentError('use seconds or a number and a unit: 90s, 30m, 8h, 7d, 2w');
  const seconds = Number(m[1]) * UNIT_SECONDS[m[2] ?? 's'];
  if (seconds < 1 || seconds > MAX_GRANT_SECONDS) throw new InvalidArgumentError('must be from 1 second to 90 days');
  return seconds;
}
