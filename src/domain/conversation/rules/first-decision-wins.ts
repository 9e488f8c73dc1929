import { jsonEqual } from '../../shared/json';
import type { GrantScope } from '../../policy/grant-limit';
import { AlreadyDecidedError } from '../conversation.errors';
import type { ApprovalRecord, DecisionInput, DecisionRecord, ToolCall } from '../tool-call.entity';
import { isRejection } from './allowed-decisions';

/**
 * The first decision wins. On a call no longer pending, the same request again by the person who decided
 * (or by a quorum member whose approval counted) changes nothing: `unchanged`; anything else is refused
 * with the standing decision.
 */
export function decisionOnSettledCall(
  call: ToolCall,
  input: DecisionInput,
  deciderId: string,
  scope: GrantScope | undefined,
): 'unchanged' | AlreadyDecidedError {
  const d = call.decision;
  if (d && d.by.id === deciderId && sameRequest(d, input, scope)) return 'unchanged';
  const mine = call.approvals.find((a) => a.by.id === deciderId);
  if (mine && !isRejection(input.decision) && sameApproval(mine, input)) return 'unchanged';
  return new AlreadyDecidedError(call.id, standingDecision(d), call.status);
}

/**
 * What a refused person learns of the decision that stands: all of it but the bookkeeping (`kind`, `grantScope`).
 * Its `at` stays a Date; the view (and JSON) write it as an ISO string.
 */
export function standingDecision(
  d: DecisionRecord | undefined,
): Omit<DecisionRecord, 'kind' | 'grantScope'> | undefined {
  if (!d) return undefined;
  const { kind: _kind, grantScope: _grantScope, ...rest } = d;
  return rest;
}

/**
 * Whether a repeated decision asks for what was recorded: the same kind, the same edited arguments
 * (structurally, key order aside) and, for always_allow, the same scope. Anything else is a second decision.
 */
function sameRequest(d: DecisionRecord, input: DecisionInput, scope: GrantScope | undefined): boolean {
  if (d.kind !== input.decision) return false;
  if (!isRejection(input.decision) && !jsonEqual(d.editedArguments, input.arguments)) return false;
  // A decision recorded before its scope was kept reads as the default scope.
  return scope === undefined || (d.grantScope ?? 'conversation') === scope;
}

/** A quorum member's repeated approval: the same kind and the same arguments (none given approves the fixed ones). */
export function sameApproval(a: Pick<ApprovalRecord, 'kind' | 'editedArguments'>, input: DecisionInput): boolean {
  return a.kind === input.decision && (input.arguments === undefined || jsonEqual(a.editedArguments, input.arguments));
}
