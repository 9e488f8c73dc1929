import type { ConversationState, ConversationUser } from '../../domain/conversation/conversation.aggregate';
import { Conversation } from '../../domain/conversation/conversation.aggregate';
import { ToolCallState } from '../../domain/conversation/tool-call.entity';
import { ToolCallStatus } from '../../domain/conversation/tool-call-status';
import type { EveryMember } from '../../application/views/view-guard';
import type { ConversationRow, ToolCallRow } from './orm-entities';

/**
 * The conversation's user from its columns (every read of them goes through here). Only the stored `verified` counts
 * as verified: anything else, a null left by a bug included, is the agent's word (fail closed).
 */
export function userFromColumns(
  id: string | null,
  roles: string[] | null,
  name: string | null,
  assurance: string | null,
): ConversationUser | null {
  if (id === null) return null;
  return {
    id,
    roles: roles ?? [],
    ...(name ? { name } : {}),
    assurance: assurance === 'verified' ? 'verified' : 'asserted',
  };
}

/** Explicit mapping between rows and domain state; jsonb holds dates as ISO strings. */
export const ConversationMapper = {
  toDomain(row: ConversationRow, calls: ToolCallRow[]): Conversation {
    const state: ConversationState = {
      id: row.id,
      tenantId: row.tenantId,
      agentId: row.agentId,
      ...(row.agentOwner ? { agentOwner: row.agentOwner } : {}),
      user: userFromColumns(row.userId, row.userRoles, row.userName, row.userAssurance),
      title: row.title ?? undefined,
      metadata: row.metadata ?? undefined,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
      version: row.version,
      toolCalls: calls.map(toolCallState),
    };
    return Conversation.rehydrate(state);
  },

  toRow(c: Conversation): ConversationRow {
    return {
      tenantId: c.tenantId,
      id: c.id,
      agentId: c.agentId,
      agentOwner: c.agentOwner ?? null,
      userId: c.user?.id ?? null,
      userRoles: c.user?.roles ?? null,
      userName: c.user?.name ?? null,
      userAssurance: c.user ? (c.user.assurance ?? 'asserted') : null,
      title: c.title ?? null,
      metadata: c.metadata ?? null,
      pendingCount: c.pendingCount,
      createdAt: c.createdAt,
      updatedAt: c.updatedAt,
      version: c.version,
    };
  },

  toCallRow(tenantId: string, s: Readonly<ToolCallState>): ToolCallRow {
    return {
      tenantId,
      id: s.id,
      conversationId: s.conversationId,
      externalId: s.externalId ?? null,
      toolName: s.toolName,
      arguments: s.arguments,
      annotations: s.annotations ?? null,
      reason: s.reason ?? null,
      confidence: s.confidence ?? null,
      estimatedCost: s.estimatedCost ?? null,
      display: s.display ?? null,
      preview: (s.preview as unknown as ToolCallRow['preview']) ?? null,
      status: s.status,
      policy: s.policy,
      approvers: s.approval?.approvers ?? null,
      expiresAt: s.approval?.expiresAt ?? null,
      approvals: s.approvals?.length ? s.approvals : null,
      followUp: s.followUp ? { escalated: s.followUp.escalated, reminded: s.followUp.reminded } : null,
      nextStepAt: s.followUp?.nextAt ?? null,
      decision: s.decision ?? null,
      execution: s.execution ?? null,
      result: s.result ?? null,
      cancellation: s.cancellation ?? null,
      sealedArguments: s.sealedArguments ?? null,
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
    };
  },
};

export function toolCallState(r: ToolCallRow): ToolCallState {
  const opt = <T>(v: T | null): T | undefined => (v === null ? undefined : v);
  const state: EveryMember<ToolCallState> = {
    id: r.id,
    externalId: opt(r.externalId),
    conversationId: r.conversationId,
    toolName: r.toolName,
    arguments: r.arguments,
    annotations: opt(r.annotations),
    reason: opt(r.reason),
    confidence: opt(r.confidence),
    estimatedCost: opt(r.estimatedCost),
    display: opt(r.display) as ToolCallState['display'],
    preview: opt(r.preview) as ToolCallState['preview'],
    status: r.status as ToolCallStatus,
    policy: r.policy as unknown as ToolCallState['policy'],
    approval: r.approvers && r.expiresAt ? { approvers: r.approvers, expiresAt: r.expiresAt } : undefined,
    followUp: r.followUp
      ? {
          escalated: r.followUp.escalated as number,
          reminded: r.followUp.reminded as number[],
          ...(r.nextStepAt ? { nextAt: r.nextStepAt } : {}),
        }
      : undefined,
    approvals: r.approvals
      ? (r.approvals.map((a) => ({ ...a, at: new Date(a.at as string) })) as ToolCallState['approvals'])
      : undefined,
    decision: r.decision
      ? ({ ...r.decision, at: new Date(r.decision.at as string) } as ToolCallState['decision'])
      : undefined,
    execution: r.execution
      ? ({ ...r.execution, at: new Date(r.execution.at as string) } as ToolCallState['execution'])
      : undefined,
    result: r.result ? ({ ...r.result, at: new Date(r.result.at as string) } as ToolCallState['result']) : undefined,
    cancellation: r.cancellation
      ? ({ ...r.cancellation, at: new Date(r.cancellation.at as string) } as ToolCallState['cancellation'])
      : undefined,
    sealedArguments: opt(r.sealedArguments ?? null),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
  return state;
}
