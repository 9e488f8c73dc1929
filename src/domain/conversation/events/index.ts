/* One class per transition of a conversation or its tool calls; names are past tense. */
import { BaseEvent } from '../../shared/event-base';
import type { ToolFlags } from '../../policy/approval-policy';

/** Which policy decided: recorded on every decision so an audit can name the version and rule. */
interface PolicyRef {
  level: string;
  rule: number | null;
  policyVersion: number;
}

export class ConversationStarted extends BaseEvent<{
  agentId: string;
  user: { id: string; roles: string[]; name?: string } | null;
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
  /** The tool's flags as the policy saw them (registry first, else the proposal's annotations). */
  toolFlags?: ToolFlags;
  policy: PolicyRef & { reason: string };
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
  }
> {
  readonly type = 'ToolCallAutoApproved' as const;
}

export class ApprovalRequested extends BaseEvent<{
  level: string;
  rule: number | null;
  policyVersion: number;
  reason: string;
  approvers: string[];
  expiresAt: string;
}> {
  readonly type = 'ApprovalRequested' as const;
}

export class ToolCallApproved extends BaseEvent<
  PolicyRef & {
    outcome: 'approved';
    approvedBy: string;
    via: string;
    latencyMs: number;
    decision: 'approve' | 'always_allow';
    reason?: string;
    editedArguments?: Record<string, unknown>;
  }
> {
  readonly type = 'ToolCallApproved' as const;
}

export class ToolCallRejected extends BaseEvent<
  PolicyRef & {
    outcome: 'rejected';
    rejectedBy: string;
    via: string;
    latencyMs: number;
    reason?: string;
  }
> {
  readonly type = 'ToolCallRejected' as const;
}

export class ToolCallExpired extends BaseEvent<PolicyRef & { outcome: 'expired'; reason: string; expiresAt: string; waitedMs: number; latencyMs: number }> {
  readonly type = 'ToolCallExpired' as const;
}

export class ToolCallCancelled extends BaseEvent<PolicyRef & { outcome: 'cancelled'; reason: string; previousStatus: string }> {
  readonly type = 'ToolCallCancelled' as const;
}

export class ToolCallExecuted extends BaseEvent<
  PolicyRef & { arguments: Record<string, unknown>; edited: boolean; approvedBy: string; approvedVia: string }
> {
  readonly type = 'ToolCallExecuted' as const;
}

export class ToolCallCompleted extends BaseEvent<{ outcome: 'succeeded' | 'failed'; error?: string; durationMs: number }> {
  readonly type = 'ToolCallCompleted' as const;
}

/**
 * A person asked for a standing grant wider than they may make (only admins grant beyond the conversation;
 * the policy's `grants` may narrow it further). Nothing else changed: the call stays as it was.
 */
export class GrantRefused extends BaseEvent<
  PolicyRef & {
    decision: 'always_allow';
    requestedScope: string;
    allowedScope: string;
    refusedBy: string;
    via: string;
    reason: string;
  }
> {
  readonly type = 'GrantRefused' as const;
}
