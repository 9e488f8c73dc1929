import { Injectable } from '@nestjs/common';
import { Conversation } from '../../domain/conversation/conversation.aggregate';
import { HaltTarget } from '../../domain/halt/halt.aggregate';
import { ConversationRepository, LoadOptions, OpenStatus } from '../../application/ports';
import { ConversationMapper } from './conversation.mapper';
import { WAKE_CHANNEL } from '../waiting/pg-wake-listener';
import { ChainedRow, EventStore, PreparedAppend } from './event-store';
import { ConversationRow, ToolCallRow } from './orm-entities';
import { ItemOutcome, TenantGroupCommit } from './group-commit';
import { StaleAggregateError, TypeOrmUnitOfWork } from './unit-of-work';

/*
 * Hand-written SQL: this repository is on every command's path, where each statement is a round trip
 * and TypeORM's query building cost more CPU than the database did (docs/BENCHMARKS.md).
 * Columns are aliased to the row classes' property names, so one mapper serves both.
 */
const CONVERSATION_COLUMNS = `tenant_id AS "tenantId", id, agent_id AS "agentId", agent_owner AS "agentOwner", user_id AS "userId", user_roles AS "userRoles",
  user_name AS "userName", title, metadata, pending_count AS "pendingCount", created_at AS "createdAt", updated_at AS "updatedAt", version`;
const CALL_COLUMNS = `tenant_id AS "tenantId", id, conversation_id AS "conversationId", external_id AS "externalId", tool_name AS "toolName",
  arguments, annotations, reason, confidence, estimated_cost AS "estimatedCost", display, status, policy, approvers,
  expires_at AS "expiresAt", approvals, follow_up AS "followUp", next_step_at AS "nextStepAt", decision, execution, result, cancellation, created_at AS "createdAt", updated_at AS "updatedAt"`;
/** The recordset shape of a tool call row, for inserts and updates from one JSON parameter. */
const CALL_RECORD = `tenant_id text, id text, conversation_id text, external_id text, tool_name text, arguments jsonb, annotations jsonb,
  reason text, confidence double precision, estimated_cost double precision, display jsonb, status text, policy jsonb, approvers text[],
  expires_at timestamptz, approvals jsonb, follow_up jsonb, next_step_at timestamptz, decision jsonb, execution jsonb, result jsonb, cancellation jsonb, created_at timestamptz, updated_at timestamptz`;
const CALL_FIELDS = `tenant_id, id, conversation_id, external_id, tool_name, arguments, annotations, reason, confidence, estimated_cost,
  display, status, policy, approvers, expires_at, approvals, follow_up, next_step_at, decision, execution, result, cancellation, created_at, updated_at`;

/** New calls ($11) and changed calls ($12) of a conversation of tenant $1, as CTEs of the save statement. */
const CALL_WRITES = `
  ins AS (INSERT INTO tool_calls (${CALL_FIELDS}) SELECT ${CALL_FIELDS} FROM jsonb_to_recordset($11::jsonb) AS r(${CALL_RECORD}) RETURNING 1),
  upd AS (UPDATE tool_calls t SET external_id = r.external_id, tool_name = r.tool_name, arguments = r.arguments, annotations = r.annotations,
            reason = r.reason, confidence = r.confidence, estimated_cost = r.estimated_cost, display = r.display, status = r.status,
            policy = r.policy, approvers = r.approvers, expires_at = r.expires_at, approvals = r.approvals, follow_up = r.follow_up, next_step_at = r.next_step_at, decision = r.decision, execution = r.execution,
            result = r.result, cancellation = r.cancellation, updated_at = r.updated_at
          FROM jsonb_to_recordset($12::jsonb) AS r(${CALL_RECORD})
          WHERE t.tenant_id = $1 AND t.id = r.id RETURNING 1)`;

/**
 * The root row's write, as the first CTE (`conv`) of a save: $1–$10 are the row's fields and loaded version (see
 * `save`). A new conversation is inserted (it also takes created_at and agent_id, at the given parameters);
 * a loaded one is updated only if its version is still the loaded one.
 */
const rootInsert = (createdAt: string, agentId: string, agentOwner: string) =>
  `INSERT INTO conversations (tenant_id, id, user_id, user_roles, user_name, title, metadata, pending_count, created_at, updated_at, version, agent_id, agent_owner)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, ${createdAt}, $9, $10 + 1, ${agentId}, ${agentOwner}) RETURNING 1`;
const ROOT_UPDATE = `UPDATE conversations SET user_id = $3, user_roles = $4, user_name = $5, title = $6, metadata = $7, pending_count = $8,
     updated_at = $9, version = $10 + 1
   WHERE tenant_id = $1 AND id = $2 AND version = $10 RETURNING 1`;

/**
 * The single save of an optimistic unit (see `saveAtomically`): the version-checked root, the calls, the events
 * on the chain and the wake-up NOTIFYs. $1–$12 as `save`, $13 the events, $14 the wakes, then a new root's
 * created_at and agent_id.
 */
const atomicSave = (insert: boolean) => `WITH conv AS (${insert ? rootInsert('$15', '$16', '$17') : ROOT_UPDATE}),
       ${CALL_WRITES}
       SELECT tollgate_expect((SELECT count(*) FROM conv) = 1, 'conversation ' || $2 || ' changed since it was loaded') AS ok,
              (SELECT json_agg(a ORDER BY a.out_seq) FROM tollgate_append_events($1, $13::jsonb) a) AS chained,
              (SELECT count(pg_notify('${WAKE_CHANNEL}', p)) FROM unnest($14::text[]) AS p) AS notified`;

/**
 * Several conversations' saves of one tenant in one statement and one commit (the group commit). Every part
 * carries its save's number (\`item\`); the roots whose version still matches say which saves are written, and
 * nothing of the others is (they are told their conversation moved on, and run again). $1 tenant, $2 roots,
 * $3 new calls, $4 changed calls, $5 events in save order, $6 wake-ups.
 */
const BATCH_SAVE = `WITH conv AS (
    UPDATE conversations c SET user_id = r.user_id, user_roles = r.user_roles, user_name = r.user_name, title = r.title, metadata = r.metadata,
           pending_count = r.pending_count, updated_at = r.updated_at, version = r.version + 1
      FROM jsonb_to_recordset($2::jsonb) AS r(item int, id text, user_id text, user_roles text[], user_name text, title text, metadata jsonb,
                                              pending_count integer, updated_at timestamptz, version integer)
     WHERE c.tenant_id = $1 AND c.id = r.id AND c.version = r.version
    RETURNING r.item),
  ins AS (INSERT INTO tool_calls (${CALL_FIELDS}) SELECT ${CALL_FIELDS} FROM jsonb_to_recordset($3::jsonb) AS r(item int, ${CALL_RECORD})
           WHERE r.item IN (SELECT item FROM conv) RETURNING 1),
  upd AS (UPDATE tool_calls t SET external_id = r.external_id, tool_name = r.tool_name, arguments = r.arguments, annotations = r.annotations,
            reason = r.reason, confidence = r.confidence, estimated_cost = r.estimated_cost, display = r.display, status = r.status,
            policy = r.policy, approvers = r.approvers, expires_at = r.expires_at, approvals = r.approvals, follow_up = r.follow_up, next_step_at = r.next_step_at, decision = r.decision, execution = r.execution,
            result = r.result, cancellation = r.cancellation, updated_at = r.updated_at
          FROM jsonb_to_recordset($4::jsonb) AS r(item int, ${CALL_RECORD})
          WHERE t.tenant_id = $1 AND t.id = r.id AND r.item IN (SELECT item FROM conv) RETURNING 1)
  SELECT (SELECT coalesce(json_agg(item ORDER BY item), '[]') FROM conv) AS items,
         (SELECT json_agg(a ORDER BY a.out_seq) FROM tollgate_append_events($1,
            (SELECT coalesce(jsonb_agg(e.value ORDER BY e.n), '[]'::jsonb) FROM jsonb_array_elements($5::jsonb) WITH ORDINALITY AS e(value, n)
              WHERE (e.value->>'item')::int IN (SELECT item FROM conv))) a) AS chained,
         (SELECT count(pg_notify('${WAKE_CHANNEL}', w->>'payload')) FROM jsonb_array_elements($6::jsonb) AS w
           WHERE (w->>'item')::int IN (SELECT item FROM conv)) AS notified`;

/** The root's fields a save writes (the loaded version among them), as the batch statement's recordset names them. */
type RootRecord = Record<string, unknown> & { id: string; version: number };

/** One conversation's save waiting for its tenant's group commit. */
interface PendingSave {
  tenant: string;
  root: RootRecord;
  inserts: Array<Record<string, unknown>>;
  updates: Array<Record<string, unknown>>;
  prepared: PreparedAppend;
  /** A new conversation: inserted, not updated (never grouped). */
  created?: { at: Date; agentId: string; agentOwner: string | null };
}

/** $1–$12 of a save: the root's fields and loaded version, then the new and changed calls. */
function rootParams(tenant: string, r: RootRecord, inserts: unknown[], updates: unknown[]): unknown[] {
  return [
    tenant,
    r.id,
    r.user_id,
    r.user_roles,
    r.user_name,
    r.title,
    r.metadata,
    r.pending_count,
    r.updated_at,
    r.version,
    JSON.stringify(inserts),
    JSON.stringify(updates),
  ];
}

const OPEN_STATUSES: readonly OpenStatus[] = ['pending', 'approved', 'executed'];

/**
 * The calls of conversation (`tenant`, `conversation`: SQL expressions) in the given statuses, and any named by id
 * or external id, as branches of a UNION ALL that each have an index of their own: the statuses the partial
 * indexes `tool_calls_pending_by_conversation` and `tool_calls_open`, ids the primary key (behind an OFFSET 0
 * fence, so the conversation's other calls are never walked for them), external ids `tool_calls_external_id`.
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
  if (statuses.length === 0 || statuses.some((s) => !OPEN_STATUSES.includes(s)))
    throw new Error(`cannot load calls by status ${statuses.join(',')}`);
  const inStatuses = `status IN (${statuses.map((s) => `'${s}'`).join(', ')})`;
  const mine = `tenant_id = ${tenant} AND conversation_id = ${conversation}`;
  const branches = [`SELECT ${CALL_COLUMNS} FROM tool_calls WHERE ${mine} AND ${inStatuses}`];
  const params: unknown[] = [];
  let ids: string | undefined;
  if (calls.ids?.length) {
    ids = `$${first + params.push(calls.ids) - 1}::text[]`;
    branches.push(`SELECT * FROM (SELECT ${CALL_COLUMNS} FROM tool_calls WHERE tenant_id = ${tenant} AND id = ANY(${ids}) OFFSET 0) named
                    WHERE "conversationId" = ${conversation} AND NOT ${inStatuses.replace('status', 'named.status')}`);
  }
  if (calls.externalIds?.length) {
    const ext = `$${first + params.push(calls.externalIds) - 1}::text[]`;
    branches.push(
      `SELECT ${CALL_COLUMNS} FROM tool_calls WHERE ${mine} AND external_id = ANY(${ext}) AND NOT ${inStatuses}${ids ? ` AND id <> ALL(${ids})` : ''}`,
    );
  }
  return { sql: branches.join('\n UNION ALL\n '), params };
}

type CallSelection = Exclude<NonNullable<LoadOptions['calls']>, 'all'>;

/** A tool call read through json_agg: the same keys as the row class, dates as text. */
function callRowFromJson(j: Record<string, unknown>): ToolCallRow {
  const date = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));
  return {
    ...(j as unknown as ToolCallRow),
    createdAt: date(j.createdAt)!,
    updatedAt: date(j.updatedAt)!,
    expiresAt: date(j.expiresAt),
    nextStepAt: date(j.nextStepAt),
  };
}

/** A tool call row as JSON for jsonb_to_recordset (snake_case keys, as CALL_RECORD names them). */
function callRecord(r: ToolCallRow): Record<string, unknown> {
  return {
    tenant_id: r.tenantId,
    id: r.id,
    conversation_id: r.conversationId,
    external_id: r.externalId,
    tool_name: r.toolName,
    arguments: r.arguments,
    annotations: r.annotations,
    reason: r.reason,
    confidence: r.confidence,
    estimated_cost: r.estimatedCost,
    display: r.display,
    status: r.status,
    policy: r.policy,
    approvers: r.approvers,
    expires_at: r.expiresAt,
    approvals: r.approvals,
    follow_up: r.followUp,
    next_step_at: r.nextStepAt,
    decision: r.decision,
    execution: r.execution,
    result: r.result,
    cancellation: r.cancellation,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

@Injectable()
export class SqlConversationRepository implements ConversationRepository {
  /** Optimistic saves of one tenant share a statement and a commit when they arrive together. */
  private readonly commits = new TenantGroupCommit<PendingSave, ChainedRow[]>((tenant, saves) =>
    this.flush(tenant, saves),
  );
  /** Statements that wrote several saves at once, and how many saves they wrote (tests and benchmarks read it). */
  readonly grouped = { statements: 0, saves: 0 };

  constructor(
    private readonly uow: TypeOrmUnitOfWork,
    private readonly eventStore: EventStore,
  ) {}

  async findById(tenantId: string, id: string, opts: LoadOptions = {}): Promise<Conversation | null> {
    return this.load(`tenant_id = $1 AND id = $2`, [tenantId, id], opts);
  }

  /** Plain reads of the same call in flight share one load: a decision wakes every long-poll on it at once. */
  private readonly inFlight = new Map<string, Promise<Conversation | null>>();

  findByToolCallId(tenantId: string, toolCallId: string, opts: LoadOptions = {}): Promise<Conversation | null> {
    if (opts.lock || this.uow.inUnitOfWork) return this.loadByToolCallId(tenantId, toolCallId, opts);
    const key = `${tenantId}\u0000${toolCallId}`;
    let read = this.inFlight.get(key);
    if (!read) {
      read = this.loadByToolCallId(tenantId, toolCallId, opts).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, read);
    }
    return read;
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
        `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE ${where}${lock}`,
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
    beside?: { select: (param: (i: number) => string) => string; params: unknown[] },
  ): Promise<{ conversation: Conversation; extra: X } | null> {
    const only = opts.calls && opts.calls !== 'all' ? opts.calls : undefined;
    const named = only && callsInStatusesOrNamed('c.tenant_id', 'c.id', only, params.length + 1);
    const own = named ? [...params, ...named.params] : params;
    const [row]: Array<ConversationRow & { calls: Array<Record<string, unknown>>; extra?: X }> =
      await this.uow.prepared(
        `SELECT ${CONVERSATION_COLUMNS},
              (SELECT coalesce(json_agg(t ORDER BY t."createdAt", t.id), '[]') FROM (
                 ${named ? named.sql : `SELECT ${CALL_COLUMNS} FROM tool_calls WHERE tenant_id = c.tenant_id AND conversation_id = c.id`}) t) AS calls
              ${beside ? `, (${beside.select((i) => `$${own.length + 1 + i}`)}) AS extra` : ''}
         FROM conversations c WHERE ${where}`,
        beside ? [...own, ...beside.params] : own,
      );
    if (!row) return null;
    const { calls, extra, ...root } = row;
    return {
      conversation: ConversationMapper.toDomain(root, calls.map(callRowFromJson), { partial: !!only }),
      extra: extra as X,
    };
  }

  /**
   * `findById` without a lock, and beside it, in the same statement and snapshot, what `beside` selects over the
   * conversation's row `c` (one JSON value; `param(i)` names its i-th parameter). The propose command reads its
   * policy inputs this way: one round trip fewer on the hot path.
   */
  findByIdWith<X>(
    tenantId: string,
    id: string,
    opts: LoadOptions,
    beside: { select: (param: (i: number) => string) => string; params: unknown[] },
  ): Promise<{ conversation: Conversation; extra: X } | null> {
    return this.loadWith<X>(`tenant_id = $1 AND id = $2`, [tenantId, id], opts, beside);
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
          `SELECT ${CALL_COLUMNS} FROM tool_calls WHERE tenant_id = $1 AND conversation_id = $2 ORDER BY created_at, id`,
          [row.tenantId, row.id],
        );
    return ConversationMapper.toDomain(row, calls, { partial: !!only });
  }

  /** One statement: the root row (version-checked), new calls and changed calls. */
  async save(c: Conversation): Promise<void> {
    const { added, changed } = c.pullChangedCalls();
    const events = c.pullEvents();
    const row = ConversationMapper.toRow(c);
    const inserts = added.map((t) => callRecord(ConversationMapper.toCallRow(c.tenantId, t.snapshot())));
    const updates = changed.map((t) => callRecord(ConversationMapper.toCallRow(c.tenantId, t.snapshot())));
    const root = {
      id: row.id,
      user_id: row.userId,
      user_roles: row.userRoles,
      user_name: row.userName,
      title: row.title,
      metadata: row.metadata,
      pending_count: row.pendingCount,
      updated_at: row.updatedAt,
      version: row.version,
    };
    if (!this.uow.inTransaction) {
      // A refusal or a repeat changed nothing: writing would only bump the version and make racers retry.
      if (c.version > 0 && events.length === 0 && added.length === 0 && changed.length === 0) return;
      return this.saveAtomically(c, {
        tenant: c.tenantId,
        root,
        inserts,
        updates,
        prepared: this.eventStore.prepare(c.tenantId, events),
        created:
          c.version === 0 ? { at: c.createdAt, agentId: c.agentId, agentOwner: c.agentOwner ?? null } : undefined,
      });
    }
    // TypeORM's save() would not check the version: the update matches only the loaded version.
    const [res]: Array<{ conv: string }> = await this.uow.prepared(
      `WITH conv AS (${c.version === 0 ? rootInsert('$13', '$14', '$15') : ROOT_UPDATE}),
       ${CALL_WRITES}
       SELECT (SELECT count(*) FROM conv) AS conv`,
      [
        ...rootParams(c.tenantId, root, inserts, updates),
        ...(c.version === 0 ? [row.createdAt, row.agentId, row.agentOwner] : []),
      ],
    );
    // Nothing matched: the whole transaction rolls back, the calls written beside it with it.
    if (Number(res.conv) !== 1) throw new StaleAggregateError(`conversation ${c.id} changed since it was loaded`);
    c.version += 1;
    this.uow.collect(events);
  }

  /**
   * An optimistic unit of work's whole commit: the version-checked root, the calls, the events on the chain and
   * the wake-up NOTIFYs, in one statement. A moved-on conversation fails it (40001, retried from a fresh read),
   * so nothing of it is written. On PostgreSQL it goes through the tenant's group commit.
   */
  private async saveAtomically(c: Conversation, save: PendingSave): Promise<void> {
    // The embedded database is one session: nothing to group.
    const chained = this.uow.groupCommits ? await this.commits.submit(c.tenantId, save) : await this.saveOne(save);
    c.version += 1;
    this.uow.appended(this.eventStore.finish(save.prepared, chained));
  }

  private async saveOne(save: PendingSave): Promise<ChainedRow[]> {
    const [res]: Array<{ chained: ChainedRow[] | null }> = await this.uow.prepared(atomicSave(!!save.created), [
      ...rootParams(save.tenant, save.root, save.inserts, save.updates),
      JSON.stringify(save.prepared.records),
      save.prepared.wakes,
      ...(save.created ? [save.created.at, save.created.agentId, save.created.agentOwner] : []),
    ]);
    return res.chained ?? [];
  }

  /**
   * One tenant's waiting saves. Alone, a save is its own statement. Together, they are one statement: a save
   * whose conversation moved on is left out (and retried by its command); if the statement fails as a whole
   * (a duplicate external id, say), each save runs alone so that only the faulty one fails.
   */
  /** One statement per save, one after another: each answers its own outcome. */
  private async eachAlone(saves: PendingSave[]): Promise<Array<ItemOutcome<ChainedRow[]>>> {
    const out: Array<ItemOutcome<ChainedRow[]>> = [];
    for (const save of saves) {
      try {
        out.push({ ok: true, value: await this.saveOne(save) });
      } catch (error) {
        out.push({ ok: false, error });
      }
    }
    return out;
  }

  private async flush(tenant: string, saves: PendingSave[]): Promise<Array<ItemOutcome<ChainedRow[]>>> {
    // New conversations (inserts) are not grouped; they are rare on this path.
    if (saves.length === 1 || saves.some((s) => s.created)) return this.eachAlone(saves);
    const tag = <T extends object>(item: number, list: T[]) => list.map((x) => ({ item, ...x }));
    let res: { items: number[]; chained: ChainedRow[] | null };
    try {
      [res] = await this.uow.prepared(BATCH_SAVE, [
        tenant,
        JSON.stringify(saves.map((s, i) => ({ item: i, ...s.root }))),
        JSON.stringify(saves.flatMap((s, i) => tag(i, s.inserts))),
        JSON.stringify(saves.flatMap((s, i) => tag(i, s.updates))),
        JSON.stringify(saves.flatMap((s, i) => tag(i, s.prepared.records))),
        JSON.stringify(saves.flatMap((s, i) => s.prepared.wakes.map((payload) => ({ item: i, payload })))),
      ]);
    } catch {
      return this.eachAlone(saves);
    }
    const written = new Set(res.items);
    this.grouped.statements += 1;
    this.grouped.saves += written.size;
    const chained = res.chained ?? [];
    let next = 0;
    return saves.map((save, i) => {
      if (!written.has(i))
        return {
          ok: false,
          error: new StaleAggregateError(`conversation ${save.root.id} changed since it was loaded`),
        };
      const mine = chained.slice(next, next + save.prepared.events.length);
      next += save.prepared.events.length;
      return { ok: true, value: mine };
    });
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
}
