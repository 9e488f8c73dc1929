/**
 * The Settings page's pure parts: the words for each choice, what the forms send, local date-times to and from
 * ISO, and the server's refusals sorted onto the fields they are about.
 */
import { TollgateError } from '@tollgate/sdk';
import type { Cadence, Delegation, DelegationRequest, NotificationSettings } from './types';

/** The choices per channel, in the order offered. */
export const CADENCES: ReadonlyArray<{ value: Cadence; label: string }> = [
  { value: 'immediate', label: 'A message per request' },
  { value: 'hourly', label: 'Hourly digest' },
  { value: 'daily', label: 'Daily digest' },
  { value: 'off', label: 'Off' },
];

/** The reach form as the person edits it: quiet hours keep their times while switched off, to switch back on. */
export interface ReachForm {
  email: Cadence;
  push: Cadence;
  slack: Cadence;
  dailyAt: string;
  timeZone: string;
  quiet: boolean;
  quietFrom: string;
  quietTo: string;
}

/** Quiet hours offered when someone first switches them on: the night. */
const NIGHT = { from: '22:00', to: '07:00' };

export function reachForm(s: NotificationSettings): ReachForm {
  return {
    email: s.email,
    push: s.push,
    slack: s.slack,
    dailyAt: s.dailyAt,
    timeZone: s.timeZone,
    quiet: !!s.quietHours,
    quietFrom: s.quietHours?.from ?? NIGHT.from,
    quietTo: s.quietHours?.to ?? NIGHT.to,
  };
}

/** The PUT body: every field, as the form shows it (the server checks them, and names the ones it refuses). */
export function reachBody(f: ReachForm): NotificationSettings {
  return {
    email: f.email,
    push: f.push,
    slack: f.slack,
    dailyAt: f.dailyAt,
    timeZone: f.timeZone.trim(),
    quietHours: f.quiet ? { from: f.quietFrom, to: f.quietTo } : null,
  };
}

const UTC_NAMES = new Set(['UTC', 'Etc/UTC', 'Etc/GMT', 'GMT', 'Etc/Universal', 'Etc/Zulu']);

/**
 * The browser's time zone, to offer when the stored one is UTC (the server's default, which few people live in) and
 * the browser is elsewhere. Only offered: a laptop abroad is not where its owner's nights are.
 */
export function zoneSuggestion(stored: string, browser: string | undefined): string | undefined {
  if (!browser || !UTC_NAMES.has(stored) || UTC_NAMES.has(browser)) return undefined;
  return browser;
}

/** The browser's IANA time zone, when it says. */
export function browserTimeZone(): string | undefined {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || undefined;
  } catch {
    return undefined;
  }
}

/** The zone the page reads and shows date-times in: the browser's, or UTC (said so) where it does not tell. */
export function pageTimeZone(): string {
  return browserTimeZone() ?? 'UTC';
}

const two = (n: number) => String(n).padStart(2, '0');

/** How far `zone`'s clocks are ahead of UTC at the instant `ms` (Berlin in summer: two hours), in ms. */
function offset(ms: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(ms));
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const wall = Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second'));
  return wall - (ms - (((ms % 1000) + 1000) % 1000));
}

/** An instant as a `datetime-local` input's value (`YYYY-MM-DDTHH:MM`), as clocks in `zone` show it. */
export function localInput(iso: string, zone: string): string {
  const ms = Date.parse(iso);
  const d = new Date(ms + offset(ms, zone));
  return `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}T${two(d.getUTCHours())}:${two(d.getUTCMinutes())}`;
}

/**
 * A `datetime-local` value, read as clocks in `zone` show it, as an ISO instant; undefined when it is not one. The
 * zone is explicit (the browser's, named on the page) rather than the Date's local time, so what the page says and
 * what it sends agree. A time the clocks skip (02:30 on a spring-forward night) is taken as they show it then
 * (03:30); a time they show twice, as the later one.
 */
export function isoFromLocal(value: string, zone: string): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value.trim());
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map((x) => (x === undefined ? 0 : Number(x)));
  const wall = Date.UTC(y, mo - 1, d, h, mi, s);
  const check = new Date(wall);
  // Date.UTC(2026, 1, 30) is 2 March: a day or hour that does not exist is not a date someone chose.
  if (check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) return undefined;
  // The zone's offset at the wall time read as UTC is close; the offset at that first guess settles it.
  const guess = wall - offset(wall, zone);
  return new Date(wall - offset(guess, zone)).toISOString();
}

/** What the delegation form holds: `to` as typed, times as the inputs give them (local), empty when not set. */
export interface DelegationForm {
  to: string;
  from: string;
  until: string;
  reason: string;
}

/** The form over an existing delegation: its `from` only while it is still to come (one that holds starts now). */
export function delegationForm(d: Delegation | null, now: number, zone: string): DelegationForm {
  if (!d) return { to: '', from: '', until: '', reason: '' };
  return {
    to: d.to.id,
    from: Date.parse(d.from) > now ? localInput(d.from, zone) : '',
    until: localInput(d.until, zone),
    reason: d.reason ?? '',
  };
}

/**
 * The PUT body, or the fields that are wrong before asking the server: who, and when it ends, are needed; times
 * must be dates. The rules on the period (not past, at most 90 days) are the server's, shown as it words them.
 */
export function delegationBody(
  f: DelegationForm,
  zone: string,
): { ok: true; body: DelegationRequest } | { ok: false; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const to = f.to.trim();
  if (!to) errors.to = "Whom? A person's id or email.";
  const from = f.from.trim() ? isoFromLocal(f.from, zone) : undefined;
  if (f.from.trim() && !from) errors.from = 'Not a date and time.';
  const until = isoFromLocal(f.until, zone);
  if (!f.until.trim()) errors.until = 'Until when? Pick a date and time.';
  else if (!until) errors.until = 'Not a date and time.';
  if (Object.keys(errors).length > 0 || !until) return { ok: false, errors };
  const reason = f.reason.trim();
  return { ok: true, body: { to, ...(from ? { from } : {}), until, ...(reason ? { reason } : {}) } };
}

/**
 * Where a delegation stands at `now`. The server's `active` is right as of the answer (a delegation "from now"
 * starts by the server's clock, which may run ahead of the page's); after that time moves on: one to come starts
 * at `from`, and any is over at `until`.
 */
export function delegationState(
  d: Pick<Delegation, 'from' | 'until' | 'active'>,
  now: number,
): 'active' | 'planned' | 'over' {
  if (now >= Date.parse(d.until)) return 'over';
  return d.active || now >= Date.parse(d.from) ? 'active' : 'planned';
}

/** "Bob (bob)", or the id alone when the record has no name. */
export function personLabel(p: { id: string; name?: string }): string {
  return p.name && p.name !== p.id ? `${p.name} (${p.id})` : p.id;
}

/** A date and time a person plans by: "Mon 3 Aug 2026, 09:00", as clocks in `zone` show it. */
export function dateTime(iso: string, zone: string): string {
  return new Date(iso).toLocaleString(undefined, {
    timeZone: zone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
}

/** Refusals of PUT /v1/me/delegation that are about whom it names: shown at the `to` field. */
const ABOUT_THE_DELEGATE = new Set([
  'unknown_person',
  'ambiguous_person',
  'delegation_to_self',
  'delegate_is_agent',
  'too_many_delegations',
]);

/**
 * A refusal sorted for a form: the messages of `validation_failed` on the fields they name (by the path's first
 * part, `quietHours.from` → `quietHours`), a delegate the server refused on `to`, and the rest (another field,
 * another error, no answer at all) as one sentence for the whole form.
 */
export function formErrors(
  e: unknown,
  fields: readonly string[],
  fallback: (e: unknown) => string,
): { fields: Record<string, string>; other?: string } {
  const out: Record<string, string> = {};
  const rest: string[] = [];
  if (e instanceof TollgateError && e.code === 'validation_failed') {
    const faults = Array.isArray(e.problem.errors) ? e.problem.errors : [];
    for (const f of faults as Array<{ path?: unknown; message?: unknown }>) {
      const field = String(f.path ?? '').split(/[.[]/)[0];
      const message = String(f.message ?? 'is not valid');
      if (fields.includes(field)) out[field] = out[field] ? `${out[field]}; ${message}` : message;
      else rest.push(field ? `${field} ${message}` : message);
    }
    if (rest.length === 0 && Object.keys(out).length === 0) rest.push(e.detail);
  } else if (e instanceof TollgateError && ABOUT_THE_DELEGATE.has(e.code) && fields.includes('to')) {
    out.to = e.detail;
  } else {
    rest.push(fallback(e));
  }
  return { fields: out, ...(rest.length > 0 ? { other: rest.join('; ') } : {}) };
}
