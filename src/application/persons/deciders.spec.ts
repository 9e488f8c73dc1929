import type { Delegation } from '../../domain/person/delegation';
import type { Person } from '../../domain/person/person';
import type { ApprovalRequest } from '../ports/approval-callback.port';
import type { DelegationRepository } from '../ports/delegation.port';
import type { PersonRepository } from '../ports/person.port';
import { Deciders, MAX_REACHED } from './deciders';

// Who an approval request reaches when people are out of office: the delegator, and their delegate with them.

const NOW = new Date('2026-03-02T10:00:00.000Z');
const HOUR = 3600_000;
const WEEK_S = 7 * 86_400;

const person = (id: string, roles: string[], over: Partial<Person> = {}): Person => ({
  tenantId: 'acme',
  id,
  roles,
  firstSeenAt: new Date(NOW.getTime() - 30 * 86_400_000),
  lastSeenAt: new Date(NOW.getTime() - HOUR),
  ...over,
});

/** The persons of a tenant, as PersonRepository.reachable finds them (the SQL's rule, in memory). */
class People implements Pick<PersonRepository, 'reachable'> {
  constructor(readonly all: Person[]) {}
  async reachable(_t: string, who: { roles: string[]; named: string[] }): Promise<Person[]> {
    return this.all
      .filter((p) => p.roles.some((r) => who.roles.includes(r)) || who.named.includes(p.id))
      .sort((x, y) => (x.id < y.id ? -1 : 1));
  }
}

/** Delegations and the records of their delegates, as fromPersons finds them (holding at `at`). */
class Delegations implements Pick<DelegationRepository, 'fromPersons'> {
  constructor(
    readonly rows: Delegation[],
    readonly people: Person[],
  ) {}
  async fromPersons(_t: string, ids: readonly string[], at: Date) {
    return this.rows
      .filter((d) => ids.includes(d.personId) && d.startsAt <= at && at < d.endsAt)
      .map((d) => ({ delegation: d, delegate: this.people.find((p) => p.id === d.toPersonId)! }));
  }
}

const delegation = (from: string, to: string, over: Partial<Delegation> = {}): Delegation => ({
  tenantId: 'acme',
  personId: from,
  toPersonId: to,
  startsAt: new Date(NOW.getTime() - HOUR),
  endsAt: new Date(NOW.getTime() + HOUR),
  createdAt: new Date(NOW.getTime() - HOUR),
  ...over,
});

const request = (approvers: string[], over: Partial<NonNullable<ApprovalRequest['approval']>> = {}): ApprovalRequest =>
  ({
    tenantId: 'acme',
    id: 'tc_1',
    conversationId: 'conv-1',
    toolName: 'deploy',
    arguments: {},
    status: 'pending',
    policy: { level: 'confirm', rule: 0, policyVersion: 1, reason: 'rule 0' },
    approval: { approvers, expiresAt: '2026-03-02T11:00:00.000Z', ...over },
    createdAt: NOW.toISOString(),
    updatedAt: NOW.toISOString(),
    conversation: { id: 'conv-1', agentId: 'bot', user: { id: 'lee', roles: [] }, title: null },
  }) as ApprovalRequest;

const ann = person('ann', ['admin'], { email: 'ann@example.com' });
const bob = person('bob', ['viewer'], { email: 'bob@example.com' });
const carl = person('carl', []);

function deciders(people: Person[], rows: Delegation[]) {
  return new Deciders(
    new People(people) as unknown as PersonRepository,
    { now: () => NOW },
    new Delegations(rows, people) as unknown as DelegationRepository,
  );
}
const ids = (ps: Person[]) => ps.map((p) => p.id);

describe('who a request reaches, with delegations', () => {
  it('reaches the delegate of a person it reaches, and keeps the delegator (they may be only partly away)', async () => {
    const d = deciders([ann, bob], [delegation('ann', 'bob')]);
    expect(ids(await d.of(request(['admin']), WEEK_S))).toEqual(['ann', 'bob']);
  });

  it('reaches no delegate of someone it does not reach, nor through a delegation not holding now', async () => {
    const d = deciders(
      [ann, bob, carl, person('dee', ['approver'])],
      [
        delegation('carl', 'bob'),
        delegation('dee', 'carl', {
          startsAt: new Date(NOW.getTime() + HOUR),
          endsAt: new Date(NOW.getTime() + 2 * HOUR),
        }),
      ],
    );
    expect(ids(await d.of(request(['admin']), WEEK_S))).toEqual(['ann']);
    expect(ids(await d.of(request(['approver']), WEEK_S))).toEqual(['dee']);
  });

  it('is not transitive: the delegate of a delegate is not reached', async () => {
    const d = deciders([ann, bob, carl], [delegation('ann', 'bob'), delegation('bob', 'carl')]);
    expect(ids(await d.of(request(['admin']), WEEK_S))).toEqual(['ann', 'bob']);
  });

  it('reaches a delegate once, however many reached people they stand in for, and not again if reached already', async () => {
    const zoe = person('zoe', ['admin']);
    const d = deciders([ann, bob, zoe], [delegation('ann', 'bob'), delegation('zoe', 'bob'), delegation('bob', 'ann')]);
    expect(ids(await d.of(request(['admin']), WEEK_S))).toEqual(['ann', 'zoe', 'bob']);
  });

  it("reaches no delegate whose sign-in is stale, nor the conversation's user where self-approval is refused", async () => {
    const stale = person('bob', ['viewer'], { lastSeenAt: new Date(NOW.getTime() - WEEK_S * 1000 - 1) });
    expect(ids(await deciders([ann, stale], [delegation('ann', 'bob')]).of(request(['admin']), WEEK_S))).toEqual([
      'ann',
    ]);
    const lee = person('lee', []);
    const strict = request(['admin'], { selfApproval: false });
    expect(ids(await deciders([ann, lee], [delegation('ann', 'lee')]).of(strict, WEEK_S))).toEqual(['ann']);
    expect(ids(await deciders([ann, lee], [delegation('ann', 'lee')]).of(request(['admin']), WEEK_S))).toEqual([
      'ann',
      'lee',
    ]);
  });

  it('reaches no delegate of a delegator whose own sign-in is stale (their rights are not trusted)', async () => {
    const staleAnn = person('ann', ['admin'], { lastSeenAt: new Date(NOW.getTime() - WEEK_S * 1000 - 1) });
    expect(ids(await deciders([staleAnn, bob], [delegation('ann', 'bob')]).of(request(['admin']), WEEK_S))).toEqual([]);
  });

  it('stays within MAX_REACHED people, delegates included', async () => {
    const admins = Array.from({ length: MAX_REACHED }, (_, i) => person(`a${String(i).padStart(3, '0')}`, ['admin']));
    const d = deciders([...admins, bob], [delegation('a000', 'bob')]);
    const reached = await d.of(request(['admin']), WEEK_S);
    expect(reached).toHaveLength(MAX_REACHED);
    expect(ids(reached)).not.toContain('bob');
  });

  it('names, for a mention, the people a request names and the delegates of those away, not its role holders', async () => {
    const d = deciders([ann, bob, carl, person('dee', ['admin'])], [delegation('carl', 'bob')]);
    expect(ids(await d.named(request(['admin', 'person:carl']), WEEK_S))).toEqual(['carl', 'bob']);
    expect(ids(await d.named(request(['admin']), WEEK_S))).toEqual([]);
  });

  it('reaches no one more without the delegation store (fail closed)', async () => {
    const d = new Deciders(new People([ann, bob]) as unknown as PersonRepository, { now: () => NOW });
    expect(ids(await d.of(request(['admin']), WEEK_S))).toEqual(['ann']);
  });
});
