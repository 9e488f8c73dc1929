import { personActor } from '../shared/actor';
import { AlreadyDecidedError } from './conversation.errors';
import { policyRef, ToolCallDeadlineExtended } from './conversation.events';
import { CallCourse, DecisionResult, expireCall } from './held-call';
import { checkMayExtendDeadline, checkNewDeadline } from './rules/deadline-extension';
import { standingDecision } from './rules/first-decision-wins';
import { withNextStep } from './rules/follow-up';
import type { Decider, ToolCall } from './tool-call.entity';

/**
 * An admin gives a pending call more time: its deadline moves to `expiresAt` (later than now and the current
 * deadline, at most a day from now), its reminders start over for the new deadline, and it is recorded.
 */
export function extendDeadline(
  call: ToolCall,
  expiresAt: Date,
  reason: string | undefined,
  by: Decider,
  at: Date,
  c: CallCourse,
): DecisionResult {
  checkMayExtendDeadline(by);
  if (call.isExpiredAt(at)) expireCall(call, at, c);
  if (call.status !== 'pending' || !call.approval)
    return {
      kind: 'refused',
      call,
      error: new AlreadyDecidedError(call.id, standingDecision(call.decision), call.status),
    };
  const from = call.approval.expiresAt;
  checkNewDeadline(from, expiresAt, at);
  const approval = { approvers: call.approval.approvers, expiresAt };
  const f = call.snapshot().followUp;
  call.setFollowUp(undefined, approval);
  if (f) call.setFollowUp(withNextStep(call, { escalated: f.escalated, reminded: [] }), approval);
  c.record(
    new ToolCallDeadlineExtended(c.envelope(personActor(by, by.via), at), {
      from: from.toISOString(),
      to: expiresAt.toISOString(),
      by: by.id,
      via: by.via,
      ...(reason ? { reason } : {}),
      ...policyRef(call.policy),
    }),
  );
  c.changed(at);
  return { kind: 'decided', call };
}
