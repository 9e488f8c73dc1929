import { Injectable } from '@nestjs/common';
import { ListFilter, ReadModel } from '../../application/ports';
import { ApprovalView, ConversationView, Page, toolCallView, toolView } from '../../application/views/views';
import { personReferencesOf, rolesAmong } from '../../domain/policy/assignee';
import { Principal, hasAnyRole, isAgent } from '../../domain/shared/actor';
import { toolCallState, userFromColumns } from './conversation.mapper';
import { TOOL_CALL_COLUMNS } from './conversation-columns';
import type { ToolCallRow } from './orm-entities';
import { ToolRow } from './orm-entities';
import { toolFromRow } from './typeorm-tool.repository';
import { decodeCursor, encodeCursor, type CursorKey } from './keyset-cursor';
import { TypeOrmUnitOfWork } from './unit-of-work';

type Key = CursorKey;

/** Listed among approvers, these never decide (rules/who-may-decide): a delegator's roles lend them nothing. */
const NEVER_DECIDE: readonly string[] = ['requester', 'auditor', 'agent'];

function page<R, V>(rows: R[], limit: number, key: (r: R) => Key, view: (r: R) => V): Page<V> {
  const more = rows.length > limit;
  const items = rows.slice(0, limit);
  return { items: items.map(view), nextCursor: more ? encodeCursor(key(items[items.length - 1])) : null };
}

const HALTED = `EXISTS (SELECT 1 FROM halts h WHERE h.tenant_id = c.tenant_id AND (
  (h.scope = 'tenant' AND h.scope_id = '') OR (h.scope = 'agent' AND h.scope_id = c.agent_id) OR (h.scope = 'conversation' AND h.scope_id = c.id)))`;

@Injectable()
export class TypeOrmReadModel implements ReadModel {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  async listConversations(
    p: Principal,
    f: ListFilter & { status?: 'active' | 'blocked' | 'halted' },
  ): Promise<Page<ConversationView>> {
    const where = ['c.tenant_id = $1'];
    const params: unknown[] = [p.tenant];
    // Agents see their own; requesters theirs; approvers, admins and auditors the tenant's.
    if (isAgent(p)) where.push(`c.agent_id = $${params.push(p.id)}`);
    else if (!hasAnyRole(p, ['approver', 'admin', 'auditor'])) where.push(`c.user_id = $${params.push(p.id)}`);
    if (f.status === 'halted') where.push(HALTED);
    if (f.status === 'blocked') where.push(`c.pending_count > 0 AND NOT ${HALTED}`);
    if (f.status === 'active') where.push(`c.pending_count = 0 AND NOT ${HALTED}`);
    const after = decodeCursor(f.cursor);
    if (after) where.push(`(c.created_at, c.id) > ($${params.push(after[0])}::timestamptz, $${params.push(after[1])})`);
    const rows: any[] = await this.uow
      .manager()
      .query(
        `SELECT c.*, ${HALTED} AS halted FROM conversations c WHERE ${where.join(' AND ')} ORDER BY c.created_at, c.id LIMIT $${params.push(f.limit + 1)}`,
        params,
      );
    return page(
      rows,
      f.limit,
      (r) => [new Date(r.created_at).toISOString(), r.id],
      (r) => ({
        id: r.id,
        agentId: r.agent_id,
        user: userFromColumns(r.user_id, r.user_roles, r.user_name, r.user_assurance),
        title: r.title,
        metadata: r.metadata ?? {},
        status: r.halted ? 'halted' : r.pending_count > 0 ? 'blocked' : 'active',
        pendingCount: r.pending_count,
        createdAt: new Date(r.created_at).toISOString(),
        updatedAt: new Date(r.updated_at).toISOString(),
      }),
    );
  }

  async listApprovals(
    p: Principal,
    f: ListFilter & { status: string },
    delegators: readonly Principal[] = [],
  ): Promise<Page<ApprovalView>> {
    // The calls this person may decide: a role among the approvers, a `person:` entry naming them (by id or
    // email, stored lowercased), or `requester` and it is their conversation. One array for the first two keeps
    // the plan on tool_calls_by_status; a role spelt `person:…` is no name (rules/who-may-decide). A delegate's
    // delegators (whose delegation holds now) add what they may decide: their roles, names and conversations,
    // to the same arrays, so the plan stays the same (test/integration/query-indexes.int-spec.ts).
    const lent = delegators.flatMap((d) => [
      ...rolesAmong(d.roles).filter((r) => !NEVER_DECIDE.includes(r)),
      ...personReferencesOf(d),
    ]);
    const names = [...new Set([...rolesAmong(p.roles), ...personReferencesOf(p), ...lent])];
    const requesters = [p.id, ...delegators.map((d) => d.id)];
    const params: unknown[] = [p.tenant, f.status, names, requesters];
    const where = [
      `t.tenant_id = $1`,
      `t.status = $2`,
      `t.approvers IS NOT NULL`,
      `(t.approvers && $3::text[] OR ('requester' = ANY(t.approvers) AND c.user_id = ANY($4::text[])))`,
    ];
    const after = decodeCursor(f.cursor);
    if (after) where.push(`(t.created_at, t.id) > ($${params.push(after[0])}::timestamptz, $${params.push(after[1])})`);
    const rows: any[] = await this.uow.manager().query(
      `SELECT t.id FROM tool_calls t JOIN conversations c ON c.tenant_id = t.tenant_id AND c.id = t.conversation_id
        WHERE ${where.join(' AND ')} ORDER BY t.created_at, t.id LIMIT $${params.push(f.limit + 1)}`,
      params,
    );
    const ids = rows.map((r) => r.id);
    if (ids.length === 0) return { items: [], nextCursor: null };
    const calls: ToolCallRow[] = await this.uow
      .manager()
      .query(
        `SELECT ${TOOL_CALL_COLUMNS.select} FROM tool_calls WHERE tenant_id = $1 AND id = ANY($2::text[]) ORDER BY created_at, id`,
        [p.tenant, ids],
      );
    const convIds = [...new Set(calls.map((c) => c.conversationId))];
    const convs: any[] = await this.uow
      .manager()
      .query(
        `SELECT id, agent_id, user_id, user_roles, user_name, user_assurance, title FROM conversations WHERE tenant_id = $1 AND id = ANY($2::text[])`,
        [p.tenant, convIds],
      );
    const byId = new Map(convs.map((c) => [c.id, c]));
    return page(
      calls,
      f.limit,
      (r) => [r.createdAt.toISOString(), r.id],
      (r) => {
        const c = byId.get(r.conversationId);
        return {
          ...toolCallView(toolCallState(r)),
          conversation: {
            id: c.id,
            agentId: c.agent_id,
            user: userFromColumns(c.user_id, c.user_roles, c.user_name, c.user_assurance),
            title: c.title,
          },
        };
      },
    );
  }

  async listTools(tenantId: string, f: ListFilter) {
    const qb = this.uow
      .manager()
      .getRepository(ToolRow)
      .createQueryBuilder('t')
      .where('t.tenant_id = :tenantId', { tenantId });
    const after = decodeCursor(f.cursor);
    if (after) qb.andWhere('t.name > :name', { name: after[1] });
    const rows = await qb
      .orderBy('t.name', 'ASC')
      .limit(f.limit + 1)
      .getMany();
    return page(
      rows,
      f.limit,
      (r) => ['', r.name],
      (r) => toolView(toolFromRow(r)),
    );
  }
}
