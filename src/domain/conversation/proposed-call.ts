import { Actor, POLICY_ACTOR } from '../shared/actor';
import type { PolicyVerdict, ToolFlags } from '../policy/approval-policy';
import type { NotifyChannel } from '../policy/policy-shape';
import {
  ApprovalRequested,
  policyRef,
  policyRefWithReason,
  ToolCallAutoApproved,
  ToolCallNotified,
  ToolCallProposed,
  ToolCallRejected,
} from './conversation.events';
import type { CallCourse } from './held-call';
import { PolicyRecord, ToolCall, ToolCallDisplay } from './tool-call.entity';
import type { CallPreview } from './call-preview';
import { withNextStep } from './rules/follow-up';

/**
 * Where a `notify` call's FYI goes unless its rule names channels. Not push or email by default: a phone buzzing or a
 * mail for a call that already ran is noise, unless the rule asks for it (`notify: [email]`).
 */
const FYI_CHANNELS: readonly NotifyChannel[] = ['slack', 'webhook', 'inbox'];

/** One call of a step, as the agent proposes it. */
export interface ProposedCall {
  externalId?: string;
  toolName: string;
  arguments: Record<string, unknown>;
  annotations?: ToolFlags;
  reason?: string;
  confidence?: number;
  estimatedCost?: number;
  display?: ToolCallDisplay;
  /** What the call will do, as a person should see it (a diff, SQL, an email…), with its digest. */
  preview?: CallPreview;
  /** The real values of its secret arguments, sealed (`arguments` holds them masked): kept for the claim only. */
  sealedArguments?: string;
}

/**
 * A new call and what the policy's verdict does to it at once, recorded: approved (`automatic`, `notify`: people
 * are told), rejected (`deny`), or held for people (`confirm`, `manual`) until its deadline.
 */
/** `origin`: the new call's id, its conversation, when and by which agent, and the conversation's user. */
export function proposeCall(
  p: ProposedCall,
  verdict: PolicyVerdict,
  origin: { id: string; conversationId: string; at: Date; agent: Actor; requester: string | null },
  courseOf: (call: ToolCall) => CallCourse,
): ToolCall {
  const { at } = origin;
  const policy = policyRecord(verdict);
  const call = ToolCall.create({
    id: origin.id,
    externalId: p.externalId,
    conversationId: origin.conversationId,
    toolName: p.toolName,
    arguments: p.arguments,
    annotations: p.annotations,
    reason: p.reason,
    confidence: p.confidence,
    estimatedCost: p.estimatedCost,
    display: p.display,
    ...(p.preview ? { preview: p.preview } : {}),
    ...(p.sealedArguments ? { sealedArguments: p.sealedArguments } : {}),
    status: 'pending',
    policy,
    createdAt: at,
    updatedAt: at,
  });
  const c = courseOf(call);
  c.record(
    new ToolCallProposed(c.envelope(origin.agent, at), {
      externalId: p.externalId,
      arguments: p.arguments,
      reason: p.reason,
      confidence: p.confidence,
      estimatedCost: p.estimatedCost,
      ...(p.preview ? { preview: p.preview } : {}),
      ...(verdict.toolFlags ? { toolFlags: verdict.toolFlags } : {}),
      policy: policyRefWithReason(policy),
      ...(verdict.shadow ? { shadow: verdict.shadow } : {}),
    }),
  );

  const byPolicy = { id: POLICY_ACTOR.id, via: POLICY_ACTOR.via };
  const env = c.envelope(POLICY_ACTOR, at);
  switch (verdict.level) {
    case 'automatic':
    case 'notify':
      call.moveTo('approved', at, { decision: { outcome: 'approved', by: byPolicy, at, reason: verdict.reason } });
      c.record(
        new ToolCallAutoApproved(env, {
          outcome: 'approved',
          via: 'policy',
          latencyMs: 0,
          ...policyRefWithReason(policy),
          grantId: verdict.grantId,
          ...(p.preview ? { preview: p.preview.digest } : {}),
        }),
      );
      // The record that people were told: the channels deliver it (at least once) from the outbox.
      if (verdict.level === 'notify') {
        c.record(
          new ToolCallNotified(env, {
            ...policyRef(policy),
            approvers: [...verdict.approvers],
            requester: origin.requester,
            channels: [...(verdict.notify ?? FYI_CHANNELS)],
          }),
        );
      }
      break;
    case 'deny':
      call.moveTo('rejected', at, { decision: { outcome: 'rejected', by: byPolicy, at, reason: verdict.reason } });
      c.record(
        new ToolCallRejected(env, {
          outcome: 'rejected',
          rejectedBy: 'policy',
          via: 'policy',
          latencyMs: 0,
          reason: verdict.reason,
          ...policyRef(policy),
        }),
      );
      break;
    case 'confirm':
    case 'manual': {
      const expiresAt = new Date(at.getTime() + verdict.timeoutSeconds * 1000);
      call.awaitApproval([...verdict.approvers], expiresAt);
      if (policy.escalate || policy.remindBefore) call.setFollowUp(withNextStep(call, { escalated: 0, reminded: [] }));
      c.record(
        new ApprovalRequested(env, {
          ...policyRefWithReason(policy),
          approvers: [...verdict.approvers],
          expiresAt: expiresAt.toISOString(),
          ...(verdict.notify ? { notify: [...verdict.notify] } : {}),
        }),
      );
      break;
    }
  }
  return call;
}

/** What a verdict leaves on the call: the policy's reference, and for a held call the rules of its course. */
function policyRecord(verdict: PolicyVerdict): PolicyRecord {
  const held = verdict.level === 'confirm' || verdict.level === 'manual';
  return {
    level: verdict.level,
    rule: verdict.rule,
    policyVersion: verdict.policyVersion,
    reason: verdict.reason,
    grantId: verdict.grantId,
    toolFlags: verdict.toolFlags,
    // Kept for the decision only when the policy narrows it (absent: no narrowing, as on calls stored before).
    ...(held && verdict.grants !== 'tenant' ? { grants: verdict.grants } : {}),
    ...(held && verdict.selfApproval === false ? { selfApproval: false as const } : {}),
    ...(held && verdict.quorum ? { quorum: verdict.quorum } : {}),
    ...(held && verdict.chatApproval === false ? { chatApproval: false as const } : {}),
    ...(held && verdict.stepUp ? { stepUp: verdict.stepUp } : {}),
    ...(held && verdict.escalate ? { escalate: verdict.escalate } : {}),
    ...(held && verdict.remindBefore ? { remindBefore: verdict.remindBefore } : {}),
    ...(held && verdict.notify ? { notify: verdict.notify } : {}),
    ...(held && verdict.allowedDecisions ? { allowedDecisions: verdict.allowedDecisions } : {}),
    ...(held && verdict.rejectReasons ? { rejectReasons: verdict.rejectReasons } : {}),
    ...(held && verdict.rejectFreeText ? { rejectFreeText: true as const } : {}),
    ...(verdict.shadow ? { shadow: verdict.shadow } : {}),
  };
}
