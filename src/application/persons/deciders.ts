import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { holdsAt } from '../../domain/person/delegation';
import { staleSignIn } from '../../domain/person/rules/channel-link';
import type { Person } from '../../domain/person/person';
import { isPersonAssignee, namesPerson, personAssignee } from '../../domain/policy/assignee';
import { CLOCK, Clock } from '../ports';
import type { ApprovalRequest } from '../ports/approval-callback.port';
import { DELEGATIONS, DelegationRepository } from '../ports/delegation.port';
import { PERSONS, PersonRepository } from '../ports/person.port';

/** Listed in approvers, these never decide (who-may-decide.ts): nobody is reached for them. */
const NEVER_DECIDE = new Set(['requester', 'auditor', 'agent']);
/** A request reaching more people than this is a broadcast, not an assignment: the rest are left out and logged. */
export const MAX_REACHED = 200;
/** People a request names, at most: a policy names a handful (a person's ids and emails both count). */
const MAX_NAMED = 100;

/**
 * The persons an approval request reaches on channels that go to people (push, email): those holding one of its
 * approver roles, those it names (`person:<id or email>`), and the conversation's user where `requester` is listed —
 * only while their last sign-in is younger than `maxAgeSeconds` (their recorded roles are trusted no longer), and
 * never the conversation's user when the call refuses self-approval. Deciding is checked again when they act.
 *
 * Out of office: what reaches a person whose delegation holds now reaches their delegate too, who may decide it on
 * their behalf. The delegator is still reached: a delegation lends their rights, it does not take them away, and
 * someone only partly away (a day of meetings) may still answer; turning their own messages off is their
 * notification settings' business. A delegate is reached under the same conditions as anyone (a recent sign-in,
 * not the conversation's user where self-approval is refused), once however many delegators they stand in for,
 * and within MAX_REACHED.
 */
@Injectable()
export class Deciders {
  private readonly log = new Logger('Deciders');

  constructor(
    @Inject(PERSONS) private readonly persons: PersonRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    // Without it no delegate is reached (as none may decide).
    @Optional() @Inject(DELEGATIONS) private readonly delegations?: DelegationRepository,
  ) {}

  async of(r: ApprovalRequest, maxAgeSeconds: number, approvers = r.approval?.approvers ?? []): Promise<Person[]> {
    const user = r.conversation.user;
    const roles = approvers.filter((a) => !NEVER_DECIDE.has(a) && personAssignee(a) === undefined);
    const named = approvers.map(personAssignee).filter((n): n is string => n !== undefined);
    if (approvers.includes('requester') && user) named.push(user.id.toLowerCase());
    // The people a call names are few (the policy lists them) and come first: a tenant's many role holders, stale
    // ones included, must not push them out of the bound.
    const [byName, byRoles] = await Promise.all([
      named.length ? this.persons.reachable(r.tenantId, { roles: [], named }, MAX_NAMED) : Promise.resolve([]),
      roles.length ? this.persons.reachable(r.tenantId, { roles, named: [] }, MAX_REACHED + 1) : Promise.resolve([]),
    ]);
    const found = [...byName, ...byRoles.filter((p) => !byName.some((n) => n.id === p.id))];
    if (byRoles.length > MAX_REACHED)
      this.log.warn(
        `${r.id} may be decided by more than ${MAX_REACHED} people: only the first ${MAX_REACHED} by id are reached`,
      );
    const now = this.clock.now();
    const mayBeReached = (p: Person) =>
      !staleSignIn(p, now, maxAgeSeconds) &&
      !(r.approval?.selfApproval === false && user && p.id === user.id) &&
      !p.roles.includes('agent');
    const reached = found.slice(0, MAX_REACHED).filter((p) => {
      const byRole = p.roles.some((role) => roles.includes(role));
      const byName = namesPerson(approvers, p) || (approvers.includes('requester') && user?.id === p.id);
      return (byRole || byName) && mayBeReached(p);
    });
    return [...reached, ...(await this.delegates(r, reached, now, mayBeReached))];
  }

  /**
   * The persons a request names (`person:<id or email>`), and the delegates of those whose delegation holds now:
   * whom a channel that singles people out (a Slack mention) addresses.
   */
  named(r: ApprovalRequest, maxAgeSeconds: number): Promise<Person[]> {
    return this.of(r, maxAgeSeconds, (r.approval?.approvers ?? []).filter(isPersonAssignee));
  }

  /** The delegates of the reached people whose delegation holds now, not reached already, by id, within the bound. */
  private async delegates(
    r: ApprovalRequest,
    reached: Person[],
    now: Date,
    mayBeReached: (p: Person) => boolean,
  ): Promise<Person[]> {
    const room = MAX_REACHED - reached.length;
    if (!this.delegations || reached.length === 0 || room <= 0) return [];
    const ids = new Set(reached.map((p) => p.id));
    const rows = await this.delegations.fromPersons(
      r.tenantId,
      reached.map((p) => p.id),
      now,
      MAX_REACHED,
    );
    const added = new Map<string, Person>();
    for (const { delegation, delegate } of rows) {
      if (!holdsAt(delegation, now) || !ids.has(delegation.personId)) continue;
      if (ids.has(delegate.id) || added.has(delegate.id) || !mayBeReached(delegate)) continue;
      added.set(delegate.id, delegate);
    }
    const out = [...added.values()].sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
    if (out.length > room) this.log.warn(`${r.id}: only ${room} of ${out.length} delegates are reached`);
    return out.slice(0, room);
  }
}
