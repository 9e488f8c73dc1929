import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, Clock, CONVERSATIONS, LoadOptions, PolicyInputs, PolicyInputsReader } from '../../application/ports';
import { Conversation } from '../../domain/conversation/conversation.aggregate';
import { HaltScope } from '../../domain/halt/halt.aggregate';
import { HaltedPlace, haltThatApplies } from '../../domain/halt/rules/halt-that-applies';
import { GrantRow, ToolRow } from './orm-entities';
import { GRANT_APPLIES, grantFromRow } from './typeorm-grant.repository';
import { SqlConversationRepository } from './sql-conversation.repository';
import { TypeOrmPolicyRepository } from './typeorm-policy.repository';
import { toolFromRow } from './typeorm-tool.repository';
import { TypeOrmUnitOfWork } from './unit-of-work';

const TOOL = `json_build_object('tenantId', tenant_id, 'name', name, 'description', description, 'isReadOnly', is_read_only,
  'requiresApproval', requires_approval, 'destructive', destructive, 'registeredBy', registered_by, 'registeredByKind', registered_by_kind,
  'createdAt', created_at, 'updatedAt', updated_at, 'version', version, 'redact', redact)`;
const GRANT = `json_build_object('tenantId', tenant_id, 'id', id, 'toolName', tool_name, 'scope', scope, 'conversationId', conversation_id,
  'agentId', agent_id, 'createdBy', created_by, 'sourceToolCallId', source_tool_call_id, 'createdAt', created_at, 'expiresAt', expires_at, 'args', args,
  'effect', effect, 'uses', uses, 'usesLeft', uses_left)`;

/**
 * The inputs as one JSON value, for a conversation of an agent, of tool names, at an instant (SQL expressions or
 * parameters). Only grants that apply at `now` (the app Clock, as for tool calls' expiry) are read: a revoked or
 * expired grant is never weighed, and nothing caches them, so a revocation holds from the next proposal on any instance.
 */
const inputsJson = (
  tenant: string,
  agent: string,
  conversation: string,
  toolNames: string,
  now: string,
) => `json_build_object(
  'halts', (SELECT coalesce(json_agg(json_build_object('scope', scope, 'id', scope_id, 'reason', reason)), '[]') FROM halts
            WHERE tenant_id = ${tenant} AND ((scope = 'tenant' AND scope_id = '') OR (scope = 'agent' AND scope_id = ${agent}) OR (scope = 'conversation' AND scope_id = ${conversation}))),
  'policyVersion', (SELECT version FROM policy_versions WHERE tenant_id = ${tenant} ORDER BY version DESC LIMIT 1),
  'tools', (SELECT coalesce(json_agg(${TOOL}), '[]') FROM tools WHERE tenant_id = ${tenant} AND name = ANY(${toolNames}::text[])),
  'grants', (SELECT coalesce(json_agg(${GRANT}), '[]') FROM grants WHERE tenant_id = ${tenant} AND tool_name = ANY(${toolNames}::text[])
              AND ${GRANT_APPLIES('', `${now}::timestamptz`)}))`;

interface InputsJson {
  /** The halts that may cover the proposal (narrowed, not chosen: see `haltThatApplies`). */
  halts: Array<{ scope: HaltScope; id: string; reason: string }>;
  policyVersion: number | null;
  tools: Array<Record<string, unknown>>;
  grants: Array<Record<string, unknown>>;
}

/**
 * A proposal's halt, current policy version, registered tools and grants in one statement: four reads that
 * each cost a round trip on the auto-approve hot path. Outside a transaction they come in the same statement
 * as the conversation itself (`withConversation`); inside one (a command's locked retry) the halt is read after
 * the conversation is locked, as before.
 */
@Injectable()
export class SqlPolicyInputs implements PolicyInputsReader {
  constructor(
    private readonly uow: TypeOrmUnitOfWork,
    private readonly policies: TypeOrmPolicyRepository,
    // The one repository instance (its group commit is per instance), bound to the port.
    @Inject(CONVERSATIONS) private readonly conversations: SqlConversationRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async forProposal(
    tenantId: string,
    { agentId, conversationId, toolNames }: { agentId: string; conversationId: string; toolNames: string[] },
  ): Promise<PolicyInputs> {
    const [r]: Array<{ inputs: InputsJson }> = await this.uow.prepared(
      `SELECT ${inputsJson('$1', '$2', '$3', '$4', '$5')} AS inputs`,
      [tenantId, agentId, conversationId, toolNames, this.clock.now()],
    );
    return this.inputsFrom(tenantId, { agentId, conversationId }, r.inputs);
  }

  async withConversation(
    tenantId: string,
    conversationId: string,
    opts: LoadOptions,
    toolNames: string[],
  ): Promise<{ conversation: Conversation; inputs: PolicyInputs } | null> {
    if (this.uow.inTransaction) {
      const conversation = await this.conversations.findById(tenantId, conversationId, opts);
      return (
        conversation && {
          conversation,
          inputs: await this.forProposal(tenantId, { agentId: conversation.agentId, conversationId, toolNames }),
        }
      );
    }
    const read = await this.conversations.findByIdWith<InputsJson>(tenantId, conversationId, opts, {
      select: (param) => inputsJson('c.tenant_id', 'c.agent_id', 'c.id', param(0), param(1)),
      params: [toolNames, this.clock.now()],
    });
    return (
      read && {
        conversation: read.conversation,
        inputs: await this.inputsFrom(tenantId, { agentId: read.conversation.agentId, conversationId }, read.extra),
      }
    );
  }

  private async inputsFrom(tenantId: string, place: HaltedPlace, r: InputsJson): Promise<PolicyInputs> {
    const dated = <T>(o: Record<string, unknown>, keys: string[]): T => {
      const out = { ...o };
      for (const k of keys) out[k] = new Date(o[k] as string);
      return out as T;
    };
    const halt = haltThatApplies(r.halts, place);
    return {
      halt: halt && { scope: halt.scope, reason: halt.reason },
      policy: await this.policies.atVersion(tenantId, r.policyVersion),
      tools: r.tools.map((t) => toolFromRow(dated<ToolRow>(t, ['createdAt', 'updatedAt']))),
      grants: r.grants.map((g) =>
        grantFromRow(dated<GrantRow>(g, g.expiresAt ? ['createdAt', 'expiresAt'] : ['createdAt'])),
      ),
    };
  }
}
