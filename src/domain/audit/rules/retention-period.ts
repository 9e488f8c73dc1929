/* How long the trail is kept before a purge may remove its oldest part. */

/** EU AI Act Art. 19: logs are kept at least six months. Nothing younger is ever purged. */
export const RETENTION_MONTHS = 6;

/** The newest instant a purge at `now` may reach back to: anything later is still within retention. */
export function oldestPurgeableBefore(now: Date): Date {
  const d = new Date(now.getTime());
  d.setUTCMonth(d.getUTCMonth() - RETENTION_MONTHS);
  return d;
}
