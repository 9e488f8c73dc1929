import { DomainError, ValidationError } from '../shared/domain-error';
import {
  DelegateFacts,
  Delegation,
  delegatedAuthorities,
  delegationPeriod,
  endDelegation,
  holdsAt,
  MAX_DELEGATORS,
  setDelegation,
} from './delegation';
import type { Person } from './person';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const secs = (s: number) => new Date(NOW.getTime() + s * 1000);
const DAY = 86_400;
const WEEK = 7 * DAY;

const record = (id: string, roles: string[], extra: Partial<Person> = {}): Person => ({
  tenantId: 't1',
  id,
  roles,
  firstSeenAt: secs(-30 * DAY),
  lastSeenAt: secs(-60),
  ...extra,
});
const ann = { id: 'ann', tenant: 't1', roles: ['admin'], name: 'Ann', via: 'api' as const };
const bobFacts: DelegateFacts = { person: record('bob', ['viewer'], { name: 'Bob' }), isAgent: false, delegators: 0 };

function faults(f: () => unknown) {
  try {
    f();
  } catch (e) {
    if (e instanceof ValidationError) return e.faults;
    throw e;
  }
  return [];
}
function code(f: () => unknown) {
  try {
    f();
  } catch (e) {
    if (e instanceof DomainError) return e.code;
    throw e;
  }
  return undefined;
}

describe('the period of a delegation', () => {
  it('starts now without `from`, and at `from` when it is ahead', () => {
    expect(delegationPeriod({ until: secs(DAY) }, NOW)).toEqual({ startsAt: NOW, endsAt: secs(DAY) });
    expect(delegationPeriod({ from: secs(DAY), until: secs(2 * DAY) }, NOW)).toEqual({
      startsAt: secs(DAY),
      endsAt: secs(2 * DAY),
    });
  });

  it('is never backdated: a start a clock’s difference back starts now, further back is refused', () => {
    expect(delegationPeriod({ from: secs(-60), until: secs(DAY) }, NOW).startsAt).toEqual(NOW);
    expect(faults(() => delegationPeriod({ from: secs(-3600), until: secs(DAY) }, NOW))).toEqual([
      { path: 'from', message: expect.stringContaining('past') },
    ]);
  });

  it('starts at most 366 days ahead and lasts at most 90 days', () => {
    expect(faults(() => delegationPeriod({ from: secs(367 * DAY), until: secs(368 * DAY) }, NOW))).toEqual([
      { path: 'from', message: 'must be at most 366 days ahead' },
    ]);
    expect(delegationPeriod({ from: secs(DAY), until: secs(91 * DAY) }, NOW).endsAt).toEqual(secs(91 * DAY));
    expect(faults(() => delegationPeriod({ from: secs(DAY), until: secs(91 * DAY + 1) }, NOW))).toEqual([
      { path: 'until', message: 'must be at most 90 days after from' },
    ]);
    expect(faults(() => delegationPeriod({ until: secs(90 * DAY + 1) }, NOW))).toEqual([
      { path: 'until', message: 'must be at most 90 days after now' },
    ]);
  });

  it('ends after it starts', () => {
    expect(faults(() => delegationPeriod({ from: secs(DAY), until: secs(DAY) }, NOW))).toEqual([
      { path: 'until', message: 'must be after from' },
    ]);
    expect(faults(() => delegationPeriod({ until: secs(-1) }, NOW))).toEqual([
      { path: 'until', message: 'must be in the future' },
    ]);
  });

  it('holds from its start up to, not including, its end', () => {
    const d = { startsAt: secs(10), endsAt: secs(20) };
    expect([9, 10, 19, 20].map((s) => holdsAt(d, secs(s)))).toEqual([false, true, true, false]);
  });
});

describe('setting a delegation', () => {
  it('records who delegates to whom, from when until when and why', () => {
    const { delegation, event } = setDelegation(ann, bobFacts, { until: secs(WEEK), reason: 'holiday' }, null, NOW);
    expect(delegation).toEqual({
      tenantId: 't1',
      personId: 'ann',
      toPersonId: 'bob',
      startsAt: NOW,
      endsAt: secs(WEEK),
      reason: 'holiday',
      createdAt: NOW,
    });
    expect(event?.type).toBe('DelegationSet');
    expect(event?.actor).toMatchObject({ id: 'ann', kind: 'person', via: 'api' });
    expect(event?.data).toEqual({
      personId: 'ann',
      to: { id: 'bob', name: 'Bob' },
      from: NOW.toISOString(),
      until: secs(WEEK).toISOString(),
      reason: 'holiday',
    });
  });

  it('refuses an agent token, the person themself, an agent, and someone who already acts for too many', () => {
    const agentToken = { ...ann, roles: ['agent', 'admin'] };
    expect(code(() => setDelegation(agentToken, bobFacts, { until: secs(DAY) }, null, NOW))).toBe('forbidden');
    const self = { ...bobFacts, person: record('ann', ['admin']) };
    expect(code(() => setDelegation(ann, self, { until: secs(DAY) }, null, NOW))).toBe('delegation_to_self');
    expect(code(() => setDelegation(ann, { ...bobFacts, isAgent: true }, { until: secs(DAY) }, null, NOW))).toBe(
      'delegate_is_agent',
    );
    const busy = { ...bobFacts, delegators: MAX_DELEGATORS };
    expect(code(() => setDelegation(ann, busy, { until: secs(DAY) }, null, NOW))).toBe('too_many_delegations');
    expect(
      setDelegation(ann, { ...bobFacts, delegators: MAX_DELEGATORS - 1 }, { until: secs(DAY) }, null, NOW).event,
    ).toBeDefined();
  });

  it('replaces the delegation that stands, naming it; the same request again changes nothing', () => {
    const first = setDelegation(ann, bobFacts, { until: secs(WEEK) }, null, NOW).delegation;
    const carol: DelegateFacts = { person: record('carol', []), isAgent: false, delegators: 0 };
    const replaced = setDelegation(ann, carol, { until: secs(WEEK) }, first, secs(60));
    expect(replaced.event?.data).toMatchObject({
      to: { id: 'carol' },
      replaces: { to: { id: 'bob' }, from: NOW.toISOString(), until: secs(WEEK).toISOString() },
    });
    // A retry of the request that made it (no `from`: from now, which a started delegation satisfies).
    const again = setDelegation(ann, bobFacts, { until: secs(WEEK) }, first, secs(60));
    expect(again).toEqual({ delegation: first });
    // Another end, or a reason, is a new delegation.
    expect(setDelegation(ann, bobFacts, { until: secs(2 * WEEK) }, first, secs(60)).event).toBeDefined();
    expect(setDelegation(ann, bobFacts, { until: secs(WEEK), reason: 'ill' }, first, secs(60)).event).toBeDefined();
  });

  it('does not name a delegation already over as replaced', () => {
    const old = setDelegation(ann, bobFacts, { until: secs(60) }, null, NOW).delegation;
    const next = setDelegation(ann, bobFacts, { until: secs(WEEK) }, old, secs(120));
    expect(next.event?.data).not.toHaveProperty('replaces');
  });
});

describe('ending a delegation', () => {
  const d: Delegation = {
    tenantId: 't1',
    personId: 'ann',
    toPersonId: 'bob',
    startsAt: secs(DAY),
    endsAt: secs(WEEK),
    createdAt: NOW,
  };

  it('records the end of one that holds or is to come', () => {
    const ended = endDelegation(ann, d, { id: 'bob', name: 'Bob' }, NOW);
    expect(ended?.type).toBe('DelegationEnded');
    expect(ended?.data).toEqual({
      personId: 'ann',
      to: { id: 'bob', name: 'Bob' },
      from: secs(DAY).toISOString(),
      until: secs(WEEK).toISOString(),
      endedAt: NOW.toISOString(),
    });
  });

  it('records nothing when there is none, or it is over (it stopped applying by itself)', () => {
    expect(endDelegation(ann, null, null, NOW)).toBeUndefined();
    expect(endDelegation(ann, d, null, secs(WEEK))).toBeUndefined();
  });
});

describe('the authorities a delegate decides with', () => {
  const MAX_AGE = WEEK;
  const delegation = (personId: string, toPersonId: string, over: Partial<Delegation> = {}): Delegation => ({
    tenantId: 't1',
    personId,
    toPersonId,
    startsAt: secs(-60),
    endsAt: secs(DAY),
    createdAt: secs(-60),
    ...over,
  });

  it("are the delegators' records whose delegation holds now: id, name, email and roles, by id", () => {
    const rows = [
      { delegation: delegation('zoe', 'bob'), delegator: record('zoe', ['approver']) },
      { delegation: delegation('ann', 'bob'), delegator: record('ann', ['admin'], { name: 'Ann', email: 'a@x.io' }) },
    ];
    expect(delegatedAuthorities(rows, 'bob', NOW, MAX_AGE)).toEqual([
      { id: 'ann', tenant: 't1', roles: ['admin'], name: 'Ann', email: 'a@x.io' },
      { id: 'zoe', tenant: 't1', roles: ['approver'] },
    ]);
  });

  it('leave out a delegation not yet started or over, to someone else, and any chain through it', () => {
    const rows = [
      { delegation: delegation('ann', 'bob', { startsAt: secs(60) }), delegator: record('ann', ['admin']) },
      { delegation: delegation('cid', 'bob', { endsAt: NOW }), delegator: record('cid', ['admin']) },
      // ann → bob does not make bob's delegate carl act for ann: only rows to the delegate themself count.
      { delegation: delegation('ann', 'carl'), delegator: record('ann', ['admin']) },
    ];
    expect(delegatedAuthorities(rows, 'bob', NOW, MAX_AGE)).toEqual([]);
  });

  it("trust no delegator whose last sign-in is older than the person max age, nor an agent's record", () => {
    const stale = record('ann', ['admin'], { lastSeenAt: secs(-WEEK - 1) });
    const agent = record('bot', ['agent', 'admin']);
    const rows = [
      { delegation: delegation('ann', 'bob'), delegator: stale },
      { delegation: delegation('bot', 'bob'), delegator: agent },
      { delegation: delegation('bob', 'bob'), delegator: record('bob', ['admin']) },
    ];
    expect(delegatedAuthorities(rows, 'bob', NOW, MAX_AGE)).toEqual([]);
    const fresh = record('ann', ['admin'], { lastSeenAt: secs(-WEEK) });
    expect(
      delegatedAuthorities([{ delegation: delegation('ann', 'bob'), delegator: fresh }], 'bob', NOW, MAX_AGE),
    ).toHaveLength(1);
  });
});
