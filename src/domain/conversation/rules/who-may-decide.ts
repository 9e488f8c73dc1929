import { namesPerson, rolesAmong } from '../../policy/assignee';
import { hasAnyRole, isAgent, Principal } from '../../shared/actor';
import { NotAllowedToDecideError } from '../conversation.errors';
import type { ToolCall } from '../tool-call.entity';

/** Listed in a stored policy's approvers, these still never decide (new policies cannot list them). */
const NEVER_DECIDE: readonly string[] = ['requester', 'auditor', 'agent'];

/**
 * Roles meet the call's approvers, the approvers name the person (`person:<id or email>`), or the caller is the
 * requester and `requester` is listed. Never an agent. A call the policy settled at once has no approvers: any
 * person may try, and learns it is already decided. Separation of duties is checked after this, for all alike.
 */
export function mayDecide(p: Principal, call: ToolCall, requesterId: string | undefined): boolean {
  if (isAgent(p)) return false;
  if (!call.approval) return true;
  return mayDecideAmong(p, call.approval.approvers, requesterId);
}

/**
 * Whether a held call's `approvers` let this person decide it: what mayDecide asks of a call, for readers that
 * know only the list (the event stream, reading a call a delegator may decide).
 */
export function mayDecideAmong(p: Principal, approvers: readonly string[], requesterId: string | null | undefined) {
  if (isAgent(p)) return false;
  // `requester` names the conversation's user, never a role a token could claim; nor does `person:x` name a role
  // (a provider's group of that name is not the person). Auditors change nothing, even where a policy stored
  // before that was checked lists them.
  if (
    hasAnyRole(
      p,
      rolesAmong(approvers).filter((a) => !NEVER_DECIDE.includes(a)),
    )
  )
    return true;
  if (namesPerson(approvers, p)) return true;
  return approvers.includes('requester') && requesterId != null && requesterId === p.id;
}

/** Throws when `by` may not decide the call at all: a broken precondition, nothing to record. */
export function checkMayDecide(by: Principal, call: ToolCall, requesterId: string | undefined): void {
  if (isAgent(by))
    throw new NotAllowedToDecideError('Agent tokens cannot decide tool calls: approval comes from people');
  if (!mayDecide(by, call, requesterId)) {
    throw new NotAllowedToDecideError(
      `Deciding this call needs one of: ${(call.approval?.approvers ?? []).join(', ')}`,
    );
  }
}
