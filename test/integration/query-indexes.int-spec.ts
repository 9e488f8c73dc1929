/**
 * Each read of `tool_calls`, `events` and `conversations` uses the index it was written for, now that the write
 * path no longer pays for indexes no read needs (migration 1764900000000). The statements are the ones the real
 * code sends (captured at the pg driver), EXPLAINed with their parameters, on PostgreSQL and on PGlite.
 */
import { Client } from 'pg';
import { AUDIT_LOG } from '../../src/application/ports/audit-log.port';
import { SqlAuditLog } from '../../src/infrastructure/persistence/sql-audit-log';
import { SqlConversationReader } from '../../src/infrastructure/persistence/sql-conversation.reader';
import { TypeOrmReadModel } from '../../src/infrastructure/persistence/typeorm-read-model';
import { TypeOrmUnitOfWork } from '../../src/infrastructure/persistence/unit-of-work';
import { READ_MODEL } from '../../src/application/ports';
import { startTestServer, TestServer } from '../support/server';
import { UnusedWriteIndexes1764900000000 } from '../../migrations/1764900000000-unused-write-indexes';
import { AnalyzeWhatPlansUse1764900000001 } from '../../migrations/1764900000001-analyze-what-plans-use';

jest.setTimeout(120_000);

let server: TestServer;
let audit: SqlAuditLog;
let reads: TypeOrmReadModel;
let reader: SqlConversationReader;

const sql = <T = any>(text: string, params: unknown[] = []): Promise<T[]> => server.dataSource.query(text, params);

/** Statements sent through any pg Client while `capture` runs. */
const sent: Array<{ text: string; values: unknown[] }> = [];
let capturing = false;
const query = Client.prototype.query;

beforeAll(() => {
  Client.prototype.query = function (this: Client, config: any, values?: any, callback?: any) {
    if (capturing) {
      const text = typeof config === 'string' ? config : config?.text;
      if (typeof text === 'string')
        sent.push({ text, values: (typeof config === 'object' && config.values) || values });
    }
    return (query as any).call(this, config, values, callback);
  } as typeof query;
});

afterAll(() => {
  Client.prototype.query = query;
});

async function capture(run: () => Promise<unknown>): Promise<Array<{ text: string; values: unknown[] }>> {
  sent.length = 0;
  capturing = true;
  try {
    await run();
  } finally {
    capturing = false;
  }
  return sent.filter((s) => /\b(tool_calls|events|conversations)\b/.test(s.text) && /^\s*(SELECT|WITH)/i.test(s.text));
}

interface Scan {
  node: string;
  /** The table, partitions of `events` named `events`; `partition` is the table itself. */
  relation?: string;
  partition?: string;
  index?: string;
}

/** Every scan node of the statement's plan: a bitmap scan as its index scan (the index) and heap scan (the table). */
async function scans(statement: { text: string; values: unknown[] }): Promise<Scan[]> {
  const [row] = await sql(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.values ?? []);
  const plan = typeof row['QUERY PLAN'] === 'string' ? JSON.parse(row['QUERY PLAN']) : row['QUERY PLAN'];
  const out: Scan[] = [];
  const walk = (node: any) => {
    if (/Scan/.test(node['Node Type']) && (node['Relation Name'] || node['Index Name'])) {
      const partition = node['Relation Name'] as string | undefined;
      out.push({
        node: node['Node Type'],
        partition,
        relation: partition?.replace(/^events_(\d{4}_\d{2}|default)$/, 'events'),
        index: node['Index Name'] && indexName(node['Index Name']),
      });
    }
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan[0].Plan);
  return out;
}

/**
 * The indexes the statements read. A sequential scan of one of the three tables fails the test, unless it
 * holds almost nothing (an empty month of `events`, where a sequential scan is the right plan).
 */
async function indexesOf(run: () => Promise<unknown>): Promise<string[]> {
  const statements = await capture(run);
  expect(statements.length).toBeGreaterThan(0);
  const used = new Set<string>();
  for (const s of statements) {
    for (const scan of await scans(s)) {
      if (scan.index) used.add(scan.index);
      if (scan.node !== 'Seq Scan' || !['tool_calls', 'events', 'conversations'].includes(scan.relation!)) continue;
      const [{ rows }] = await sql(`SELECT reltuples AS rows FROM pg_class WHERE relname = $1`, [scan.partition]);
      expect({ sql: s.text, seqScan: scan.partition, rows: Math.max(0, Number(rows)) }).toMatchObject({ rows: 0 });
    }
  }
  return [...used].sort();
}

/** A partition's index is named after its parent's (events_2026_11_tenant_id_tool_name_seq_idx): map it back. */
function indexName(name: string): string {
  const partition: Record<string, string> = {
    pkey: 'events_pkey',
    tenant_id_conversation_id_seq_idx: 'events_by_conversation',
    tenant_id_tool_call_id_seq_idx: 'events_by_tool_call',
    tenant_id_type_seq_idx: 'events_by_type',
    tenant_id_at_seq_idx: 'events_by_time',
    tenant_id_tool_name_seq_idx: 'events_by_tool_name',
    tenant_id_expr_seq_idx: 'events_by_actor',
  };
  const m = /^events_(?:\d{4}_\d{2}|default)_(.+)$/.exec(name);
  return (m && partition[m[1]]) || name;
}

beforeAll(async () => {
  server = await startTestServer({ sweepIntervalMs: 0 });
  audit = server.app.get(AUDIT_LOG, { strict: false });
  reads = server.app.get(READ_MODEL, { strict: false });
  reader = new SqlConversationReader(server.app.get(TypeOrmUnitOfWork, { strict: false }));
  // Two tenants; 20,000 calls and 20,000 events each over the last 80 days (a few monthly partitions).
  await sql(`SELECT tollgate_events_ensure_partitions(now() - interval '90 days', now() + interval '1 month')`);
  await sql(`
    INSERT INTO conversations (tenant_id, id, agent_id, user_id, user_roles, user_name, title, metadata, pending_count,
                               created_at, updated_at, version)
    SELECT t, 'c' || i, 'agent-' || (i % 10), 'user-' || (i % 20), '{approver}', 'U', 'title', '{}', 0,
           now() - i * interval '1 minute', now(), 1
      FROM unnest(ARRAY['acme', 'globex']) t, generate_series(1, 400) i`);
  await sql(`
    INSERT INTO tool_calls (tenant_id, id, conversation_id, external_id, tool_name, arguments, status, policy, approvers,
                            expires_at, next_step_at, created_at, updated_at)
    SELECT t, 'tc' || i, 'c' || (i % 400 + 1), CASE WHEN i % 7 = 0 THEN 'x' || i END, 'tool' || (i % 30), '{}',
           CASE i % 100 WHEN 0 THEN 'pending' WHEN 1 THEN 'approved' WHEN 2 THEN 'executed' ELSE 'completed' END,
           '{}', '{approver}', now() + interval '1 hour', CASE WHEN i % 500 = 0 THEN now() END,
           now() - i * interval '1 second', now()
      FROM unnest(ARRAY['acme', 'globex']) t, generate_series(1, 20000) i`);
  await sql(`
    INSERT INTO events (tenant_id, seq, id, type, at, recorded_at, instance_id, conversation_id, tool_call_id,
                        tool_name, actor, data, prev_hash, hash)
    SELECT t, i, gen_random_uuid(),
           CASE WHEN i % 97 = 0 THEN 'ToolCallExpired' ELSE (ARRAY['ToolCallProposed', 'ToolCallAutoApproved',
             'ToolCallExecuted', 'ToolCallCompleted'])[1 + i % 4] END,
           now() - (20000 - i) * interval '6 minutes', now(), 'test', 'c' || (i / 4 % 400 + 1), 'tc' || (i / 4 + 1),
           'tool' || (i / 4 % 30), jsonb_build_object('kind', 'agent', 'id', 'agent-' || (i % 10)), '{}',
           repeat('0', 64), repeat('1', 64)
      FROM unnest(ARRAY['acme', 'globex']) t, generate_series(1, 20000) i`);
  await sql(`ANALYZE`);
  // PGlite migrates a new template when the migrations change, and loads the rows slower than PostgreSQL.
}, 300_000);

afterAll(async () => {
  await server?.stop();
});

describe('the indexes the write path no longer pays for', () => {
  it('are gone: events_by_id and tool_calls_pending', async () => {
    const rows = await sql<{ name: string }>(
      `SELECT indexname AS name FROM pg_indexes WHERE tablename IN ('events', 'tool_calls') ORDER BY 1`,
    );
    const names = rows.map((r) => r.name);
    expect(names).not.toContain('events_by_id');
    expect(names).not.toContain('tool_calls_pending');
    expect(names).toEqual(expect.arrayContaining(['events_by_time', 'events_by_type', 'tool_calls_by_status']));
  });
});

describe('every audit filter reads its own index', () => {
  const acme = { tenantId: 'acme' };
  const week = () => ({ from: new Date(Date.now() - 40 * 86_400_000), to: new Date(Date.now() - 33 * 86_400_000) });
  it.each([
    ['no filter', {}, ['events_pkey']],
    ['conversationId', { conversationId: 'c7' }, ['events_by_conversation']],
    ['toolCallId', { toolCallId: 'tc42' }, ['events_by_tool_call']],
    ['toolName', { toolName: 'tool3' }, ['events_by_tool_name']],
    ['actor', { actor: 'agent-3' }, ['events_by_actor']],
    ['one rare type', { types: ['ToolCallExpired'] }, ['events_by_type']],
  ])('%s', async (_, filter, expected) => {
    expect(await indexesOf(() => audit.list({ ...acme, ...filter }, 100))).toEqual(expected);
  });

  it('a time window: its seq bounds from events_by_time, then the page by seq', async () => {
    const used = await indexesOf(() => audit.list({ ...acme, ...week() }, 100));
    expect(used).toContain('events_by_time');
    expect(used).toContain('events_pkey');
  });

  it('decision statistics and counts over a window read events_by_type or events_by_time', async () => {
    const { from, to } = week();
    for (const used of [
      await indexesOf(() => audit.decisionStats('acme', from, to)),
      await indexesOf(() => audit.countByType('acme', ['ToolCallExpired'], from, to)),
    ])
      expect(used.some((i) => i === 'events_by_type' || i === 'events_by_time')).toBe(true);
  });
});

describe('tool calls', () => {
  const approver = { id: 'ann', tenant: 'acme', roles: ['approver'] };

  it("the hot path's load of a conversation's pending calls reads the partial index of pending calls", async () => {
    const used = await indexesOf(() => reader.findById('acme', 'c1', { calls: { statuses: ['pending'] } }));
    expect(used).toEqual(['conversations_pkey', 'tool_calls_pending_by_conversation']);
  });

  it('the inbox lists pending calls from tool_calls_by_status (tool_calls_pending is gone)', async () => {
    const used = await indexesOf(() => reads.listApprovals(approver, { status: 'pending', limit: 50 }));
    expect(used).toContain('tool_calls_by_status');
  });

  it('pending approvals are counted, and due expiries found, from the partial indexes of pending calls', async () => {
    expect(await indexesOf(() => audit.pendingApprovals('acme', new Date()))).toEqual([
      expect.stringMatching(/^tool_calls_pending_/),
    ]);
    const due = await indexesOf(() => reader.findWithDueExpiries(new Date(Date.now() + 7_200_000), 100));
    expect(due).toContain('tool_calls_pending_next_step');
    for (const index of due) expect(index).toMatch(/^tool_calls_pending_/);
  });

  it('the count of pending calls per tenant (metrics) reads a partial index of pending calls', async () => {
    // The statement src/adapters/metrics/metrics.ts sends.
    const used = await scans({
      text: `SELECT tenant_id, count(*) AS n FROM tool_calls WHERE status = 'pending' GROUP BY tenant_id`,
      values: [],
    });
    expect(used.map((s) => s.index)).toEqual([expect.stringMatching(/^tool_calls_pending_/)]);
  });

  /**
   * One long conversation among many short ones (a tenant of one-call chats): the statistics say a conversation
   * holds a call or two, and the plan of a lookup by external id then filtered the conversation's every call.
   */
  let longConversation: Promise<void> | undefined;
  const withLongConversation = () =>
    (longConversation ??= (async () => {
      await sql(`INSERT INTO conversations (tenant_id, id, agent_id, title, metadata, pending_count, created_at, updated_at, version)
                 SELECT 'short', 's' || i, 'agent-1', 'short', '{}', 0, now(), now(), 1 FROM generate_series(1, 20000) i`);
      await sql(`INSERT INTO tool_calls (tenant_id, id, conversation_id, external_id, tool_name, arguments, status, policy,
                                         approvers, created_at, updated_at)
                 SELECT 'short', 'tc-s-' || i || '-' || k, 's' || i, 'x-' || k, 'get_source', '{}', 'completed', '{}', '{}', now(), now()
                   FROM generate_series(1, 20000) i, generate_series(1, 2) k`);
      await sql(`INSERT INTO conversations (tenant_id, id, agent_id, title, metadata, pending_count, created_at, updated_at, version)
                 VALUES ('acme', 'long', 'agent-1', 'long', '{}', 0, now(), now(), 1)`);
      await sql(`
        INSERT INTO tool_calls (tenant_id, id, conversation_id, external_id, tool_name, arguments, status, policy, approvers,
                                created_at, updated_at)
        SELECT 'acme', 'tc-long-' || i, 'long', 'call-long-' || i, 'get_source', '{}', 'completed', '{}', '{}',
               now() - i * interval '1 second', now()
          FROM generate_series(1, 3000) i`);
      await sql(`ANALYZE tool_calls`);
    })());

  /**
   * The shared buffers the one statement `run` sends reads, as the hot path runs it: a prepared statement's plan
   * for any parameters (generic), and one for these (custom).
   */
  async function buffersOf(run: () => Promise<unknown>): Promise<Record<string, number>> {
    const statements = await capture(run);
    expect(statements).toHaveLength(1);
    const qr = server.dataSource.createQueryRunner();
    const out: Record<string, number> = {};
    try {
      for (const mode of ['force_generic_plan', 'force_custom_plan']) {
        await qr.query(`SET plan_cache_mode = ${mode}`);
        const [row] = await qr.query(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statements[0].text}`,
          statements[0].values,
        );
        const plan = typeof row['QUERY PLAN'] === 'string' ? JSON.parse(row['QUERY PLAN']) : row['QUERY PLAN'];
        out[mode] = plan[0].Plan['Shared Hit Blocks'] + plan[0].Plan['Shared Read Blocks'];
      }
    } finally {
      await qr.query('RESET plan_cache_mode').catch(() => undefined);
      await qr.release();
    }
    return out;
  }

  /** Walking the conversation's calls reads hundreds of buffers (over 400 here); looking each up, a few. */
  const few = (buffers: Record<string, number>) =>
    Object.fromEntries(Object.entries(buffers).map(([mode, n]) => [mode, n < 60 ? 'a few' : n]));

  it('calls named by id or external id (a proposal, its results) cost the same in a conversation of 3,000 calls', async () => {
    await withLongConversation();
    const calls = {
      statuses: ['pending'] as const,
      ids: ['tc-long-7'],
      externalIds: ['call-long-2999', 'call-long-new'],
    };
    const buffers = await buffersOf(() => reader.findById('acme', 'long', { calls }));
    expect(few(buffers)).toEqual({ force_generic_plan: 'a few', force_custom_plan: 'a few' });
    const loaded = (await reader.findById('acme', 'long', { calls }))!;
    expect(['tc-long-7', 'tc-long-2999', 'tc-long-8'].map((id) => !!loaded.findCall(id))).toEqual([true, true, false]);
  });

  it('a read of calls by external id alone (GET …?externalId=) costs the same in a conversation of 3,000 calls', async () => {
    await withLongConversation();
    const only = { externalIds: ['call-long-2999', 'call-long-5', 'call-long-new'] };
    const buffers = await buffersOf(() => reader.findWithCalls('acme', 'long', only));
    expect(few(buffers)).toEqual({ force_generic_plan: 'a few', force_custom_plan: 'a few' });
    // The bound tells the two apart: reading the conversation whole to pick the calls out (what the Claude Code
    // hook did) is past it (94 buffers here, against 14; more with real arguments and results).
    const whole = await buffersOf(() => reader.findWithCalls('acme', 'long'));
    expect(few(whole)).toEqual({ force_generic_plan: expect.any(Number), force_custom_plan: expect.any(Number) });
    const read = (await reader.findWithCalls('acme', 'long', only))!;
    expect(read.toolCalls.map((c) => c.externalId)).toEqual(['call-long-2999', 'call-long-5']); // oldest first
    // And the pending calls on their partial index: the conversation's status and pending count are made from them.
    expect(await indexesOf(() => reader.findWithCalls('acme', 'long', only))).toEqual([
      'conversations_pkey',
      'tool_calls_external_id',
      'tool_calls_pending_by_conversation',
    ]);
  });

  it('a conversation with all its calls reads tool_calls_by_conversation', async () => {
    expect(await indexesOf(() => reader.findWithCalls('acme', 'c1'))).toEqual([
      'conversations_pkey',
      'tool_calls_by_conversation',
    ]);
  });
});

describe('ANALYZE collects the statistics plans use, and no others (migration 1764900000001)', () => {
  const EVENT_PAYLOADS = ['actor', 'data', 'hash', 'id', 'prev_hash'];

  /** The columns of a table whose statistics ANALYZE skips (target 0; PostgreSQL 17 writes the default as NULL). */
  const skipped = async (table: string) =>
    (
      await sql<{ name: string }>(
        `SELECT attname AS name FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND attstattarget = 0
          ORDER BY 1`,
        [table],
      )
    ).map((r) => r.name);

  it('every month of events, one made later too, skips only the payloads and waits for 50% growth', async () => {
    const far = new Date(Date.UTC(new Date().getUTCFullYear() + 3, 0, 1));
    await sql(`SELECT tollgate_events_ensure_partitions($1, $1::timestamptz + interval '1 day')`, [far]);
    const made = `events_${far.getUTCFullYear()}_01`;
    const partitions = (await sql<{ name: string }>(`SELECT name FROM tollgate_events_partitions()`)).map(
      (p) => p.name,
    );
    expect(partitions).toContain(made);
    for (const p of [...partitions, 'events_default']) {
      expect({ p, skipped: await skipped(p) }).toEqual({ p, skipped: EVENT_PAYLOADS });
      const [{ options }] = await sql(`SELECT reloptions AS options FROM pg_class WHERE relname = $1`, [p]);
      expect({ p, options }).toEqual({ p, options: ['autovacuum_analyze_scale_factor=0.5'] });
    }
    // The redefined guard still does what it did: the new month is append-only and its maker's search_path fixed.
    const [{ triggers }] = await sql(
      `SELECT array_agg(tgname::text ORDER BY tgname) AS triggers FROM pg_trigger WHERE tgrelid = $1::regclass`,
      [made],
    );
    expect(triggers).toEqual(expect.arrayContaining(['events_no_truncate', 'events_no_update_delete']));
    const [{ config }] = await sql(
      `SELECT proconfig AS config FROM pg_proc WHERE proname = 'tollgate_events_guard_partition'`,
    );
    expect(config).toEqual([expect.stringMatching(/^search_path=.*pg_temp$/)]);
  });

  it('tool_calls skips its payloads only: what its reads filter on keeps its statistics', async () => {
    const calls = await skipped('tool_calls');
    expect(calls).toEqual(expect.arrayContaining(['arguments', 'result', 'policy', 'decision']));
    for (const column of ['tenant_id', 'conversation_id', 'status', 'created_at', 'expires_at', 'approvers'])
      expect(calls).not.toContain(column);
  });

  it('ANALYZE still gives the planner what the audit filters need', async () => {
    await sql(`ANALYZE events`);
    const rows = await sql<{ name: string }>(
      `SELECT DISTINCT attname AS name FROM pg_stats WHERE tablename LIKE 'events_%' ORDER BY 1`,
    );
    const names = rows.map((r) => r.name);
    expect(names).toEqual(expect.arrayContaining(['tenant_id', 'seq', 'at', 'type', 'tool_name', 'conversation_id']));
    for (const payload of EVENT_PAYLOADS) expect(names).not.toContain(payload);
  });
});

describe('the migrations go down and up again', () => {
  it('down makes the indexes, statistics and partition settings as they were; up removes them again', async () => {
    const qr = server.dataSource.createQueryRunner();
    await qr.connect();
    const state = async () => ({
      indexes: (
        await qr.query(
          `SELECT indexname AS name FROM pg_indexes WHERE indexname IN ('events_by_id', 'tool_calls_pending') ORDER BY 1`,
        )
      ).map((r: { name: string }) => r.name),
      skipped: Number(
        (
          await qr.query(
            `SELECT count(*) AS n FROM pg_attribute WHERE attrelid IN ('events'::regclass, 'tool_calls'::regclass)
              AND attnum > 0 AND attstattarget = 0`,
          )
        )[0].n,
      ),
      partitionsWithOptions: Number(
        (
          await qr.query(
            `SELECT count(*) AS n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
              WHERE i.inhparent = 'events'::regclass AND c.reloptions IS NOT NULL`,
          )
        )[0].n,
      ),
    });
    try {
      await qr.startTransaction();
      const up = await state();
      expect(up).toMatchObject({ indexes: [], skipped: 15 });
      expect(up.partitionsWithOptions).toBeGreaterThan(3);
      await new AnalyzeWhatPlansUse1764900000001().down(qr);
      await new UnusedWriteIndexes1764900000000().down(qr);
      expect(await state()).toEqual({
        indexes: ['events_by_id', 'tool_calls_pending'],
        skipped: 0,
        partitionsWithOptions: 0,
      });
      await new UnusedWriteIndexes1764900000000().up(qr);
      await new AnalyzeWhatPlansUse1764900000001().up(qr);
      expect(await state()).toEqual(up);
    } finally {
      await qr.rollbackTransaction();
      await qr.release();
    }
  });
});
