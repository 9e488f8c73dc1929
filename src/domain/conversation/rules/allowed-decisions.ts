import { jsonEqual } from '../../shared/json';
import type { RuleDecision } from '../../policy/policy-shape';
import type { DecisionInput, DecisionKind, PolicyRecord } from '../tool-call.entity';

/** The longest answer a person may give the agent with `respond` (characters). */
export const MAX_RESPONSE_LENGTH = 4000;

/**
 * Whether a decision rejects the call: `reject`, `respond` (a rejection whose text the agent reads as the tool's
 * answer) and `always_reject` (a rejection that also makes a standing deny). Rules that guard approvals (separation
 * of duties, chat approval, step-up, a quorum's roles) never refuse these.
 */
export function isRejection(decision: DecisionKind): boolean {
  return decision === 'reject' || decision === 'respond' || decision === 'always_reject';
}

/**
 * The rule's vocabulary for a decision as it was made: an approval with arguments other than the call's is an
 * `edit`; `always_reject` is a `reject` (its standing deny is bounded by the grant limits, as always_allow's grant).
 */
export function ruleDecisionOf(input: Pick<DecisionInput, 'decision' | 'arguments'>, proposed: unknown): RuleDecision {
  switch (input.decision) {
    case 'approve':
      return input.arguments !== undefined && !jsonEqual(input.arguments, proposed) ? 'edit' : 'approve';
    case 'always_reject':
      return 'reject';
    default:
      return input.decision;
  }
}

/**
 * A decision the call's rule does not allow (`allowedDecisions`, `rejectReasons` without `rejectFreeText`), or
 * undefined. Without `allowedDecisions` every decision is allowed (`respond` too: it is a rejection with a message).
 * With `rejectReasons`, a `reject` or `always_reject` must give one of them (exact, after trimming), unless
 * `rejectFreeText` lets a person write their own (a reason is still required). `respond` needs its text always.
 * `proposed`: the arguments an approval without edits would run (a quorum's fixed ones included).
 */
export function decisionNotAllowed(
  policy: Pick<PolicyRecord, 'allowedDecisions' | 'rejectReasons' | 'rejectFreeText'>,
  input: Pick<DecisionInput, 'decision' | 'arguments' | 'reason' | 'response'>,
  proposed: unknown,
): string | undefined {
  const kind = ruleDecisionOf(input, proposed);
  const allowed = policy.allowedDecisions;
  if (allowed && !allowed.includes(kind))
    return `This call's rule allows ${allowed.join(', ')}; not ${kind === 'edit' ? 'an edit (approve with changed arguments)' : kind}`;
  if (input.decision === 'respond') {
    const text = input.response?.trim() ?? '';
    if (text === '') return 'respond needs the text the agent is given instead of the tool running (response)';
    if (input.response!.length > MAX_RESPONSE_LENGTH) return `A response is at most ${MAX_RESPONSE_LENGTH} characters`;
    return undefined;
  }
  if (kind !== 'reject' || !policy.rejectReasons) return undefined;
  const reason = input.reason?.trim() ?? '';
  if (reason === '') return `This call's rule asks for a reason: one of ${quoted(policy.rejectReasons)}`;
  if (policy.rejectFreeText || policy.rejectReasons.includes(reason)) return undefined;
  return `This call's rule takes one of these reasons: ${quoted(policy.rejectReasons)}`;
}

/** Which decisions a person may be offered for a call (a channel's buttons): the rule's, else all of them. */
export function offeredDecisions(policy: Pick<PolicyRecord, 'allowedDecisions'>): readonly RuleDecision[] {
  return policy.allowedDecisions ?? ['approve', 'edit', 'reject', 'always_allow', 'respond'];
}

/** Whether a rejection needs a reason chosen from a list (a channel that cannot ask for one must link to the card). */
export function rejectNeedsReason(policy: Pick<PolicyRecord, 'rejectReasons'>): boolean {
  return !!policy.rejectReasons && policy.rejectReasons.length > 0;
}

const quoted = (xs: readonly string[]) => xs.map((x) => JSON.stringify(x)).join(', ');
