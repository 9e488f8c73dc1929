import { Channel, isAgent, onBehalfOfRef, personActor, Principal } from '../shared/actor';
import { ValidationError, ValidationFault } from '../shared/domain-error';
import {
  DelegateIsAgentError,
  DelegationByAgentError,
  DelegationToSelfError,
  TooManyDelegationsError,
} from './delegation.errors';
import { DelegationEnded, DelegationSet } from './person.events';
import type { Person } from './person';
import { staleSignIn } from './rules/channel-link';

/*
 * Delegation (out of office): a person hands their decisions to another person for a period. While it holds,
 * the delegate decides what the delegator may decide, on the delegator's behalf, with the delegator's rights as
 * their record last showed them: never more, never passed on (not transitive), and only while the delegator's
 * last sign-in is recent enough for those rights to be trusted. It ends by itself at `until`.
 */

/** The longest a delegation may last: a quarter, so no one's rights sit with someone else indefinitely. */
export const MAX_DELEGATION_SECONDS = 90 * 86_400;
/** How far ahead a delegation may be set up: a year's leave planned ahead, no further. */
export const MAX_DELEGATION_LEAD_SECONDS = 366 * 86_400;
export const MAX_DELEGATION_REASON = 500;
/** A `from` this little in the past is a clock's difference and starts now; further back it is refused. */
export const FROM_SKEW_SECONDS = 300;
/** The most people one person may act for at once: what they decide stays readable, and cheap to work out. */
export const MAX_DELEGATORS = 20;

/** One person's delegation (one at a time: a new one replaces it). */
export interface Delegation {
  tenantId: string;
  /** The delegator. */
  personId: string;
  /** The delegate. */
  toPersonId: string;
  startsAt: Date;
  endsAt: Date;
  reason?: string;
  createdAt: Date;
}

/** What a person asks for: whom, from when (default now) until when, and why. */
export interface DelegationRequest {
  from?: Date;
  until: Date;
  reason?: string;
}

/** Whether the delegation holds at `at`: from its start, up to (not including) its end. */
export function holdsAt(d: Pick<Delegation, 'startsAt' | 'endsAt'>, at: Date): boolean {
  return d.startsAt.getTime() <= at.getTime() && at.getTime() < d.endsAt.getTime();
}

/** Over at `at`: it no longer applies, whatever its row says. */
export function isOver(d: Pick<Delegation, 'endsAt'>, at: Date): boolean {
  return d.endsAt.getTime() <= at.getTime();
}

/**
 * The period a request asks for, or a ValidationError naming `from` or `until`: it starts no earlier than now
 * (a start a few minutes back, a clock's difference, starts now: a delegation is never backdated), at most 366
 * days ahead, and lasts at most 90 days; `until` is after its start.
 */
export function delegationPeriod(r: DelegationRequest, now: Date): { startsAt: Date; endsAt: Date } {
  const faults: ValidationFault[] = [];
  const t = now.getTime();
  if (r.from && r.from.getTime() < t - FROM_SKEW_SECONDS * 1000)
    faults.push({ path: 'from', message: 'must not be in the past (leave it out to start now)' });
  const startsAt = new Date(Math.max(r.from?.getTime() ?? t, t));
  if (startsAt.getTime() > t + MAX_DELEGATION_LEAD_SECONDS * 1000)
    faults.push({ path: 'from', message: 'must be at most 366 days ahead' });
  if (r.until.getTime() <= startsAt.getTime())
    faults.push({ path: 'until', message: r.from ? 'must be after from' : 'must be in the future' });
  else if (r.until.getTime() - startsAt.getTime() > MAX_DELEGATION_SECONDS * 1000)
    faults.push({ path: 'until', message: `must be at most 90 days after ${r.from ? 'from' : 'now'}` });
  if (faults.length > 0) throw new ValidationError(faults);
  return { startsAt, endsAt: r.until };
}

/** What is known of the delegate a request names, as the store found them. */
export interface DelegateFacts {
  /** Their person record. */
  person: Person;
  /** The id runs conversations in this tenant as an agent. */
  isAgent: boolean;
  /** How many others' delegations to them are not over (this delegator's own left out). */
  delegators: number;
}

/** What setting a delegation records, or nothing when it asks for what holds already (a retried request). */
export interface DelegationChange {
  delegation: Delegation;
  event?: DelegationSet;
}

/**
 * A person delegates to another, replacing their delegation if they had one. Refused: an agent token (only
 * people delegate), themselves, an agent, someone who already acts for MAX_DELEGATORS people; the delegate's
 * existence is the caller's to establish (UnknownPersonError). The same request again, for the delegation that
 * stands, changes nothing.
 */
export function setDelegation(
  by: Principal & { via: Channel },
  to: DelegateFacts,
  request: DelegationRequest,
  previous: Delegation | null,
  at: Date,
): DelegationChange {
  if (isAgent(by)) throw new DelegationByAgentError();
  if (to.person.id === by.id) throw new DelegationToSelfError();
  if (to.isAgent || to.person.roles.includes('agent')) throw new DelegateIsAgentError(to.person.id);
  if (to.delegators >= MAX_DELEGATORS) throw new TooManyDelegationsError(to.person.id, MAX_DELEGATORS);
  const period = delegationPeriod(request, at);
  const standing = previous && !isOver(previous, at) ? previous : null;
  if (
    standing &&
    standing.toPersonId === to.person.id &&
    standing.endsAt.getTime() === period.endsAt.getTime() &&
    (standing.reason ?? '') === (request.reason ?? '') &&
    // No `from`: "from now", which a delegation that has started already satisfies.
    (request.from ? standing.startsAt.getTime() === period.startsAt.getTime() : holdsAt(standing, at))
  )
    return { delegation: standing };
  const delegation: Delegation = {
    tenantId: by.tenant,
    personId: by.id,
    toPersonId: to.person.id,
    ...period,
    ...(request.reason ? { reason: request.reason } : {}),
    createdAt: at,
  };
  const event = new DelegationSet(
    { tenantId: by.tenant, at, actor: personActor(by, by.via) },
    {
      ...record(delegation, to.person),
      ...(standing ? { replaces: withoutPerson(record(standing, { id: standing.toPersonId })) } : {}),
    },
  );
  return { delegation, event };
}

/**
 * A person ends their delegation now (or withdraws one yet to start). Nothing to end, or one already over:
 * no event (a delegation that reached its `until` stopped applying by itself).
 */
export function endDelegation(
  by: Principal & { via: Channel },
  current: Delegation | null,
  delegate: Pick<Person, 'id' | 'name'> | null,
  at: Date,
): DelegationEnded | undefined {
  if (isAgent(by)) throw new DelegationByAgentError();
  if (!current || isOver(current, at)) return undefined;
  return new DelegationEnded(
    { tenantId: by.tenant, at, actor: personActor(by, by.via) },
    { ...record(current, delegate ?? { id: current.toPersonId }), endedAt: at.toISOString() },
  );
}

/** A delegation as its events record it. */
function record(d: Delegation, to: Pick<Person, 'id' | 'name'>) {
  return {
    personId: d.personId,
    to: onBehalfOfRef(to),
    from: d.startsAt.toISOString(),
    until: d.endsAt.toISOString(),
    ...(d.reason ? { reason: d.reason } : {}),
  };
}

function withoutPerson<T extends { personId: string }>(r: T): Omit<T, 'personId'> {
  const { personId: _personId, ...rest } = r;
  return rest;
}

/**
 * The authorities a delegate may decide with at `at`: each delegator whose delegation to them holds, as their
 * person record last showed them (id, name, email, roles), but only while that record's sign-in is younger than
 * `maxAgeSeconds`: roles no one has confirmed since are not trusted, here as in a channel. Never an agent, never
 * the delegate themself. By id, so the choice among several is the same everywhere.
 */
export function delegatedAuthorities(
  rows: ReadonlyArray<{ delegation: Delegation; delegator: Person }>,
  delegateId: string,
  at: Date,
  maxAgeSeconds: number,
): Principal[] {
  return rows
    .filter(
      ({ delegation: d, delegator: p }) =>
        d.toPersonId === delegateId &&
        d.personId === p.id &&
        p.id !== delegateId &&
        holdsAt(d, at) &&
        !p.roles.includes('agent') &&
        staleSignIn(p, at, maxAgeSeconds) === null,
    )
    .map(({ delegator: p }) => ({
      id: p.id,
      tenant: p.tenantId,
      roles: [...p.roles],
      ...(p.name ? { name: p.name } : {}),
      ...(p.email ? { email: p.email } : {}),
    }))
    .sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
}
