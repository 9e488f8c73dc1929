import { namesPerson, rolesAmong } from '../../policy/assignee';
import { hasAnyRole, Principal } from '../../shared/actor';
import { DomainError } from '../../shared/domain-error';
import { jsonEqual } from '../../shared/json';
import {
  AlreadyDecidedError,
  AuthorityCountedError,
  NotAllowedToDecideError,
  QuorumArgumentsMismatchError,
} from '../conversation.errors';
import type { ApprovalRecord, DecisionInput, ToolCall } from '../tool-call.entity';
import { sameApproval } from './first-decision-wins';

/** Where one approval leaves a call that needs a quorum. */
export type QuorumStep =
  | { kind: 'unchanged' }
  | { kind: 'refused'; error: DomainError }
  /** Counted; the call stays pending. `count` approvals so far (this one included) of `needed`. */
  | { kind: 'counted'; count: number; needed: number; editedArguments?: Record<string, unknown> }
  /** This approval completes the quorum: the call is approved. */
  | { kind: 'complete' };

/**
 * An approval of a call whose rule asks for a quorum (`policy.quorum`): it counts only from the quorum's
 * roles and the people it names (others may still reject: thrown, nothing to record) and once a person; it must approve the same
 * arguments as the first approval did. The call is approved when the quorum's count is reached.
 * `onBehalfOf`: the delegator a delegate approves for; then the delegator's roles and name are what count, and
 * one human is one authority: an approval by ann, or by anyone on ann's behalf, counts once between them.
 */
export function quorumStep(call: ToolCall, input: DecisionInput, by: Principal, onBehalfOf?: Principal): QuorumStep {
  const quorum = call.policy.quorum!;
  if (quorum.of && !countsTowards(quorum.of, onBehalfOf ?? by)) {
    throw new NotAllowedToDecideError(
      `Approvals of this call count only from: ${quorum.of.join(', ')} (a quorum of ${quorum.count}); you may reject it`,
    );
  }
  const earlier = call.approvals;
  const mine = earlier.find((a) => a.by.id === by.id);
  if (mine) {
    if (sameApproval(mine, input)) return { kind: 'unchanged' };
    const recorded = { outcome: 'approval_recorded', by: mine.by, at: mine.at };
    return { kind: 'refused', error: new AlreadyDecidedError(call.id, recorded, call.status) };
  }
  const counted = countedFor(call, [by.id, ...(onBehalfOf ? [onBehalfOf.id] : [])]);
  if (counted) return { kind: 'refused', error: new AuthorityCountedError(call.id, counted, call.status) };
  const fixed = earlier[0];
  if (fixed && input.arguments !== undefined && !jsonEqual(input.arguments, fixed.editedArguments ?? call.arguments)) {
    return { kind: 'refused', error: new QuorumArgumentsMismatchError(call.id) };
  }
  const count = earlier.length + 1;
  if (count >= quorum.count) return { kind: 'complete' };
  // Kept with this approval: the first approval's edit (none: the call's own arguments), else this one's.
  return {
    kind: 'counted',
    count,
    needed: quorum.count,
    editedArguments: fixed ? fixed.editedArguments : input.arguments,
  };
}

/**
 * The earlier approval that already stands for one of these people: given by them, or on their behalf by a
 * delegate. One human, one authority: ann's approval and bob's on ann's behalf are one voice, not two.
 */
export function countedFor(call: ToolCall, people: readonly string[]): ApprovalRecord | undefined {
  return call.approvals.find(
    (a) => people.includes(a.by.id) || (a.by.onBehalfOf !== undefined && people.includes(a.by.onBehalfOf.id)),
  );
}

/** Whether `of` lets this person's approval count: one of its roles, or named there (`person:<id or email>`). */
export function countsTowards(of: readonly string[], by: Principal): boolean {
  return hasAnyRole(by, rolesAmong(of)) || namesPerson(of, by);
}

/** The arguments the approval that completes a quorum approves: the first approval's edit, else this one's. */
export function quorumArguments(call: ToolCall, input: DecisionInput): Record<string, unknown> | undefined {
  return call.approvals[0]?.editedArguments ?? input.arguments;
}
