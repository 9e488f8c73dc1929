/* TypeORM mappings of the tables created in migrations/. Mapping to and from the domain is explicit (see *.mapper.ts). */
import { Column, Entity, PrimaryColumn } from 'typeorm';

// jsonb columns hold free JSON; `any` here keeps TypeORM's deep-partial typing usable.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JsonObject = { [key: string]: any };

const tz = { type: 'timestamptz' as const };

@Entity('conversations')
export class ConversationRow {
  @PrimaryColumn('text', { name: 'tenant_id' }) tenantId: string;
  @PrimaryColumn('text') id: string;
  @Column('text', { name: 'agent_id' }) agentId: string;
  @Column('text', { name: 'agent_owner', nullable: true }) agentOwner: string | null;
  @Column('text', { name: 'user_id', nullable: true }) userId: string | null;
  @Column('text', { name: 'user_roles', array: true, nullable: true }) userRoles: string[] | null;
  @Column('text', { name: 'user_name', nullable: true }) userName: string | null;
  @Column('text', { nullable: true }) title: string | null;
  @Column('jsonb', { nullable: true }) metadata: JsonObject | null;
  @Column('integer', { name: 'pending_count' }) pendingCount: number;
  @Column({ ...tz, name: 'created_at' }) createdAt: Date;
  @Column({ ...tz, name: 'updated_at' }) updatedAt: Date;
  @Column('integer') version: number;
}

@Entity('tool_calls')
export class ToolCallRow {
  @PrimaryColumn('text', { name: 'tenant_id' }) tenantId: string;
  @PrimaryColumn('text') id: string;
  @Column('text', { name: 'conversation_id' }) conversationId: string;
  @Column('text', { name: 'external_id', nullable: true }) externalId: string | null;
  @Column('text', { name: 'tool_name' }) toolName: string;
  @Column('jsonb') arguments: JsonObject;
  @Column('jsonb', { nullable: true }) annotations: JsonObject | null;
  @Column('text', { nullable: true }) reason: string | null;
  @Column('double precision', { nullable: true }) confidence: number | null;
  @Column('double precision', { name: 'estimated_cost', nullable: true }) estimatedCost: number | null;
  @Column('jsonb', { nullable: true }) display: JsonObject | null;
  @Column('text') status: string;
  @Column('jsonb') policy: JsonObject;
  @Column('text', { array: true, nullable: true }) approvers: string[] | null;
  @Column({ ...tz, name: 'expires_at', nullable: true }) expiresAt: Date | null;
  @Column('jsonb', { nullable: true }) approvals: JsonObject[] | null;
  @Column('jsonb', { name: 'follow_up', nullable: true }) followUp: JsonObject | null;
  @Column({ ...tz, name: 'next_step_at', nullable: true }) nextStepAt: Date | null;
  @Column('jsonb', { nullable: true }) decision: JsonObject | null;
  @Column('jsonb', { nullable: true }) execution: JsonObject | null;
  @Column('jsonb', { nullable: true }) result: JsonObject | null;
  @Column('jsonb', { nullable: true }) cancellation: JsonObject | null;
  @Column({ ...tz, name: 'created_at' }) createdAt: Date;
  @Column({ ...tz, name: 'updated_at' }) updatedAt: Date;
}

@Entity('tools')
export class ToolRow {
  @PrimaryColumn('text', { name: 'tenant_id' }) tenantId: string;
  @PrimaryColumn('text') name: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('boolean', { name: 'is_read_only' }) isReadOnly: boolean;
  @Column('boolean', { name: 'requires_approval' }) requiresApproval: boolean;
  @Column('boolean') destructive: boolean;
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

export const ORM_ENTITIES = [
  ConversationRow,
  ToolCallRow,
  ToolRow,
  PolicyVersionRow,
  GrantRow,
  HaltRow,
  EventRow,
  SigningKeyRow,
];
