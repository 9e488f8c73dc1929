/**
 * The API's response shapes, built from domain state: dates become ISO strings here. Each is typed member for
 * member; the Swagger classes of src/adapters/api/dto implement them, and the SDK's types are generated from
 * those classes' OpenAPI schemas.
 */
import type { Conversation, ConversationUser } from '../../domain/conversation/conversation.aggregate';
import type { ActorRef, ToolCallDisplay, ToolCallState } from '../../domain/conversation/tool-call.entity';
import type { ToolCallStatus } from '../../domain/conversation/tool-call-status';
import type { CallPreview } from '../../domain/conversation/call-preview';
import type { ShadowVerdict, ToolFlags } from '../../domain/policy/approval-policy';
import type { PolicyDefaults, PolicyRule } from '../../domain/policy/policy-document';
import type { SupervisionLevel } from '../../domain/policy/supervision-level';
import type { Tool } from '../../domain/tool/tool.aggregate';
import type { TenantPolicy } from '../../domain/policy/tenant-policy.aggregate';
import type { Halt, HaltScope, HaltState } from '../../domain/halt/halt.aggregate';
import { isAgent, type OnBehalfOf, type Principal } from '../../domain/shared/actor';
import { publicDecision, type DecisionView } from './decision.view';
import type { Holds, SameMembers } from './view-guard';
import type { PendingChangeView } from './change.view';

export interface ToolCallView {
  id: string;
  externalId?: string;
  conversationId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  reason?: string;
  confidence?: number;
  estimatedCost?: number;
  display?: ToolCallDisplay;
  /** What the call will do, as proposed (agent-supplied: shown escaped), and its digest (the receipt's `preview`). */
  preview?: CallPreview;
  status: ToolCallStatus;
  policy: ToolCallPolicyView;
  approval?: ToolCallApprovalState;
  decision?: DecisionView;
  /** The claim of the run. */
  execution?: { at: string; by: ActorRef };
  /** `output`: any JSON the agent reported. */
  result?: { outcome: 'succeeded' | 'failed'; output?: unknown; error?: string; at: string };
  /** Why a halt cancelled the call. */
  cancellation?: { by: ActorRef; at: string; reason: string };
  createdAt: string;
  updatedAt: string;
  /** A decision's answer only: the pending change a tenant-wide always_allow's grant waits in (governance). */
  pendingChange?: PendingChangeView;
}

/** Why the policy judged the call as it did. */
export interface ToolCallPolicyView {
  level: SupervisionLevel;
  rule: number | null;
  policyVersion: number;
  reason: string;
  /** The tool's flags the policy saw (registry first, else the proposal's annotations), when there were any. */
  toolFlags?: ToolFlags;
  /** What a rule in shadow mode would have decided (recorded, never applied), when one would have. */
  shadow?: ShadowVerdict;
}

/** Who may decide a held call and until when; with a quorum, how many have approved so far ("1 of 2"). */
export interface ToolCallApprovalState {
  approvers: string[];
  expiresAt: string;
  /** False: the conversation's user and the agent's owner may not approve (separation of duties). */
  selfApproval?: false;
  /** False: an approval relayed by an MCP chat client does not decide this call (403 chat_approval_not_allowed). */
  chatApproval?: false;
  /** `passkey`: an approval needs a passkey assertion for this call and its arguments (POST /v1/tool-calls/{id}/step-up). */
  stepUp?: 'passkey';
  quorum?: ToolCallQuorumView;
  /** The channels that reach out to people about this call, when its rule names them (absent: all of them). */
  notify?: string[];
  /** What a person may decide, when its rule narrows it (others: 403 decision_not_allowed). */
  allowedDecisions?: string[];
  /** A rejection's reason is one of these, unless `rejectFreeText`. */
  rejectReasons?: string[];
  rejectFreeText?: true;
}

/** A call that needs several distinct approvals: "1 of 2" is `approvedBy.length` of `needed`. */
export interface ToolCallQuorumView {
  needed: number;
  /** Only approvals by people holding one of these roles count. */
  of?: string[];
  approvedBy: QuorumApproverView[];
}

/** One approval counted towards a quorum. */
export interface QuorumApproverView {
  id: string;
  name?: string;
  via: string;
  at: string;
  /** A delegate's approval: the person it was made for (it counts as theirs, once). */
  onBehalfOf?: OnBehalfOf;
}

/**
 * The members of a call's domain state the API leaves out: the proposal's own flags (what the policy made of them
 * is `policy.toolFlags`), the quorum's records (shown as `approval.quorum.approvedBy`) and the follow-up schedule.
 * A member added to ToolCallState fails the typecheck below until ToolCallView shows it or it is named here.
 * `sealedArguments` (the real values of secret arguments) is never shown: only the claim opens it.
 */
type KeptOutOfView = 'annotations' | 'approvals' | 'followUp' | 'sealedArguments';
/** `pendingChange` is the decision's answer's, not the call's state. */
export type ToolCallStatePlaced = Holds<
  SameMembers<Omit<ToolCallView, 'pendingChange'>, Omit<ToolCallState, KeptOutOfView>>
>;

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
    ...(s.preview !== undefined ? { preview: s.preview } : {}),
    status: s.status,
    policy: {
      level: s.policy.level,
      rule: s.policy.rule,
      policyVersion: s.policy.policyVersion,
      reason: s.policy.reason,
      ...(s.policy.toolFlags ? { toolFlags: s.policy.toolFlags } : {}),
      ...(s.policy.shadow ? { shadow: { ...s.policy.shadow } } : {}),
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
      ...(s.policy.chatApproval === false ? { chatApproval: false as const } : {}),
      ...(s.policy.stepUp ? { stepUp: s.policy.stepUp } : {}),
      ...(s.policy.notify ? { notify: [...s.policy.notify] } : {}),
      ...(s.policy.allowedDecisions ? { allowedDecisions: [...s.policy.allowedDecisions] } : {}),
      ...(s.policy.rejectReasons ? { rejectReasons: [...s.policy.rejectReasons] } : {}),
      ...(s.policy.rejectFreeText ? { rejectFreeText: true as const } : {}),
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

/** `calls`: all of the conversation's calls, oldest first (ConversationRepository.findWithCalls); none: no list. */
export function conversationView(
  c: Conversation,
  halted = false,
  calls?: readonly Readonly<ToolCallState>[],
): ConversationView {
  return {
    id: c.id,
    agentId: c.agentId,
    user: c.user && { ...c.user, assurance: c.user.assurance ?? 'asserted' },
    title: c.title ?? null,
    metadata: c.metadata ?? {},
    status: halted ? 'halted' : c.status,
    pendingCount: c.pendingCount,
    ...(calls ? { toolCalls: calls.map(toolCallView) } : {}),
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

/** A tool of the registry. */
export interface ToolView {
  name: string;
  description: string | null;
  isReadOnly: boolean;
  requiresApproval: boolean;
  destructive: boolean;
  /** The JSON Schema of the tool's input, when it registered one: forms for editing, and edits checked against it. */
  inputSchema?: Record<string, unknown>;
  /** The argument names whose values are masked (absent: none). */
  redact?: string[];
  registeredBy: ToolRegistrantView;
  createdAt: string;
  updatedAt: string;
}

/** Who registered a tool: an agent cannot change a tool an admin registered. */
export interface ToolRegistrantView {
  id: string;
  kind: 'admin' | 'agent';
}

export function toolView(t: Tool): ToolView {
  const s = t.snapshot();
  return {
    name: s.name,
    description: s.description ?? null,
    isReadOnly: s.isReadOnly,
    requiresApproval: s.requiresApproval,
    destructive: s.destructive,
    ...(s.inputSchema ? { inputSchema: s.inputSchema } : {}),
    ...(s.redact?.length ? { redact: [...s.redact] } : {}),
    registeredBy: s.registeredBy,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

/** The tenant's policy in force: version 0 is no policy yet, the built-in defaults. */
export interface PolicyView {
  version: number;
  defaults: PolicyDefaults;
  rules: PolicyRule[];
  updatedAt: string | null;
  updatedBy: string | null;
}

export function policyView(p: TenantPolicy): PolicyView {
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
  conversation: ApprovalConversationView;
}

/** Enough of a call's conversation to judge the call. */
export interface ApprovalConversationView {
  id: string;
  agentId: string;
  user: ConversationUser | null;
  title: string | null;
}

/** A halt in force; `id` is null for the tenant. */
export interface HaltView {
  scope: HaltScope;
  id: string | null;
  reason: string;
  by: HaltState['by'];
  at: string;
}

export function haltView(h: Halt): HaltView {
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
