/* TypeORM mappings of the tables created in migrations/. Mapping to and from the domain is explicit (see *.mapper.ts). */
import { Column, Entity, PrimaryColumn } from 'typeorm';

// jsonb columns hold free JSON; `any` here keeps TypeORM's deep-partial typing usable.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JsonObject = { [key: string]: any };

const tz = { type: 'timestamptz' as const };

/*
 * The conversation aggregate's rows, keyed by property. They are read and written in hand-written SQL only (see
 * sql-conversation.repository.ts), not through TypeORM: their columns and SQL types are in conversation-columns.ts.
 */
export interface ConversationRow {
  tenantId: string;
  id: string;
  agentId: string;
  agentOwner: string | null;
  userId: string | null;
  userRoles: string[] | null;
  userName: string | null;
  /** `verified` or `asserted`; null when there is no user. */
  userAssurance: string | null;
  title: string | null;
  metadata: JsonObject | null;
  pendingCount: number;
  createdAt: Date;
  updatedAt: Date;
  version: number;
}

export interface ToolCallRow {
  tenantId: string;
  id: string;
  conversationId: string;
  externalId: string | null;
  toolName: string;
  arguments: JsonObject;
  annotations: JsonObject | null;
  reason: string | null;
  confidence: number | null;
  estimatedCost: number | null;
  display: JsonObject | null;
  preview: JsonObject | null;
  status: string;
  policy: JsonObject;
  approvers: string[] | null;
  expiresAt: Date | null;
  approvals: JsonObject[] | null;
  followUp: JsonObject | null;
  nextStepAt: Date | null;
  decision: JsonObject | null;
  execution: JsonObject | null;
  result: JsonObject | null;
  cancellation: JsonObject | null;
  /** The real values of secret arguments, sealed with the data key (infrastructure/secrets/data-key.ts). */
  sealedArguments: string | null;
  createdAt: Date;
  updatedAt: Date;
}

@Entity('tools')
export class ToolRow {
  @PrimaryColumn('text', { name: 'tenant_id' }) tenantId: string;
  @PrimaryColumn('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('boolean', { name: 'is_read_only' }) isReadOnly: boolean;
  @Column('boolean', { name: 'requires_approval' }) requiresApproval: boolean;
  @Column('boolean') destructive: boolean;
  @Column('jsonb', { name: 'input_schema', nullable: true }) inputSchema: JsonObject | null;
  @Column('text', { name: 'redact', array: true, nullable: true }) redact: string[] | null;
  @Column('text', { name: 'registered_by' }) registeredBy: string;
  @Column('text', { name: 'registered_by_kind' }) registeredByKind: 'admin' | 'agent';
  @Column({ ...tz, name: 'created_at' }) createdAt: Date;
  @Column({ ...tz, name: 'updated_at' }) updatedAt: Date;
  @Column('integer') version: number;
}

@Entity('policy_versions')
export class PolicyVersionRow {
  @PrimaryColumn('text', { name: 'tenant_id' }) tenantId: string;
  @PrimaryColumn('integer') version: number;
  @Column('jsonb') document: JsonObject;
  @Column({ ...tz, name: 'created_at' }) createdAt: Date;
  @Column('text', { name: 'created_by' }) createdBy: string;
}

@Entity('grants')
export class GrantRow {
  @PrimaryColumn('text', { name: 'tenant_id' }) tenantId: string;
  @PrimaryColumn('text') id: string;
  @Column('text', { name: 'tool_name' }) toolName: string;
  @Column('text') scope: 'conversation' | 'agent' | 'tenant';
  @Column('text', { name: 'conversation_id', nullable: true }) conversationId: string | null;
  @Column('text', { name: 'agent_id', nullable: true }) agentId: string | null;
  @Column('jsonb', { name: 'created_by' }) createdBy: { id: string; name?: string; via: string };
  @Column('text', { name: 'source_tool_call_id' }) sourceToolCallId: string;
  @Column({ ...tz, name: 'created_at' }) createdAt: Date;
  @Column({ ...tz, name: 'expires_at', nullable: true }) expiresAt: Date | null;
  @Column({ ...tz, name: 'revoked_at', nullable: true }) revokedAt: Date | null;
  @Column('jsonb', { name: 'revoked_by', nullable: true }) revokedBy: { id: string; name?: string; via: string } | null;
  @Column('text', { name: 'revoke_reason', nullable: true }) revokeReason: string | null;
  @Column('jsonb', { nullable: true }) args: Record<string, string> | null;
  /** `deny`: a standing deny (an always_reject); `allow`: a grant. */
  @Column('text', { default: 'allow' }) effect: 'allow' | 'deny';
  /** Calls a single-use (or n-use) grant may let through, and how many are left (null: unbounded). */
  @Column('integer', { nullable: true }) uses: number | null;
  @Column('integer', { name: 'uses_left', nullable: true }) usesLeft: number | null;
}

@Entity('halts')
export class HaltRow {
  @PrimaryColumn('text', { name: 'tenant_id' }) tenantId: string;
  @PrimaryColumn('text') scope: 'tenant' | 'agent' | 'conversation';
  @PrimaryColumn('text', { name: 'scope_id' }) scopeId: string;
  @Column('text') reason: string;
  @Column('jsonb', { name: 'created_by' }) createdBy: JsonObject;
  @Column({ ...tz, name: 'created_at' }) createdAt: Date;
}

@Entity('events')
export class EventRow {
  @PrimaryColumn('text', { name: 'tenant_id' }) tenantId: string;
  @PrimaryColumn('bigint') seq: string;
  @Column('uuid') id: string;
  @Column('text') type: string;
  @Column(tz) at: Date;
  @Column({ ...tz, name: 'recorded_at' }) recordedAt: Date;
  @Column('text', { name: 'instance_id' }) instanceId: string;
  @Column('text', { name: 'correlation_id', nullable: true }) correlationId: string | null;
  @Column('text', { name: 'conversation_id', nullable: true }) conversationId: string | null;
  @Column('text', { name: 'tool_call_id', nullable: true }) toolCallId: string | null;
  @Column('text', { name: 'tool_name', nullable: true }) toolName: string | null;
  @Column('jsonb') actor: JsonObject;
  @Column('jsonb') data: JsonObject;
  @Column('text', { name: 'prev_hash' }) prevHash: string;
  @Column('text') hash: string;
}

@Entity('signing_keys')
export class SigningKeyRow {
  @PrimaryColumn('text') kid: string;
  @Column('text') alg: string;
  @Column('jsonb', { name: 'private_jwk' }) privateJwk: JsonObject;
  @Column('jsonb', { name: 'public_jwk' }) publicJwk: JsonObject;
  @Column({ ...tz, name: 'created_at' }) createdAt: Date;
}

export const ORM_ENTITIES = [ToolRow, PolicyVersionRow, GrantRow, HaltRow, EventRow, SigningKeyRow];
