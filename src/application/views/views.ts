/** Response shapes of CONTRACT §6, built from domain state. Dates become ISO strings here. */
import type { Conversation, ConversationUser } from '../../domain/conversation/conversation.aggregate';
import { publicDecision } from './decision.view';
import type { ToolCallState } from '../../domain/conversation/tool-call.entity';
import type { Tool } from '../../domain/tool/tool.aggregate';
import type { TenantPolicy } from '../../domain/policy/tenant-policy.aggregate';
import type { Halt } from '../../domain/halt/halt.aggregate';
import { isAgent, type Principal } from '../../domain/shared/actor';

export interface ToolCallView {
  id: string;
  externalId?: string;
  conversationId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  reason?: string;
  confidence?: number;
  estimatedCost?: number;
  display?: unknown;
  status: string;
  /** `toolFlags`: the tool's flags the policy saw (registry first, else the proposal's annotations), when there were any. */
  policy: {
    level: string;
    rule: number | null;
    policyVersion: number;
    reason: string;
    toolFlags?: { isReadOnly?: boolean; requiresApproval?: boolean; destructive?: boolean };
  };
  approval?: ToolCallApprovalState;
  decision?: Record<string, unknown>;
  execution?: { at: string; by: unknown };
  result?: { outcome: string; output?: unknown; error?: string; at: string };
  cancellation?: { by: unknown; at: string; reason: string };
  createdAt: string;
  updatedAt: string;
}

/** Who may decide a held call and until when; with a quorum, how many have approved so far ("1 of 2"). */
export interface ToolCallApprovalState {
  approvers: string[];
  expiresAt: string;
  /** False: the conversation's user and the agent's owner may not approve (separation of duties). */
  selfApproval?: false;
  quorum?: { needed: number; of?: string[]; approvedBy: Array<{ id: string; name?: string; via: string; at: string }> };
}

export function toolCallView(s: Readonly<ToolCallState>): ToolCallView {
  const v: ToolCallView = {
    id: s.id,
    ...(s.externalId !== undefined ? { externalId: s.externalId } : {}),
    conversationId: s.conversationId,
    toolName: s.toolName,
    arguments: s.arguments,
    ...(s.reason !== undefined ? { reason: s.reason } : {}),
    ...(s.confidence !== undefined ? { confidence: s.confidence } : {}),
    ...(s.estimatedCost !== undefined ? { estimatedCost: s.estimatedCost } : {}),
    ...(s.display !== undefined ? { display: s.display } : {}),
    status: s.status,
    policy: {
      level: s.policy.level,
      rule: s.policy.rule,
      policyVersion: s.policy.policyVersion,
      reason: s.policy.reason,
      ...(s.policy.toolFlags ? { toolFlags: s.policy.toolFlags } : {}),
    },
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
  if (s.approval) {
    const q = s.policy.quorum;
    v.approval = {
      approvers: s.approval.approvers,
      expiresAt: s.approval.expiresAt.toISOString(),
      ...(s.policy.selfApproval === false ? { selfApproval: false as const } : {}),
      ...(q
        ? {
            quorum: {
              needed: q.count,
              ...(q.of ? { of: q.of } : {}),
              approvedBy: (s.approvals ?? []).map((a) => ({ ...a.by, at: a.at.toISOString() })),
            },
          }
        : {}),
    };
  }
  if (s.decision) v.decision = publicDecision(s.decision);
  if (s.execution) v.execution = { at: s.execution.at.toISOString(), by: s.execution.by };
  if (s.result) v.result = { ...s.result, at: s.result.at.toISOString() };
  if (s.cancellation) v.cancellation = { ...s.cancellation, at: s.cancellation.at.toISOString() };
  return v;
}

export interface ConversationView {
  id: string;
  agentId: string;
  user: ConversationUser | null;
  title: string | null;
  metadata: Record<string, unknown>;
  status: 'active' | 'blocked' | 'halted';
  pendingCount: number;
  toolCalls?: ToolCallView[];
  createdAt: string;
  updatedAt: string;
}

export function conversationView(c: Conversation, halted = false, withCalls = true): ConversationView {
  return {
    id: c.id,
    agentId: c.agentId,
    user: c.user,
    title: c.title ?? null,
    metadata: c.metadata ?? {},
    status: halted ? 'halted' : c.status,
    pendingCount: c.pendingCount,
    ...(withCalls ? { toolCalls: c.toolCalls.map((t) => toolCallView(t.snapshot())) } : {}),
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

export function toolView(t: Tool) {
  const s = t.snapshot();
  return {
    name: s.name,
    description: s.description ?? null,
    isReadOnly: s.isReadOnly,
    requiresApproval: s.requiresApproval,
    destructive: s.destructive,
    registeredBy: s.registeredBy,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

export function policyView(p: TenantPolicy) {
  const doc = p.document.toJSON();
  return {
    version: p.policyVersion,
    defaults: doc.defaults,
    rules: doc.rules,
    updatedAt: p.updatedAt?.toISOString() ?? null,
    updatedBy: p.updatedBy,
  };
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** An inbox entry: the call plus enough of its conversation to judge it. */
export interface ApprovalView extends ToolCallView {
  conversation: { id: string; agentId: string; user: ConversationUser | null; title: string | null };
}

export function haltView(h: Halt) {
  const s = h.snapshot();
  return { scope: s.scope, id: s.id || null, reason: s.reason, by: s.by, at: s.at.toISOString() };
}

/** Who the caller is, as their token establishes them (GET /v1/me, gRPC GetMe): what a client may rely on. */
export interface MeView {
  id: string;
  tenant: string;
  kind: 'person' | 'agent';
  name: string | null;
  email: string | null;
  /** As they count here: an agent token is `["agent"]` whatever else it claims. */
  roles: string[];
  /** An agent's owner (its token's `owner` claim); null for people. */
  owner: string | null;
}

export function meView(p: Principal): MeView {
  return {
    id: p.id,
    tenant: p.tenant,
    kind: isAgent(p) ? 'agent' : 'person',
    name: p.name ?? null,
    email: p.email ?? null,
    roles: [...p.roles],
    owner: p.owner ?? null,
  };
}
