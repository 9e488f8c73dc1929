import type { ConversationRow, ToolCallRow } from './orm-entities';
import { SqlColumns } from './sql-columns';

/*
 * The conversation aggregate's two tables (created in migrations/1763800000000-initial-schema.ts), column for
 * column: the repository's SQL lists, its JSON records and its row mapping are all derived from these.
 */

export const CONVERSATION_COLUMNS = new SqlColumns<ConversationRow>({
  tenantId: { column: 'tenant_id', type: 'text', role: 'key' },
  id: { column: 'id', type: 'text', role: 'key' },
  agentId: { column: 'agent_id', type: 'text', role: 'fixed' },
  agentOwner: { column: 'agent_owner', type: 'text', role: 'fixed' },
  userId: { column: 'user_id', type: 'text', role: 'saved' },
  userRoles: { column: 'user_roles', type: 'text[]', role: 'saved' },
  userName: { column: 'user_name', type: 'text', role: 'saved' },
  userAssurance: { column: 'user_assurance', type: 'text', role: 'saved' },
  title: { column: 'title', type: 'text', role: 'saved' },
  metadata: { column: 'metadata', type: 'jsonb', role: 'saved' },
  pendingCount: { column: 'pending_count', type: 'integer', role: 'saved' },
  createdAt: { column: 'created_at', type: 'timestamptz', role: 'fixed' },
  updatedAt: { column: 'updated_at', type: 'timestamptz', role: 'saved' },
  version: { column: 'version', type: 'integer', role: 'version' },
});

export const TOOL_CALL_COLUMNS = new SqlColumns<ToolCallRow>({
  tenantId: { column: 'tenant_id', type: 'text', role: 'key' },
  id: { column: 'id', type: 'text', role: 'key' },
  conversationId: { column: 'conversation_id', type: 'text', role: 'fixed' },
  externalId: { column: 'external_id', type: 'text', role: 'saved' },
  toolName: { column: 'tool_name', type: 'text', role: 'saved' },
  arguments: { column: 'arguments', type: 'jsonb', role: 'saved' },
  annotations: { column: 'annotations', type: 'jsonb', role: 'saved' },
  reason: { column: 'reason', type: 'text', role: 'saved' },
  confidence: { column: 'confidence', type: 'double precision', role: 'saved' },
  estimatedCost: { column: 'estimated_cost', type: 'double precision', role: 'saved' },
  display: { column: 'display', type: 'jsonb', role: 'saved' },
  preview: { column: 'preview', type: 'jsonb', role: 'saved' },
  status: { column: 'status', type: 'text', role: 'saved' },
  policy: { column: 'policy', type: 'jsonb', role: 'saved' },
  approvers: { column: 'approvers', type: 'text[]', role: 'saved' },
  expiresAt: { column: 'expires_at', type: 'timestamptz', role: 'saved' },
  approvals: { column: 'approvals', type: 'jsonb', role: 'saved' },
  followUp: { column: 'follow_up', type: 'jsonb', role: 'saved' },
  nextStepAt: { column: 'next_step_at', type: 'timestamptz', role: 'saved' },
  decision: { column: 'decision', type: 'jsonb', role: 'saved' },
  execution: { column: 'execution', type: 'jsonb', role: 'saved' },
  result: { column: 'result', type: 'jsonb', role: 'saved' },
  cancellation: { column: 'cancellation', type: 'jsonb', role: 'saved' },
  sealedArguments: { column: 'sealed_arguments', type: 'text', role: 'saved' },
  createdAt: { column: 'created_at', type: 'timestamptz', role: 'fixed' },
  updatedAt: { column: 'updated_at', type: 'timestamptz', role: 'saved' },
});
