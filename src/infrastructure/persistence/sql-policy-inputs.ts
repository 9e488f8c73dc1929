import { Injectable } from '@nestjs/common';
import { PolicyInputs, PolicyInputsReader } from '../../application/ports';
import { GrantRow, ToolRow } from './orm-entities';
import { grantFromRow } from './typeorm-grant.repository';
import { TypeOrmPolicyRepository } from './typeorm-policy.repository';
import { toolFromRow } from './typeorm-tool.repository';
import { TypeOrmUnitOfWork } from './unit-of-work';

const TOOL = `json_build_object('tenantId', tenant_id, 'name', name, 'description', description, 'isReadOnly', is_read_only,
  'requiresApproval', requires_approval, 'destructive', destructive, 'registeredBy', registered_by, 'registeredByKind', registered_by_kind,
  'createdAt', created_at, 'updatedAt', updated_at, 'version', version)`;
const GRANT = `json_build_object('tenantId', tenant_id, 'id', id, 'toolName', tool_name, 'scope', scope, 'conversationId', conversation_id,
  'agentId', agent_id, 'createdBy', created_by, 'sourceToolCallId', source_tool_call_id, 'createdAt', created_at)`;

/**
 * A proposal's halt, current policy version, registered tools and grants in one statement: four reads that
 * each cost a round trip on the auto-approve hot path. The halt is read inside the proposal's transaction,
 * after its conversation is locked, as before.
 */
@Injectable()
export class SqlPolicyInputs implements PolicyInputsReader {
  constructor(
    private readonly uow: TypeOrmUnitOfWork,
    private readonly policies: TypeOrmPolicyRepository,
  ) {}

  async forProposal(tenantId: string, { agentId, conversationId, toolNames }: { agentId: string; conversationId: string; toolNames: string[] }): Promise<PolicyInputs> {
    const [r]: Array<{
      halt: { scope: string; reason: string } | null;
      policy_version: number | null;
      tools: Array<Record<string, unknown>>;
      grants: Array<Record<string, unknown>>;
    }> = await this.uow.prepared(
      `SELECT
         (SELECT json_build_object('scope', scope, 'reason', reason) FROM halts
           WHERE tenant_id = $1 AND ((scope = 'tenant' AND scope_id = '') OR (scope = 'agent' AND scope_id = $2) OR (scope = 'conversation' AND scope_id = $3))
           ORDER BY CASE scope WHEN 'tenant' THEN 0 WHEN 'agent' THEN 1 ELSE 2 END LIMIT 1) AS halt,
         (SELECT version FROM policy_versions WHERE tenant_id = $1 ORDER BY version DESC LIMIT 1) AS policy_version,
         (SELECT coalesce(json_agg(${TOOL}), '[]') FROM tools WHERE tenant_id = $1 AND name = ANY($4::text[])) AS tools,
         (SELECT coalesce(json_agg(${GRANT}), '[]') FROM grants WHERE tenant_id = $1 AND tool_name = ANY($4::text[])) AS grants`,
      [tenantId, agentId, conversationId, toolNames],
    );
    const dated = <T>(o: Record<string, unknown>, keys: string[]): T => {
      const out = { ...o };
      for (const k of keys) out[k] = new Date(o[k] as string);
      return out as T;
    };
    return {
      halt: r.halt,
      policy: await this.policies.atVersion(tenantId, r.policy_version),
      tools: r.tools.map((t) => toolFromRow(dated<ToolRow>(t, ['createdAt', 'updatedAt']))),
      grants: r.grants.map((g) => grantFromRow(dated<GrantRow>(g, ['createdAt']))),
    };
  }
}
