import { Conversation } from '../../domain/conversation/conversation.aggregate';
import { HaltTarget } from '../../domain/halt/halt.aggregate';
import { ConversationWithCalls, LoadOptions, OpenStatus, PENDING } from '../../application/ports';
import { ConversationMapper, toolCallState } from './conversation.mapper';
import { CONVERSATION_COLUMNS, TOOL_CALL_COLUMNS } from './conversation-columns';
import type { ConversationRow, ToolCallRow } from './orm-entities';
import { TypeOrmUnitOfWork } from './unit-of-work';

const ROOT = CONVERSATION_COLUMNS.select;
const CALLS = TOOL_CALL_COLUMNS.select;

const OPEN_STATUSES: readonly OpenStatus[] = ['pending', 'approved', 'executed'];

type CallSelection = Exclude<NonNullable<LoadOptions['calls']>, 'all'>;

/** SQL over the conversation's row `c` to read beside it, as one JSON value (`param(i)`: its i-th parameter). */
export interface Beside {
  select: (param: (i: number) => string) => string;
  params: unknown[];
}

/**
 * The calls of conversation (`tenant`, `conversation`: SQL expressions) in the given statuses, and any named by id
 * or external id, as branches of a UNION ALL that each have an index of their own: the statuses the partial
 * indexes `tool_calls_pending_by_conversation` and `tool_calls_open`, ids the primary key, external ids
 * `tool_calls_external_id`. Named calls are looked up one by one from their array (`unnest`, then a LATERAL
 * subquery that LIMIT keeps from being flattened into a join), an equality on every column of the index: with
 * `= ANY(array)`, or as a join, PostgreSQL matched them as a filter over the conversation's every call (its
 * statistics said a conversation holds one or two), so each SDK proposal (it sends an external id) walked the
 * whole conversation: 1,084 buffers at 1,000 calls.
 * A branch is there only when the command names such calls; its array is the next parameter after `first`.
 * One WHERE with ORs planned well with the first values it saw, but the generic plan PostgreSQL cached for it
 * later walked every call of the tenant (`tool_calls_by_status`) once the table had grown: 4× the PostgreSQL
 * CPU per proposal, measured. The statuses are written into the text (constants, checked here), so each
 * shape is its own prepared statement.
 */
function callsInStatusesOrNamed(
  tenant: string,
  conversation: string,
  calls: CallSelection,
  first: number,
): { sql: string; params: unknown[] } {
  const { statuses } = calls;
  // No statuses: only the named calls (a read of some calls by external id), so something must be named.
  const named = !!calls.ids?.length || !!calls.externalIds?.length;
  if ((statuses.length === 0 && !named) || statuses.some((s) => !OPEN_STATUSES.includes(s)))
    throw new Error(`cannot load calls by status ${statuses.join(',')}`);
  const inStatuses = `status IN (${statuses.map((s) => `'${s}'`).join(', ')})`;
  // A named call the status branch already holds is left out of its own branch.
  const notInStatuses = (column: string) => (statuses.length ? ` AND NOT ${inStatuses.replace('status', column)}` : '');
  const mine = `tenant_id = ${tenant} AND conversation_id = ${conversation}`;
  const branches = statuses.length ? [`SELECT ${CALLS} FROM tool_calls WHERE ${mine} AND ${inStatuses}`] : [];
  const params: unknown[] = [];
  let ids: string | undefined;
  if (calls.ids?.length) {
    ids = `$${first + params.push(calls.ids) - 1}::text[]`;
    // By id alone (the primary key); its conversation and status are checked on the row found.
    branches.push(`SELECT t.* FROM unnest(${ids}) AS named(named_id), LATERAL (
                      SELECT ${CALLS} FROM tool_calls WHERE tenant_id = ${tenant} AND id = named.named_id LIMIT 1) t
                    WHERE t."conversationId" = ${conversation}${notInStatuses('t.status')}`);
  }
  if (calls.externalIds?.length) {
    const ext = `$${first + params.push(calls.externalIds) - 1}::text[]`;
    branches.push(
      `SELECT t.* FROM unnest(${ext}) AS named(named_external_id), LATERAL (
          SELECT ${CALLS} FROM tool_calls WHERE ${mine} AND external_id = named.named_external_id
             ${notInStatuses('status')}${ids ? ` AND id <> ALL(${ids})` : ''} LIMIT 1) t`,
    );
  }
  return { sql: branches.join('\n UNION ALL\n '), params };
}

/**
 * Every read of the conversation aggregate: a conversation with the calls a command or a view needs, in one
 * statement (one snapshot) without a lock, in two under one (see `withCalls`); and the sweepers' and halts' scans.
 * Columns are aliased to the row classes' property names (conversation-columns.ts), so one mapper serves both.
 */
export class SqlConversationReader {
  /** Plain reads of the same call in flight share one load: a decision wakes every long-poll on it at once. */
  private readonly inFlight = new Map<string, Promise<Conversation | null>>();

  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  findById(tenantId: string, id: string, opts: LoadOptions): Promise<Conversation | null> {
    return this.load(`tenant_id = $1 AND id = $2`, [tenantId, id], opts);
  }

  findByToolCallId(tenantId: string, toolCallId: string, opts: LoadOptions): Promise<Conversation | null> {
    if (opts.lock || this.uow.inUnitOfWork) return this.loadByToolCallId(tenantId, toolCallId, opts);
    const key = `${tenantId}\u0000${toolCallId}`;
    let read = this.inFlight.get(key);
    if (!read) {
      read = this.loadByToolCallId(tenantId, toolCallId, opts).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, read);
    }
    return read;
  }

  /**
   * `findById` without a lock, and beside it, in the same statement and snapshot, what `beside` selects over the
   * conversation's row `c`. The propose command reads its policy inputs this way: one round trip fewer on the hot path.
   */
  findByIdWith<X>(
    tenantId: string,
    id: string,
    opts: LoadOptions,
    beside: Beside,
  ): Promise<{ conversation: Conversation; extra: X } | null> {
    return this.loadWith<X>(`tenant_id = $1 AND id = $2`, [tenantId, id], opts, beside);
  }

  /**
   * The conversation and every call it holds, in one statement (one snapshot): what reads list. With
   * `externalIds`, only the calls of those external ids, each looked up on its index (`callsInStatusesOrNamed`):
   * the read costs the same whatever the conversation's length.
   */
  async findWithCalls(
    tenantId: string,
    id: string,
    only?: { externalIds: readonly string[] },
  ): Promise<ConversationWithCalls | null> {
    const externalIds = only && [...new Set(only.externalIds)];
    if (externalIds?.length === 0) throw new Error('findWithCalls: name at least one external id');
    // The pending calls come too, named or not: the conversation's status and pending count are made from them.
    const opts: LoadOptions = externalIds ? { calls: { statuses: PENDING, externalIds } } : {};
    const read = await this.loadWith(`tenant_id = $1 AND id = $2`, [tenantId, id], opts);
    if (!read) return null;
    const named = externalIds && new Set(externalIds);
    const rows = named
      ? read.rows.filter((r) => r.externalId !== undefined && r.externalId !== null && named.has(r.externalId))
      : read.rows;
    return { conversation: read.conversation, toolCalls: rows.map(toolCallState) };
  }

  async findWithOpenCalls(tenantId: string, target: HaltTarget): Promise<string[]> {
    const params: unknown[] = [tenantId];
    const scope =
      target.scope === 'agent'
        ? `AND c.agent_id = $${params.push(target.id)}`
        : target.scope === 'conversation'
          ? `AND c.id = $${params.push(target.id)}`
          : '';
    const rows: Array<{ id: string }> = await this.uow.manager().query(
      `SELECT c.id FROM conversations c
        WHERE c.tenant_id = $1 ${scope}
          AND EXISTS (SELECT 1 FROM tool_calls t WHERE t.tenant_id = c.tenant_id AND t.conversation_id = c.id AND t.status IN ('pending', 'approved'))
        ORDER BY c.id`,
      params,
    );
    return rows.map((r) => r.id);
  }

  async findWithDueExpiries(now: Date, limit: number) {
    const rows: Array<{ tenant_id: string; conversation_id: string }> = await this.uow.manager().query(
      `SELECT tenant_id, conversation_id FROM tool_calls WHERE status = 'pending' AND expires_at <= $1
         UNION
         SELECT tenant_id, conversation_id FROM tool_calls WHERE status = 'pending' AND next_step_at <= $1
         LIMIT $2`,
      [now, limit],
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, conversationId: r.conversation_id }));
  }

  private loadByToolCallId(tenantId: string, toolCallId: string, opts: LoadOptions): Promise<Conversation | null> {
    return this.load(
      `tenant_id = $1 AND id = (SELECT conversation_id FROM tool_calls WHERE tenant_id = $1 AND id = $2)`,
      [tenantId, toolCallId],
      opts,
    );
  }

  private async load(where: string, params: [string, string], opts: LoadOptions): Promise<Conversation | null> {
    const lock = this.lockClause(opts);
    if (lock) {
      const [row]: ConversationRow[] = await this.uow.prepared(
        `SELECT ${ROOT} FROM conversations WHERE ${where}${lock}`,
        params,
      );
      return row ? this.withCalls(row, opts) : null;
    }
    return (await this.loadWith(where, params, opts))?.conversation ?? null;
  }

  /**
   * Without a lock, one statement (one snapshot) reads the root and its calls together, and `beside` (SQL
   * expressions over the row `c`, as columns `extra`; its parameters after the load's own) with them.
   */
  private async loadWith<X>(
    where: string,
    params: [string, string],
    opts: LoadOptions,
    beside?: Beside,
  ): Promise<{ conversation: Conversation; rows: ToolCallRow[]; extra: X } | null> {
    const only = opts.calls && opts.calls !== 'all' ? opts.calls : undefined;
    const named = only && callsInStatusesOrNamed('c.tenant_id', 'c.id', only, params.length + 1);
    const own = named ? [...params, ...named.params] : params;
    const [row]: Array<ConversationRow & { calls: Array<Record<string, unknown>>; extra?: X }> =
      await this.uow.prepared(
        `SELECT ${ROOT},
              (SELECT coalesce(json_agg(t ORDER BY t."createdAt", t.id), '[]') FROM (
                 ${named ? named.sql : `SELECT ${CALLS} FROM tool_calls WHERE tenant_id = c.tenant_id AND conversation_id = c.id`}) t) AS calls
              ${beside ? `, (${beside.select((i) => `$${own.length + 1 + i}`)}) AS extra` : ''}
         FROM conversations c WHERE ${where}`,
        beside ? [...own, ...beside.params] : own,
      );
    if (!row) return null;
    const { calls, extra, ...root } = row;
    const rows = calls.map((j) => TOOL_CALL_COLUMNS.fromJson(j));
    return { conversation: ConversationMapper.toDomain(root, rows), rows, extra: extra as X };
  }

  private lockClause(opts: LoadOptions): string {
    // Commands lock the root row: concurrent decisions and claims on one conversation queue here.
    if (!opts.lock || !this.uow.inTransaction) return '';
    return opts.lock === 'skip-locked' ? ' FOR UPDATE SKIP LOCKED' : ' FOR UPDATE';
  }

  /**
   * The calls are read in a statement of their own, after the root row is locked: a statement that waited
   * for the lock would otherwise see the newest root row beside calls from its older snapshot.
   */
  private async withCalls(row: ConversationRow, opts: LoadOptions): Promise<Conversation> {
    const only = opts.calls && opts.calls !== 'all' ? opts.calls : undefined;
    const named = only && callsInStatusesOrNamed('$1', '$2', only, 3);
    const calls: ToolCallRow[] = named
      ? await this.uow.prepared(`SELECT * FROM (${named.sql}) t ORDER BY "createdAt", id`, [
          row.tenantId,
          row.id,
          ...named.params,
        ])
      : await this.uow.prepared(
          `SELECT ${CALLS} FROM tool_calls WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY created_at, id`,
          [row.tenantId, row.id],
        );
    return ConversationMapper.toDomain(row, calls);
  }
}
