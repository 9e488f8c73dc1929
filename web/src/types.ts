/** The shapes of CONTRACT §6, §9 and §10 the inbox reads. Only what the page uses is typed. */

export type Channel = 'policy' | 'web' | 'cli' | 'slack' | 'api' | 'grpc' | 'system';
export type Level = 'deny' | 'manual' | 'confirm' | 'notify' | 'automatic';
export type Status = 'pending' | 'approved' | 'rejected' | 'expired' | 'cancelled' | 'executed' | 'completed';

export interface ActorRef {
  id: string;
  name?: string;
  via: Channel | string;
}

export interface Decision {
  outcome: 'approved' | 'rejected' | 'expired' | 'cancelled';
  by: ActorRef;
  at: string;
  reason?: string;
  editedArguments?: Record<string, unknown>;
}

export interface DisplayField {
  label: string;
  value: string;
}

export interface Display {
  title?: string;
  summary?: string;
  fields?: DisplayField[];
}

export interface ToolCall {
  id: string;
  externalId?: string;
  conversationId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  reason?: string;
  confidence?: number;
  estimatedCost?: number;
  display?: Display;
  status: Status;
  /** `toolFlags`: the tool's flags the policy saw, when there were any. */
  policy: { level: Level; rule: number | null; policyVersion: number; reason: string; toolFlags?: { destructive?: boolean } };
  approval?: { approvers: string[]; expiresAt: string };
  decision?: Decision;
  execution?: { at: string; by: ActorRef };
  result?: { outcome: 'succeeded' | 'failed'; output?: unknown; error?: string; at: string };
  cancellation?: { by: ActorRef; at: string; reason: string };
  createdAt: string;
  updatedAt: string;
}

export interface ConversationUser {
  id: string;
  roles?: string[];
  name?: string;
}

export interface ConversationRef {
  id: string;
  agentId: string;
  user: ConversationUser | null;
  title: string | null;
}

/** An inbox entry: the call plus enough of its conversation to judge it. */
export interface Approval extends ToolCall {
  conversation: ConversationRef;
}

export interface Conversation extends ConversationRef {
  status: 'active' | 'blocked' | 'halted';
  pendingCount: number;
  toolCalls: ToolCall[];
  createdAt: string;
  updatedAt: string;
}

export interface Tool {
  name: string;
  description: string | null;
  isReadOnly: boolean;
  requiresApproval: boolean;
  destructive: boolean;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** An audit event as the stream and `GET /v1/audit/events` carry it. */
export interface AuditEvent {
  seq: number;
  id: string;
  type: string;
  at: string;
  tenant: string;
  conversationId?: string;
  toolCallId?: string;
  toolName?: string;
  actor: { id: string; via?: string; name?: string; kind?: string };
  data: Record<string, unknown>;
}

export interface HaltInForce {
  scope: 'tenant' | 'agent' | 'conversation';
  id: string | null;
  reason: string;
  by: ActorRef;
  at: string;
}

export interface TenantStatus {
  tenant: string;
  halted: boolean;
  halts: HaltInForce[];
}

export interface UiConfig {
  devSignIn: boolean;
}

/** RFC 9457 problem details, as every error of the API. */
export interface Problem {
  status: number;
  code: string;
  title?: string;
  detail?: string;
  decision?: Decision;
  errors?: Array<{ path: string; message: string }>;
}

export type DecisionBody =
  | { decision: 'approve'; reason?: string; arguments?: Record<string, unknown> }
  | { decision: 'always_allow'; reason?: string; scope: 'conversation' | 'agent' | 'tenant' }
  | { decision: 'reject'; reason: string };
