/* One class per transition of a conversation or its tool calls; names are past tense. */
import { BaseEvent } from '../../shared/event-base';

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
  policy: { level: string; rule: number | null; policyVersion: number; reason: string };
}> {
  readonly type = 'ToolCallProposed' as const;
}

export class ToolCallAutoApproved extends BaseEvent<{
  level: string;
  rule: number | null;
  policyVersion: number;
  reason: string;
  grantId?: string;
}> {
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

export class ToolCallApproved extends BaseEvent<{
  approvedBy: string;
  via: string;
  latencyMs: number;
  decision: 'approve' | 'always_allow';
  reason?: string;
  editedArguments?: Record<string, unknown>;
  grantScope?: string;
  policyVersion: number;
}> {
  readonly type = 'ToolCallApproved' as const;
}

export class ToolCallRejected extends BaseEvent<{
  rejectedBy: string;
  via: string;
  latencyMs: number;
  reason?: string;
  policyVersion: number;
  rule?: number | null;
}> {
  readonly type = 'ToolCallRejected' as const;
}

export class ToolCallExpired extends BaseEvent<{ expiresAt: string; waitedMs: number }> {
  readonly type = 'ToolCallExpired' as const;
}

export class ToolCallCancelled extends BaseEvent<{ reason: string; previousStatus: string }> {
  readonly type = 'ToolCallCancelled' as const;
}

export class ToolCallExecuted extends BaseEvent<{ arguments: Record<string, unknown>; edited: boolean }> {
  readonly type = 'ToolCallExecuted' as const;
}

export class ToolCallCompleted extends BaseEvent<{ outcome: 'succeeded' | 'failed'; error?: string; durationMs: number }> {
  readonly type = 'ToolCallCompleted' as const;
}
