import { Conversation } from '../../domain/conversation/conversation.aggregate';
import { ConversationMapper } from './conversation.mapper';
import { CONVERSATION_COLUMNS, TOOL_CALL_COLUMNS } from './conversation-columns';
import { ChainedRow, EventStore, PreparedAppend } from './event-store';
import { ItemOutcome, TenantGroupCommit } from './group-commit';
import type { ConversationRow } from './orm-entities';
import { StaleAggregateError, TypeOrmUnitOfWork } from './unit-of-work';
import { WAKE_CHANNEL } from '../waiting/pg-wake-listener';

/*
 * A save writes the root row (version-checked), the new calls and the changed calls in one statement, as CTEs:
 * `conv` (the root), `ins` and `upd` (the calls), each write only if `conv` matched. How the statement ends
 * depends on where the save runs (see `SqlConversationWriter.save`):
 * - in a transaction (a command that locked the conversation): it answers whether the root matched; the unit of
 *   work appends the events before its commit;
 * - alone (an optimistic unit: the statement is the whole commit): it also appends the events to the tenant's
 *   chain (`tollgate_append_events`) and sends the wake-ups, and fails with 40001 if the root moved on;
 * - together (the group commit: several optimistic saves of one tenant): one statement writes every save whose
 *   root still matches, and appends their events in save order.
 * The SQL functions `tollgate_append_events` and `tollgate_expect` are defined in migrations/
 * (1764300000000-hot-path.ts; `tollgate_append_events` as it is now in 1764900000003-halt-fence.ts).
 */

const ROOT_SAVED = CONVERSATION_COLUMNS.saved;
const ROOT_FIXED = CONVERSATION_COLUMNS.withRole('fixed');
const CALL_NAMES = TOOL_CALL_COLUMNS.names;

/**
 * A single save's root, as the first CTE: $1 tenant, $2 id, $3… the saved columns in the table's order, then
 * the loaded version. A new conversation is inserted (with the columns written once, at the parameters from
 * `fixed`); a loaded one is updated only if its version is still the loaded one.
 */
const VERSION = `$${ROOT_SAVED.length + 3}`;
const rootInsert = (fixed: string[]) =>
  `INSERT INTO conversations (tenant_id, id, ${ROOT_SAVED.map((c) => c.column).join(', ')}, version, ${ROOT_FIXED.map((c) => c.column).join(', ')})
   VALUES ($1, $2, ${ROOT_SAVED.map((_, i) => `$${i + 3}`).join(', ')}, ${VERSION} + 1, ${fixed.join(', ')}) RETURNING 1`;
const ROOT_UPDATE = `UPDATE conversations SET ${ROOT_SAVED.map((c, i) => `${c.column} = $${i + 3}`).join(', ')}, version = ${VERSION} + 1
   WHERE tenant_id = $1 AND id = $2 AND version = ${VERSION} RETURNING 1`;
/** The parameter numbers after a single save's root: its new calls, its changed calls, then what follows. */
const INSERTS = ROOT_SAVED.length + 4;
const UPDATES = INSERTS + 1;
const AFTER_CALLS = UPDATES + 1;
const placeholders = (from: number, n: number) => Array.from({ length: n }, (_, i) => `$${from + i}`);

/** Several saves' roots (the group commit): each record carries its save's number, `item`. */
const ROOTS_UPDATE = `UPDATE conversations c SET ${ROOT_SAVED.map((c) => `${c.column} = r.${c.column}`).join(', ')}, version = r.version + 1
      FROM jsonb_to_recordset($2::jsonb) AS r(item int, id text, ${ROOT_SAVED.map((c) => `${c.column} ${c.type}`).join(', ')}, version integer)
     WHERE c.tenant_id = $1 AND c.id = r.id AND c.version = r.version
    RETURNING r.item`;

/**
 * The calls' CTEs after `conv`: new calls from the recordset `inserts`, changed ones from `updates` (JSON
 * parameters). In the group commit each record carries its save's number and is written only if that save's root was.
 */
function callWrites(inserts: string, updates: string, grouped: boolean): string {
  const item = grouped ? 'item int, ' : '';
  return `
  ins AS (INSERT INTO tool_calls (${CALL_NAMES}) SELECT ${CALL_NAMES} FROM jsonb_to_recordset(${inserts}::jsonb) AS r(${item}${TOOL_CALL_COLUMNS.recordset})${grouped ? ' WHERE r.item IN (SELECT item FROM conv)' : ''} RETURNING 1),
  upd AS (UPDATE tool_calls t SET ${TOOL_CALL_COLUMNS.setFromRecordset}
          FROM jsonb_to_recordset(${updates}::jsonb) AS r(${item}${TOOL_CALL_COLUMNS.recordset})
          WHERE t.tenant_id = $1 AND t.id = r.id${grouped ? ' AND r.item IN (SELECT item FROM conv)' : ''} RETURNING 1)`;
}

/** How a save's statement ends (see the top of this file). */
type SaveKind = 'in-transaction' | 'alone';

/** A single save: `created` for a new conversation (inserted, with its fixed columns at the last parameters). */
function singleSave(kind: SaveKind, created: boolean): string {
  // Alone, the events and the wake-ups take the two parameters after the calls, before a new root's fixed columns.
  const fixedFrom = AFTER_CALLS + (kind === 'alone' ? 2 : 0);
  const root = created ? rootInsert(placeholders(fixedFrom, ROOT_FIXED.length)) : ROOT_UPDATE;
  const head = `WITH conv AS (${root}),${callWrites(`$${INSERTS}`, `$${UPDATES}`, false)}`;
  if (kind === 'in-transaction')
    return `${head}
       SELECT (SELECT count(*) FROM conv) AS conv`;
  const [events, wakes] = placeholders(AFTER_CALLS, 2);
  return `${head}
       SELECT tollgate_expect((SELECT count(*) FROM conv) = 1, 'conversation ' || $2 || ' changed since it was loaded') AS ok,
              (SELECT json_agg(a ORDER BY a.out_seq) FROM tollgate_append_events($1, ${events}::jsonb) a) AS chained,
              (SELECT count(pg_notify('${WAKE_CHANNEL}', p)) FROM unnest(${wakes}::text[]) AS p) AS notified`;
}

/** Statements are built once: their text names the prepared statement. */
const SAVES = {
  'in-transaction': { insert: singleSave('in-transaction', true), update: singleSave('in-transaction', false) },
  alone: { insert: singleSave('alone', true), update: singleSave('alone', false) },
};

/**
 * Several conversations' saves of one tenant in one statement and one commit. The roots whose version still
 * matches say which saves are written, and nothing of the others is (they are told their conversation moved on,
 * and run again). $1 tenant, $2 roots, $3 new calls, $4 changed calls, $5 events in save order, $6 wake-ups.
 */
const GROUPED_SAVE = `WITH conv AS (
    ${ROOTS_UPDATE}),${callWrites('$3', '$4', true)}
  SELECT (SELECT coalesce(json_agg(item ORDER BY item), '[]') FROM conv) AS items,
         (SELECT json_agg(a ORDER BY a.out_seq) FROM tollgate_append_events($1,
            (SELECT coalesce(jsonb_agg(e.value ORDER BY e.n), '[]'::jsonb) FROM jsonb_array_elements($5::jsonb) WITH ORDINALITY AS e(value, n)
              WHERE (e.value->>'item')::int IN (SELECT item FROM conv))) a) AS chained,
         (SELECT count(pg_notify('${WAKE_CHANNEL}', w->>'payload')) FROM jsonb_array_elements($6::jsonb) AS w
           WHERE (w->>'item')::int IN (SELECT item FROM conv)) AS notified`;

/**
 * The optimistic saves' statements and their parameters, exported so that bench/pg/proposal-writes.js runs exactly
 * what the service sends: `alone` for an existing conversation, `grouped` for the group commit.
 */
export const PROPOSAL_SAVES = {
  alone: SAVES.alone.update,
  grouped: GROUPED_SAVE,
  rootRecord: (row: ConversationRow) => rootRecord(row),
  aloneParams: (save: PendingSave, records: unknown[], wakes: string[]) => [
    ...singleParams(save),
    JSON.stringify(records),
    wakes,
  ],
};

/** The root's saved columns, id and loaded version, keyed by column (as the grouped statement's recordset names them). */
type RootRecord = Record<string, unknown> & { id: string; version: number };

/** One conversation's save, as its statement's parameters need it. */
interface PendingSave {
  tenant: string;
  root: RootRecord;
  inserts: Array<Record<string, unknown>>;
  updates: Array<Record<string, unknown>>;
  /** A new conversation (inserted, never grouped): its columns written once. */
  created?: unknown[];
}

/** A save that appends its events in its own statement. */
interface AtomicSave extends PendingSave {
  prepared: PreparedAppend;
}

function rootRecord(row: ConversationRow): RootRecord {
  const out: Record<string, unknown> = { id: row.id };
  for (const c of ROOT_SAVED) out[c.column] = row[c.key];
  out.version = row.version;
  return out as RootRecord;
}

/** A single save's parameters up to its calls: tenant, id, the saved columns, the loaded version, the calls. */
function singleParams(save: PendingSave): unknown[] {
  return [
    save.tenant,
    save.root.id,
    ...ROOT_SAVED.map((c) => save.root[c.column]),
    save.root.version,
    JSON.stringify(save.inserts),
    JSON.stringify(save.updates),
  ];
}

/** Writes the conversation aggregate: the repository's `save`, and the group commit behind it. */
export class SqlConversationWriter {
  /** Optimistic saves of one tenant share a statement and a commit when they arrive together. */
  private readonly commits = new TenantGroupCommit<AtomicSave, ChainedRow[]>((tenant, saves) =>
    this.flush(tenant, saves),
  );
  /** Statements that wrote several saves at once, and how many saves they wrote (tests and benchmarks read it). */
  readonly grouped = { statements: 0, saves: 0 };

  constructor(
    private readonly uow: TypeOrmUnitOfWork,
    private readonly eventStore: EventStore,
  ) {}

  async save(c: Conversation): Promise<void> {
    const { added, changed } = c.pullChangedCalls();
    const events = c.pullEvents();
    const row = ConversationMapper.toRow(c);
    const callRecord = (t: (typeof added)[number]) =>
      TOOL_CALL_COLUMNS.toRecord(ConversationMapper.toCallRow(c.tenantId, t.snapshot()));
    const save: PendingSave = {
      tenant: c.tenantId,
      root: rootRecord(row),
      inserts: added.map(callRecord),
      updates: changed.map(callRecord),
      created: c.version === 0 ? ROOT_FIXED.map((col) => row[col.key]) : undefined,
    };
    if (this.uow.inTransaction) {
      await this.saveInTransaction(c, save);
      this.uow.collect(events);
      return;
    }
    // A refusal or a repeat changed nothing: writing would only bump the version and make racers retry.
    if (c.version > 0 && events.length === 0 && added.length === 0 && changed.length === 0) return;
    const atomic = { ...save, prepared: this.eventStore.prepare(c.tenantId, events) };
    // The embedded database is one session: nothing to group.
    const chained = this.uow.groupCommits
      ? await this.commits.submit(c.tenantId, atomic)
      : await this.saveAlone(atomic);
    c.version += 1;
    this.uow.appended(this.eventStore.finish(atomic.prepared, chained));
  }

  /** In a command's transaction: TypeORM's save() would not check the version; this update matches only the loaded one. */
  private async saveInTransaction(c: Conversation, save: PendingSave): Promise<void> {
    const [res]: Array<{ conv: string }> = await this.uow.prepared(
      save.created ? SAVES['in-transaction'].insert : SAVES['in-transaction'].update,
      [...singleParams(save), ...(save.created ?? [])],
    );
    // Nothing matched: the whole transaction rolls back, the calls written beside it with it.
    if (Number(res.conv) !== 1) throw new StaleAggregateError(`conversation ${c.id} changed since it was loaded`);
    c.version += 1;
  }

  /**
   * An optimistic unit of work's whole commit: the version-checked root, the calls, the events on the chain and
   * the wake-up NOTIFYs, in one statement. A moved-on conversation fails it (40001, retried from a fresh read),
   * so nothing of it is written.
   */
  private async saveAlone(save: AtomicSave): Promise<ChainedRow[]> {
    const [res]: Array<{ chained: ChainedRow[] | null }> = await this.uow.prepared(
      save.created ? SAVES.alone.insert : SAVES.alone.update,
      [...singleParams(save), JSON.stringify(save.prepared.records), save.prepared.wakes, ...(save.created ?? [])],
    );
    return res.chained ?? [];
  }

  /** One statement per save, one after another: each answers its own outcome. */
  private async eachAlone(saves: AtomicSave[]): Promise<Array<ItemOutcome<ChainedRow[]>>> {
    const out: Array<ItemOutcome<ChainedRow[]>> = [];
    for (const save of saves) {
      try {
        out.push({ ok: true, value: await this.saveAlone(save) });
      } catch (error) {
        out.push({ ok: false, error });
      }
    }
    return out;
  }

  /**
   * One tenant's waiting saves. Alone, a save is its own statement. Together, they are one statement: a save
   * whose conversation moved on is left out (and retried by its command); if the statement fails as a whole
   * (a duplicate external id, say), each save runs alone so that only the faulty one fails.
   */
  private async flush(tenant: string, saves: AtomicSave[]): Promise<Array<ItemOutcome<ChainedRow[]>>> {
    // New conversations (inserts) are not grouped; they are rare on this path.
    if (saves.length === 1 || saves.some((s) => s.created)) return this.eachAlone(saves);
    const tag = <T extends object>(item: number, list: T[]) => list.map((x) => ({ item, ...x }));
    let res: { items: number[]; chained: ChainedRow[] | null };
    try {
      [res] = await this.uow.prepared(GROUPED_SAVE, [
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
}
