/* One class per transition of a conversation or its tool calls; names are past tense. */
import { BaseEvent } from '../shared/event-base';
import type { ShadowVerdict, ToolFlags } from '../policy/approval-policy';
import type { NotifyChannel } from '../policy/policy-shape';
import type { StepUpProof } from './step-up-proof';
import type { CallPreview } from './call-preview';

/** Which policy decided: recorded on every decision so an audit can name the version and rule. */
interface PolicyRef {
  level: string;
  rule: number | null;
  policyVersion: number;
}

export class ConversationStarted extends BaseEvent<{
  agentId: string;
  /** `assurance`: verified from the user's own token, or asserted by the agent (absent on events before it was recorded). */
  user: { id: string; roles: string[]; name?: string; assurance: 'verified' | 'asserted' } | null;
  title?: string;
}> {
  readonly type = 'ConversationStarted' as const;
}

export class ToolCallProposed extends BaseEvent<{
  externalId?: string;
  argumentsDigest?: string;
  arguments: Record<string, unknown>;
  reason?: string;
  confidence?: number;
  estimatedCost?: number;
  /** What the call will do, as proposed (kind, content, digest…): what people were shown. */
  preview?: CallPreview;
  /** The tool's flags as the policy saw them (registry first, else the proposal's annotations). */
  toolFlags?: ToolFlags;
  policy: PolicyRef & { reason: string };
  /** What a rule in shadow mode would have decided (never applied): log-only rules on live traffic. */
  shadow?: ShadowVerdict;
}> {
  readonly type = 'ToolCallProposed' as const;
}

export class ToolCallAutoApproved extends BaseEvent<
  PolicyRef & {
    outcome: 'approved';
    via: 'policy';
    latencyMs: 0;
    reason: string;
    grantId?: string;
    /** The digest of the call's preview, when it carried one. */
    preview?: string;
  }
> {
  readonly type = 'ToolCallAutoApproved' as const;
}

/**
 * A `notify` call ran at once and these people are told: the deciding rule's `approvers` (else the defaults'),
 * `requester` being the conversation's user (null without one), on these channels.
 */
export class ToolCallNotified extends BaseEvent<
  PolicyRef & { approvers: string[]; requester: string | null; channels: NotifyChannel[] }
> {
  readonly type = 'ToolCallNotified' as const;
}

export class ApprovalRequested extends BaseEvent<{
  level: string;
  rule: number | null;
  policyVersion: number;
  reason: string;
  approvers: string[];
  expiresAt: string;
  /** The channels that reach out to people, when the rule names them (absent: all). */
  notify?: NotifyChannel[];
}> {
  readonly type = 'ApprovalRequested' as const;
}

export class ToolCallApproved extends BaseEvent<
  PolicyRef & {
    outcome: 'approved';
    approvedBy: string;
    /** A delegate's decision: the delegator whose authority it was made with (the actor names both). */
    onBehalfOf?: string;
    via: string;
    latencyMs: number;
    decision: 'approve' | 'always_allow';
    reason?: string;
    editedArguments?: Record<string, unknown>;
    /** For a quorum: who approved, in order (the last one is `approvedBy`). */
    approvals?: string[];
    /** The passkey assertion this approval was made with, when the rule asks for one. */
    stepUp?: StepUpProof;
    /** The digest of the preview the approvers were shown, when the call carried one (the receipt's `preview`). */
    preview?: string;
  }
> {
  readonly type = 'ToolCallApproved' as const;
}

/** One approval towards a quorum; the call stays pending until the count is reached (then ToolCallApproved). */
export class ToolCallApprovalRecorded extends BaseEvent<
  PolicyRef & {
    approvedBy: string;
    /** A delegate's decision: the delegator whose authority it was made with (the actor names both). */
    onBehalfOf?: string;
    via: string;
    decision: 'approve' | 'always_allow';
    /** Distinct approvals so far, this one included, and how many the quorum needs. */
    count: number;
    needed: number;
    reason?: string;
    editedArguments?: Record<string, unknown>;
    stepUp?: StepUpProof;
  }
> {
  readonly type = 'ToolCallApprovalRecorded' as const;
}

/** A held call has waited `afterSeconds`: more people may decide it (`added`), and `notify` channels are told. */
export class ToolCallEscalated extends BaseEvent<
  PolicyRef & {
    step: number;
    of: number;
    afterSeconds: number;
    added: string[];
    approvers: string[];
    notify: string[];
    expiresAt: string;
  }
> {
  readonly type = 'ToolCallEscalated' as const;
}

/** A held call's deadline is near: the channels remind the people who may decide it. */
export class ToolCallReminded extends BaseEvent<
  PolicyRef & { remindBefore: number; secondsLeft: number; expiresAt: string; approvers: string[] }
> {
  readonly type = 'ToolCallReminded' as const;
}

/** An admin gave a held call more time. */
export class ToolCallDeadlineExtended extends BaseEvent<
  PolicyRef & { from: string; to: string; by: string; via: string; reason?: string }
> {
  readonly type = 'ToolCallDeadlineExtended' as const;
}

export class ToolCallRejected extends BaseEvent<
  PolicyRef & {
    outcome: 'rejected';
    rejectedBy: string;
    /** A delegate's decision: the delegator whose authority it was made with (the actor names both). */
    onBehalfOf?: string;
    via: string;
    latencyMs: number;
    reason?: string;
    /** `respond` (the agent is told `response`) or `always_reject` (a standing deny in `scope` follows); absent: reject. */
    decision?: 'respond' | 'always_reject';
    response?: string;
    scope?: string;
  }
> {
  readonly type = 'ToolCallRejected' as const;
}

export class ToolCallExpired extends BaseEvent<
  PolicyRef & { outcome: 'expired'; reason: string; expiresAt: string; waitedMs: number; latencyMs: number }
> {
  readonly type = 'ToolCallExpired' as const;
}

export class ToolCallCancelled extends BaseEvent<
  PolicyRef & { outcome: 'cancelled'; reason: string; previousStatus: string }
> {
  readonly type = 'ToolCallCancelled' as const;
}

export class ToolCallExecuted extends BaseEvent<
  PolicyRef & { arguments: Record<string, unknown>; edited: boolean; approvedBy: string; approvedVia: string }
> {
  readonly type = 'ToolCallExecuted' as const;
}

export class ToolCallCompleted extends BaseEvent<{
  outcome: 'succeeded' | 'failed';
  error?: string;
  durationMs: number;
}> {
  readonly type = 'ToolCallCompleted' as const;
}

/**
 * A person asked for a standing grant wider than they may make (only admins grant beyond the conversation;
 * the policy's `grants` may narrow it further). Nothing else changed: the call stays as it was.
 */
/**
 * A person allowed to decide was refused: by separation of duties (`self_approval`, `selfApproval: false`: they are
 * the conversation's user or the agent's owner), or because their approval came relayed by an MCP chat client the
 * call's rule does not take it from (`chat_approval_not_allowed`), or because the rule asks for a passkey and the
 * approval brought none that proves anything (`step_up_required`) or one made for another call or other arguments
 * (`step_up_mismatch`). Nothing else changed: the call stays pending.
 */
export type DecisionRefusedCode =
  'self_approval' | 'chat_approval_not_allowed' | 'step_up_required' | 'step_up_mismatch';

export class DecisionRefused extends BaseEvent<
  PolicyRef & {
    decision: 'approve' | 'always_allow';
    code: DecisionRefusedCode;
    refusedBy: string;
    /** A delegate's decision: the delegator whose authority it was made with (the actor names both). */
    onBehalfOf?: string;
    via: string;
    reason: string;
  }
> {
  readonly type = 'DecisionRefused' as const;
}

export class GrantRefused extends BaseEvent<
  PolicyRef & {
    decision: 'always_allow';
    requestedScope: string;
    allowedScope: string;
    refusedBy: string;
    /** A delegate's decision: the delegator whose authority it was made with (the actor names both). */
    onBehalfOf?: string;
    via: string;
    reason: string;
  }
> {
  readonly type = 'GrantRefused' as const;
}

/** Which policy version and rule decided a call: carried by every decision event. */
export function policyRef(p: { level: string; rule: number | null; policyVersion: number }): PolicyRef {
  return { level: p.level, rule: p.rule, policyVersion: p.policyVersion };
}

/** The policy's reference and its reason, as the events of the policy's own decisions carry them. */
export function policyRefWithReason(p: { level: string; rule: number | null; policyVersion: number; reason: string }) {
  return { ...policyRef(p), reason: p.reason };
}
