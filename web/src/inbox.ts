/**
 * The inbox's state, kept apart from the view so it can be tested without a browser: the pending calls the
 * person may decide, and the ones that left with a short note of who decided where. Snapshots from
 * `GET /v1/approvals` and events from the live stream may arrive in any order; an id that left never comes
 * back from an older snapshot.
 */
import { channelName, duration } from './format';
import { stepUpOf } from './passkeys';
import type { Approval, AuditEvent, Decision, ToolCall } from './types';

export interface Departure {
  id: string;
  title: string;
  /** `notified`: a `notify` call ran at once and this person is among those told (it never waited). */
  outcome: 'approved' | 'rejected' | 'expired' | 'cancelled' | 'gone' | 'notified';
  /** "approved by ann via Slack" */
  note: string;
  /** Local time it left (ms), for lingering and "recently decided". */
  at: number;
}

export interface InboxState {
  /** Pending calls, oldest first; a call that just left stays listed (with its note) for LINGER_MS. */
  items: Approval[];
  /** Every id seen leaving: a late snapshot cannot bring one back. */
  gone: ReadonlyMap<string, Departure>;
  /** What left the list, and the `notify` calls this person is told of, newest first. */
  recent: Departure[];
}

export const LINGER_MS = 6000;
const RECENT = 20;
const GONE_KEPT = 5000;

export const emptyInbox: InboxState = { items: [], gone: new Map(), recent: [] };

export function titleOf(call: Pick<ToolCall, 'toolName' | 'display'>): string {
  return call.display?.title?.trim() || call.toolName;
}

const byAge = (a: Approval, b: Approval) =>
  Date.parse(a.createdAt) - Date.parse(b.createdAt) || a.id.localeCompare(b.id);

/**
 * Applies a fresh `GET /v1/approvals`: returns the new state and the calls that are new to the list.
 *
 * A listed call the snapshot no longer has left for a reason only its event tells; after a reconnect the
 * snapshot can overtake the replayed events. Such a call lingers as `gone` ("no longer waiting for you") until
 * its event names the outcome (see `depart`); a later snapshot that lists it pending again brings it back, since
 * nothing but a snapshot said it had left.
 */
export function withSnapshot(
  s: InboxState,
  snapshot: Approval[],
  now: number,
): { state: InboxState; arrived: Approval[] } {
  const pending = snapshot.filter((a) => a.status === 'pending');
  let gone = s.gone;
  for (const a of pending)
    if (gone.get(a.id)?.outcome === 'gone') {
      if (gone === s.gone) gone = new Map(gone);
      (gone as Map<string, Departure>).delete(a.id);
    }
  const known = new Set(s.items.map((i) => i.id));
  const fresh = pending.filter((a) => !gone.has(a.id));
  const inSnapshot = new Set(fresh.map((f) => f.id));
  const vanished = s.items.filter((i) => !gone.has(i.id) && !inSnapshot.has(i.id));
  if (vanished.length > 0) {
    if (gone === s.gone) gone = new Map(gone);
    for (const i of vanished)
      (gone as Map<string, Departure>).set(i.id, {
        id: i.id,
        title: titleOf(i),
        outcome: 'gone',
        note: note('gone', undefined, undefined, {}, ''),
        at: now,
      });
  }
  const lingering = s.items.filter((i) => gone.has(i.id) && !inSnapshot.has(i.id));
  return {
    state: { ...s, gone, items: [...fresh, ...lingering].sort(byAge) },
    arrived: fresh.filter((a) => !known.has(a.id)),
  };
}

/**
 * Marks a call as gone with its note; `listed` says whether it was in this person's list (worth announcing).
 * A call a snapshot saw leave without a reason (`gone`) takes the outcome its event names when that arrives.
 */
export function depart(s: InboxState, d: Departure): { state: InboxState; listed: boolean } {
  const before = s.gone.get(d.id);
  if (before && (before.outcome !== 'gone' || d.outcome === 'gone')) return { state: s, listed: false };
  const gone = new Map(s.gone);
  if (before) gone.delete(d.id); // re-inserted last: the newest departure is the last to be forgotten
  gone.set(d.id, d);
  if (gone.size > GONE_KEPT) gone.delete(gone.keys().next().value as string);
  const listed = s.items.some((i) => i.id === d.id && (!s.gone.has(i.id) || before !== undefined));
  const title = s.items.find((i) => i.id === d.id);
  const entry = title ? { ...d, title: titleOf(title) } : d;
  return { state: { ...s, gone, recent: listed ? [entry, ...s.recent].slice(0, RECENT) : s.recent }, listed };
}

/** Drops departed calls from the list once they have lingered. */
export function prune(s: InboxState, now: number): InboxState {
  const items = s.items.filter((i) => {
    const d = s.gone.get(i.id);
    return !d || now - d.at < LINGER_MS;
  });
  return items.length === s.items.length ? s : { ...s, items };
}

export const pendingItems = (s: InboxState): Approval[] => s.items.filter((i) => !s.gone.has(i.id));

function who(actor: { id: string; name?: string } | undefined, me: string): string {
  if (!actor) return 'someone';
  return actor.id === me ? 'you' : (actor.name ?? actor.id);
}

/** "approved by ann via Slack", "rejected by you via the web inbox: too broad", "expired after 5 min 00 s without a decision". */
export function note(
  outcome: Departure['outcome'],
  by: { id: string; name?: string } | undefined,
  via: string | undefined,
  extra: { reason?: string; waitedMs?: number; kind?: string; edited?: boolean; passkey?: boolean },
  me: string,
): string {
  switch (outcome) {
    case 'expired':
      return `expired${extra.waitedMs !== undefined ? ` after ${duration(extra.waitedMs)}` : ''} without a decision`;
    case 'cancelled':
      return `cancelled by ${who(by, me)}${extra.reason ? `: ${extra.reason}` : ''}`;
    case 'rejected':
      return `rejected by ${who(by, me)} via ${channelName(via)}${extra.reason ? `: ${extra.reason}` : ''}`;
    case 'approved': {
      const how =
        extra.kind === 'always_allow' ? 'always allowed' : extra.edited ? 'approved with edited arguments' : 'approved';
      return `${how} by ${who(by, me)} via ${channelName(via)}${extra.passkey ? ' with a passkey' : ''}`;
    }
    default:
      return 'no longer waiting for you';
  }
}

const LEAVING = ['ToolCallApproved', 'ToolCallRejected', 'ToolCallExpired', 'ToolCallCancelled'];

/** The departure an event of the live stream announces, if it ends a pending call. */
export function departureFromEvent(e: AuditEvent, me: string, now: number): Departure | null {
  if (!LEAVING.includes(e.type) || !e.toolCallId) return null;
  const d = e.data as {
    outcome?: string;
    via?: string;
    reason?: string;
    waitedMs?: number;
    decision?: string;
    editedArguments?: unknown;
    previousStatus?: string;
    stepUp?: unknown;
  };
  if (e.type === 'ToolCallCancelled' && d.previousStatus && d.previousStatus !== 'pending') return null; // approved but unclaimed: it had left already
  const outcome = (d.outcome ?? e.type.replace('ToolCall', '').toLowerCase()) as Departure['outcome'];
  const by = e.actor.kind === 'system' && outcome === 'expired' ? undefined : { id: e.actor.id, name: e.actor.name };
  return {
    id: e.toolCallId,
    title: e.toolName ?? e.toolCallId,
    outcome,
    note: note(
      outcome,
      by,
      d.via ?? e.actor.via,
      {
        reason: d.reason,
        waitedMs: d.waitedMs,
        kind: d.decision,
        edited: d.editedArguments !== undefined,
        passkey: d.stepUp !== undefined,
      },
      me,
    ),
    at: now,
  };
}

/** The departure a call's own record shows (after deciding it here, or from a 409's standing decision). */
export function departureFromDecision(
  call: Pick<ToolCall, 'id' | 'toolName' | 'display' | 'createdAt'>,
  decision: Decision,
  me: string,
  now: number,
  kind?: string,
): Departure {
  const waitedMs = Date.parse(decision.at) - Date.parse(call.createdAt);
  return {
    id: call.id,
    title: titleOf(call),
    outcome: decision.outcome,
    note: note(
      decision.outcome,
      decision.by,
      decision.by.via,
      {
        reason: decision.reason,
        waitedMs,
        kind,
        edited: decision.editedArguments !== undefined,
        passkey: stepUpOf(decision) !== undefined,
      },
      me,
    ),
    at: now,
  };
}

/** Who the signed-in person is, as a call's approvers may name them. */
export interface Me {
  sub: string;
  email?: string;
  roles: readonly string[];
}

const PERSON = 'person:';

/**
 * Whether an entry of a call's approvers names this person: `person:<id or email>` (the policy keeps it
 * lowercased), as the server matches it. A role spelt that way is not the person.
 */
export function namesMe(approver: string, me: Pick<Me, 'sub' | 'email'>): boolean {
  if (!approver.startsWith(PERSON)) return false;
  const named = approver.slice(PERSON.length).toLowerCase();
  return named === me.sub.toLowerCase() || (me.email !== undefined && named === me.email.toLowerCase());
}

/** An approver as a person reads it: `person:ann@example.com` is ann@example.com, `requester` the end user. */
export function approverName(approver: string): string {
  if (approver === 'requester') return 'the end user';
  return approver.startsWith(PERSON) ? approver.slice(PERSON.length) : approver;
}

/**
 * Whether this person may read the call's whole conversation (and so decide its step at once), as the server
 * answers it: approvers, admins and auditors, and the conversation's user. A person named on the call alone
 * reads that call only.
 */
export function readsConversation(me: Pick<Me, 'sub' | 'roles'>, call: Pick<Approval, 'conversation'>): boolean {
  return ['approver', 'admin', 'auditor'].some((r) => me.roles.includes(r)) || call.conversation.user?.id === me.sub;
}

/**
 * The FYI a `ToolCallNotified` event of the live stream brings, when it names this person: one of their roles
 * among its approvers, the person themselves (`person:<id or email>`), or `requester` when they are the
 * conversation's user. Null otherwise.
 */
export function notifiedFromEvent(e: AuditEvent, me: Me, now: number): Departure | null {
  if (e.type !== 'ToolCallNotified' || !e.toolCallId) return null;
  const d = e.data as { approvers?: unknown; requester?: unknown; rule?: unknown };
  const approvers = Array.isArray(d.approvers) ? d.approvers.filter((a): a is string => typeof a === 'string') : [];
  const told = approvers.some((a) =>
    a === 'requester' ? d.requester === me.sub : namesMe(a, me) || (!a.startsWith(PERSON) && me.roles.includes(a)),
  );
  if (!told) return null;
  const rule = typeof d.rule === 'number' ? ` (policy rule ${d.rule})` : '';
  return {
    id: e.toolCallId,
    title: e.toolName ?? e.toolCallId,
    outcome: 'notified',
    note: `ran at once, you are told${rule}`,
    at: now,
  };
}

/** Adds an FYI to the recent feed, once per call (the stream may deliver an event again after a reconnect). */
export function told(s: InboxState, d: Departure): { state: InboxState; added: boolean } {
  if (s.recent.some((r) => r.id === d.id && r.outcome === 'notified')) return { state: s, added: false };
  return { state: { ...s, recent: [d, ...s.recent].slice(0, RECENT) }, added: true };
}
