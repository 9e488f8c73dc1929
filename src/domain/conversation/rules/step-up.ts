import { jsonEqual } from '../../shared/json';
import type { StepUpEvidence } from '../step-up-proof';
import type { DecisionInput, DecisionKind, PolicyRecord, ToolCall } from '../tool-call.entity';
import { isRejection } from './allowed-decisions';

export type { StepUpEvidence, StepUpProof } from '../step-up-proof';

export type StepUpRefusal = { code: 'step_up_required' | 'step_up_mismatch'; reason: string };

/**
 * A rule with `stepUp: passkey` takes an approval only with a fresh passkey assertion made for this call and the
 * exact arguments approved (`approving`: edited ones, or a quorum's fixed ones, else the call's own). A rejection
 * never needs one. Returns the refusal, or undefined when the approval may go on.
 */
export function stepUpRefusal(
  decision: DecisionKind,
  policy: Pick<PolicyRecord, 'stepUp'>,
  evidence: StepUpEvidence | undefined,
  toolCallId: string,
  approving: Record<string, unknown>,
): StepUpRefusal | undefined {
  if (policy.stepUp !== 'passkey' || isRejection(decision)) return undefined;
  if (!evidence)
    return {
      code: 'step_up_required',
      reason: 'This call needs a passkey: approve it in the Tollgate inbox, where your passkey signs for it',
    };
  if (evidence.outcome === 'invalid') return { code: 'step_up_required', reason: evidence.reason };
  if (evidence.outcome === 'mismatch') return { code: 'step_up_mismatch', reason: evidence.reason };
  if (evidence.proof.toolCallId !== toolCallId)
    return { code: 'step_up_mismatch', reason: 'The passkey signed for another tool call' };
  if (!jsonEqual(evidence.arguments, approving))
    return { code: 'step_up_mismatch', reason: 'The passkey signed for other arguments than the ones approved' };
  return undefined;
}

/**
 * The arguments an approval by `input` would approve: its edit, else a quorum's first approval's edit, else the
 * call's own. A passkey's challenge is derived from their digest (rules/step-up).
 */
export function approvingArguments(call: ToolCall, input: Pick<DecisionInput, 'arguments'>): Record<string, unknown> {
  return input.arguments ?? call.approvals[0]?.editedArguments ?? call.arguments;
}
