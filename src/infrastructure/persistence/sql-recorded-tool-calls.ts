import { Injectable } from '@nestjs/common';
import { TOOL_CALL_STATUSES } from '../../domain/conversation/tool-call-status';
import type { ToolFlags } from '../../domain/policy/approval-policy';
import { isSupervisionLevel } from '../../domain/policy/supervision-level';
import { RecordedToolCall, RecordedToolCalls } from '../../application/ports/policy-history.port';
import { TypeOrmUnitOfWork } from './unit-of-work';

interface Row {
  id: string;
  conversation_id: string;
  tool_name: string;
  arguments: Record<string, unknown>;
  annotations: ToolFlags | null;
  confidence: number | null;
  estimated_cost: number | null;
  policy: { level?: unknown; rule?: unknown; policyVersion?: unknown; reason?: unknown };
  created_at: Date;
  agent_id: string;
  user_id: string | null;
  user_roles: string[] | null;
  user_assurance: string | null;
}

/** Recorded calls with their conversation's agent and user, for policy simulation: one read, no locks. */
@Injectable()
export class SqlRecordedToolCalls implements RecordedToolCalls {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  async proposedSince(tenantId: string, since: Date, limit: number): Promise<RecordedToolCall[]> {
    // One branch per status, each a backward walk of tool_calls_by_status (tenant_id, status, created_at, id) that
    // stops after `limit` rows: the newest calls without reading the tenant's whole history.
    const branches = TOOL_CALL_STATUSES.map(
      (_, i) =>
        `(SELECT * FROM tool_calls WHERE tenant_id = $1 AND status = $${i + 4} AND created_at >= $2 ORDER BY created_at DESC, id DESC LIMIT $3)`,
    ).join(' UNION ALL ');
    const rows: Row[] = await this.uow.manager().query(
      `SELECT tc.id, tc.conversation_id, tc.tool_name, tc.arguments, tc.annotations, tc.confidence, tc.estimated_cost, tc.policy, tc.created_at,
              c.agent_id, c.user_id, c.user_roles, c.user_assurance
         FROM (${branches}) tc JOIN conversations c ON c.tenant_id = tc.tenant_id AND c.id = tc.conversation_id
        ORDER BY tc.created_at DESC, tc.id DESC LIMIT $3`,
      [tenantId, since, limit, ...TOOL_CALL_STATUSES],
    );
    return rows.map((r) => ({
      id: r.id,
      conversationId: r.conversation_id,
      agentId: r.agent_id,
      user:
        r.user_id === null
          ? null
          : { id: r.user_id, roles: r.user_roles ?? [], verified: r.user_assurance === 'verified' },
      toolName: r.tool_name,
      arguments: r.arguments,
      ...(r.annotations ? { annotations: r.annotations } : {}),
      ...(r.confidence !== null ? { confidence: Number(r.confidence) } : {}),
      ...(r.estimated_cost !== null ? { estimatedCost: Number(r.estimated_cost) } : {}),
      createdAt: new Date(r.created_at),
      policy: {
        level: isSupervisionLevel(r.policy.level) ? r.policy.level : 'confirm',
        rule: typeof r.policy.rule === 'number' ? r.policy.rule : null,
        policyVersion: typeof r.policy.policyVersion === 'number' ? r.policy.policyVersion : 0,
        reason: typeof r.policy.reason === 'string' ? r.policy.reason : '',
      },
    }));
  }
}
