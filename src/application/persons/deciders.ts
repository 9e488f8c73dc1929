import { Inject, Injectable, Logger } from '@nestjs/common';
import { staleSignIn } from '../../domain/person/rules/channel-link';
import type { Person } from '../../domain/person/person';
import { namesPerson, personAssignee } from '../../domain/policy/assignee';
import { CLOCK, Clock } from '../ports';
import type { ApprovalRequest } from '../ports/approval-callback.port';
import { PERSONS, PersonRepository } from '../ports/person.port';

/** Listed in approvers, these never decide (who-may-decide.ts): nobody is reached for them. */
const NEVER_DECIDE = new Set(['requester', 'auditor', 'agent']);
/** A request reaching more people than this is a broadcast, not an assignment: the rest are left out and logged. */
export const MAX_REACHED = 200;

/**
 * The persons an approval request reaches on channels that go to people (push, email): those holding one of its
 * approver roles, those it names (`person:<id or email>`), and the conversation's user where `requester` is listed —
 * only while their last sign-in is younger than `maxAgeSeconds` (their recorded roles are trusted no longer), and
 * never the conversation's user when the call refuses self-approval. Deciding is checked again when they act.
 */
@Injectable()
export class Deciders {
  private readonly log = new Logger('Deciders');

  constructor(
    @Inject(PERSONS) private readonly persons: PersonRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async of(r: ApprovalRequest, maxAgeSeconds: number, approvers = r.approval?.approvers ?? []): Promise<Person[]> {
    const user = r.conversation.user;
    const roles = approvers.filter((a) => !NEVER_DECIDE.has(a) && personAssignee(a) === undefined);
    const named = approvers.map(personAssignee).filter((n): n is string => n !== undefined);
    if (approvers.includes('requester') && user) named.push(user.id.toLowerCase());
    const found = await this.persons.reachable(r.tenantId, { roles, named }, MAX_REACHED + 1);
    if (found.length > MAX_REACHED)
      this.log.warn(
        `${r.id} may be decided by more than ${MAX_REACHED} people: only the first ${MAX_REACHED} by id are reached`,
      );
    const now = this.clock.now();
    return found.slice(0, MAX_REACHED).filter((p) => {
      if (staleSignIn(p, now, maxAgeSeconds)) return false;
      if (r.approval?.selfApproval === false && user && p.id === user.id) return false;
      const byRole = p.roles.some((role) => roles.includes(role));
      const byName = namesPerson(approvers, p) || (approvers.includes('requester') && user?.id === p.id);
      return (byRole || byName) && !p.roles.includes('agent');
    });
  }
}
