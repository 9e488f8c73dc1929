import { DateTime, IANAZone } from 'luxon';
import { ValidationError, type ValidationFault } from '../../domain/shared/domain-error';

/** The channels that reach one person (the web inbox and the CLI are where they look; Slack channels are shared). */
export const REACH_CHANNELS = ['email', 'push', 'slack'] as const;
export type ReachChannel = (typeof REACH_CHANNELS)[number];

/** `immediate`: a message per held call; `hourly` / `daily`: one digest of what waits; `off`: nothing. */
export const CADENCES = ['immediate', 'hourly', 'daily', 'off'] as const;
export type Cadence = (typeof CADENCES)[number];

/** How a person wants to be reached, per channel, with an optional quiet time each day in their time zone. */
export interface NotificationPreferences {
  email: Cadence;
  push: Cadence;
  /** Direct messages from the Slack app to the person's linked Slack user (the channel message is shared: not here). */
  slack: Cadence;
  /** When the daily digest goes out, `HH:MM` in `timeZone`. */
  dailyAt: string;
  /** An IANA time zone (`Europe/Berlin`). */
  timeZone: string;
  /** Nothing is sent from `from` to `to` (`HH:MM`, may wrap past midnight); what would have been is sent at `to`. */
  quietHours: { from: string; to: string } | null;
}

export const DEFAULT_PREFERENCES: NotificationPreferences = {
  email: 'immediate',
  push: 'immediate',
  slack: 'off',
  dailyAt: '09:00',
  timeZone: 'UTC',
  quietHours: null,
};

const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$/;
const FIELDS = ['email', 'push', 'slack', 'dailyAt', 'timeZone', 'quietHours'];

/** `body` (a PUT: any of the fields) over `current`, or a ValidationError naming each bad field. */
export function mergePreferences(current: NotificationPreferences, body: unknown): NotificationPreferences {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new ValidationError([{ path: '', message: 'must be a JSON object' }]);
  const b = body as Record<string, unknown>;
  const faults: ValidationFault[] = [];
  for (const k of Object.keys(b))
    if (!FIELDS.includes(k)) faults.push({ path: k, message: `is not a setting (${FIELDS.join(', ')})` });
  const next = { ...current };
  for (const c of REACH_CHANNELS) {
    if (b[c] === undefined) continue;
    if (typeof b[c] === 'string' && (CADENCES as readonly string[]).includes(b[c] as string)) next[c] = b[c] as Cadence;
    else faults.push({ path: c, message: `must be one of ${CADENCES.join(', ')}` });
  }
  if (b.dailyAt !== undefined) {
    if (typeof b.dailyAt === 'string' && HHMM.test(b.dailyAt)) next.dailyAt = b.dailyAt;
    else faults.push({ path: 'dailyAt', message: 'must be a time of day, HH:MM (24 h)' });
  }
  if (b.timeZone !== undefined) {
    if (typeof b.timeZone === 'string' && b.timeZone.length <= 64 && IANAZone.isValidZone(b.timeZone))
      next.timeZone = b.timeZone;
    else faults.push({ path: 'timeZone', message: 'must be an IANA time zone, such as Europe/Berlin or UTC' });
  }
  if (b.quietHours !== undefined) {
    const q = b.quietHours as { from?: unknown; to?: unknown } | null;
    if (q === null) next.quietHours = null;
    else if (
      typeof q === 'object' &&
      !Array.isArray(q) &&
      Object.keys(q).every((k) => k === 'from' || k === 'to') &&
      typeof q.from === 'string' &&
      typeof q.to === 'string' &&
      HHMM.test(q.from) &&
      HHMM.test(q.to) &&
      q.from !== q.to
    )
      next.quietHours = { from: q.from, to: q.to };
    else faults.push({ path: 'quietHours', message: 'must be null or {from, to}, two different times HH:MM' });
  }
  if (faults.length) throw new ValidationError(faults);
  return next;
}

/** Stored settings as they are read back: settings that no longer read (an older shape) count as the defaults. */
export function readStored(raw: unknown): NotificationPreferences {
  try {
    return mergePreferences(DEFAULT_PREFERENCES, raw);
  } catch {
    return { ...DEFAULT_PREFERENCES };
  }
}

/** What to do with a message for a channel now: send it, put it in a digest due at `at`, or drop it. */
export type Delivery = { kind: 'now' } | { kind: 'digest'; at: Date } | { kind: 'never' };

function minutes(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h * 60 + m;
}

/** Whether local time `t` falls in the quiet hours, and when they end (the first `to` after `t`). */
function quietEnd(p: NotificationPreferences, t: DateTime): DateTime | undefined {
  if (!p.quietHours) return undefined;
  const now = t.hour * 60 + t.minute;
  const from = minutes(p.quietHours.from);
  const to = minutes(p.quietHours.to);
  const quiet = from < to ? now >= from && now < to : now >= from || now < to;
  if (!quiet) return undefined;
  let end = t.set({ hour: Math.floor(to / 60), minute: to % 60, second: 0, millisecond: 0 });
  if (end <= t) end = end.plus({ days: 1 });
  return end;
}

/** The first local `HH:MM` strictly after `t`. */
function nextAt(t: DateTime, hhmm: string): DateTime {
  const m = minutes(hhmm);
  let at = t.set({ hour: Math.floor(m / 60), minute: m % 60, second: 0, millisecond: 0 });
  if (at <= t) at = at.plus({ days: 1 });
  return at;
}

/**
 * When a message for `channel` goes out under `p`: `immediate` now (or, in quiet hours, in a digest when they
 * end); `hourly` in a digest at the next full hour, `daily` at the next `dailyAt` — each moved to the end of the
 * quiet hours should it fall in them; `off` never. Local times are the person's time zone (DST included).
 */
export function deliveryFor(p: NotificationPreferences, channel: ReachChannel, now: Date): Delivery {
  const cadence = p[channel];
  if (cadence === 'off') return { kind: 'never' };
  const t = DateTime.fromJSDate(now, { zone: p.timeZone });
  if (cadence === 'immediate') {
    const end = quietEnd(p, t);
    return end ? { kind: 'digest', at: end.toJSDate() } : { kind: 'now' };
  }
  const due = cadence === 'hourly' ? t.startOf('hour').plus({ hours: 1 }) : nextAt(t, p.dailyAt);
  return { kind: 'digest', at: (quietEnd(p, due) ?? due).toJSDate() };
}
