'use strict';
/**
 * What PostgreSQL pays per proposal for each index and trigger of the write path.
 *
 *   npm run build && node bench/pg/proposal-writes.js [--variants -events_by_time,+events_by_id,...]
 *     [--proposals 400] [--pairs 10] [--warmup 20000] [--batch 1] [--path auto|confirm] [--keep] [--reuse]
 *
 * It runs the service's own save statement (`PROPOSAL_SAVES` from the built sql-conversation.writer.js: the root's
 * version-checked update, the call's insert and `tollgate_append_events` with two events prepared by the real
 * EventStore) in a loop on one connection. The template database holds `--warmup` proposals already, vacuumed
 * and analysed (a steady state: autovacuum has seen the tables). A variant drops an index or trigger, adds one
 * back, or swaps a function, on a clone of the template; it runs against another clone as it is (`all`).
 *
 * The figure is the CPU of each run's own backend process (/proc/<pid>/stat, utime + stime), per proposal: it
 * leaves out other sessions on the same server, autovacuum and the WAL writer. On a shared machine absolute CPU
 * times drift by ±30% between minutes, so the two clones run in short alternating slices and each pair gives a
 * ratio; the median ratio is the answer, beside the fastest slice of each (load only ever adds time). Buffers
 * and WAL (EXPLAIN ANALYZE of some proposals) are counts of work that the load does not change.
 * `synchronous_commit` is off in the session: the flush waits are not CPU.
 * `--batch n` sends n saves of n conversations per statement, as the group commit does under load.
 * `--path confirm` proposes calls that wait for a person (status pending: the partial indexes on pending get
 * entries) instead of auto-approved ones.
 *
 * DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres); databases made here are
 * named tg_pgw_* and dropped at the end (the template is kept with --keep, and used again with --reuse).
 */
require('reflect-metadata');
const { execFileSync } = require('node:child_process');
const { createHash, randomUUID } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { performance } = require('node:perf_hooks');
const { Client } = require('pg');

const ROOT = join(__dirname, '..', '..');
const dist = (p) => require(join(ROOT, 'dist', 'src', p));
const { PROPOSAL_SAVES } = dist('infrastructure/persistence/sql-conversation.writer');
const { TOOL_CALL_COLUMNS } = dist('infrastructure/persistence/conversation-columns');
const { EventStore } = dist('infrastructure/persistence/event-store');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const P = {
  proposals: Number(opt('proposals', 400)),
  pairs: Number(opt('pairs', 10)),
  warmup: Number(opt('warmup', 20000)),
  batch: Number(opt('batch', 1)),
  conversations: 500,
  path: opt('path', 'auto'),
  keep: args.includes('--keep'),
  /** Use the template a `--keep` run left (same --warmup and --path): the variants are then all that runs. */
  reuse: args.includes('--reuse'),
};
const BASE = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const urlOf = (db) => {
  const u = new URL(BASE);
  u.pathname = `/${db}`;
  return u.toString();
};
const TENANT = 'acme';

/**
 * The function as migration 1764500000000 defines it, but taking each event's hash from its record (made in
 * Node) instead of hashing in SQL: what the SQL SHA-256 and its text work cost. Not correct as a chain (the
 * hash does not chain to the head read under the lock); for the measurement only.
 */
const APPEND_WITHOUT_SHA = `CREATE OR REPLACE FUNCTION tollgate_append_events(p_tenant text, p_events jsonb)
  RETURNS TABLE(out_seq bigint, out_prev_hash text, out_hash text) LANGUAGE plpgsql AS $$
  DECLARE v_seq bigint; v_hash text; v_new text; e jsonb;
  BEGIN
    SELECT h.seq, h.hash INTO v_seq, v_hash FROM audit_heads h WHERE h.tenant_id = p_tenant FOR UPDATE;
    IF NOT FOUND THEN
      INSERT INTO audit_heads (tenant_id, seq, hash) VALUES (p_tenant, 0, repeat('0', 64)) ON CONFLICT (tenant_id) DO NOTHING;
      SELECT h.seq, h.hash INTO v_seq, v_hash FROM audit_heads h WHERE h.tenant_id = p_tenant FOR UPDATE;
    END IF;
    FOR e IN SELECT value FROM jsonb_array_elements(p_events) LOOP
      v_seq := v_seq + 1;
      v_new := e->>'hash';
      INSERT INTO events (tenant_id, seq, id, type, at, recorded_at, instance_id, correlation_id,
                          conversation_id, tool_call_id, tool_name, actor, data, prev_hash, hash)
      VALUES (p_tenant, v_seq, (e->>'id')::uuid, e->>'type', (e->>'at')::timestamptz, (e->>'recordedAt')::timestamptz,
              e->>'instanceId', e->>'correlationId', e->>'conversationId', e->>'toolCallId', e->>'toolName',
              e->'actor', e->'data', v_hash, v_new);
      out_seq := v_seq; out_prev_hash := v_hash; out_hash := v_new;
      RETURN NEXT;
      v_hash := v_new;
    END LOOP;
    UPDATE audit_heads SET seq = v_seq, hash = v_hash, at = (p_events->-1->>'at')::timestamptz WHERE tenant_id = p_tenant;
  END $$`;

const EVENT_INDEXES = [
  'events_by_id',
  'events_by_time',
  'events_by_type',
  'events_by_actor',
  'events_by_tool_name',
  'events_by_tool_call',
  'events_by_conversation',
];
const CALL_INDEXES = [
  'tool_calls_by_status',
  'tool_calls_by_conversation',
  'tool_calls_open',
  'tool_calls_external_id',
  'tool_calls_pending',
  'tool_calls_pending_by_conversation',
  'tool_calls_pending_expiry',
  'tool_calls_pending_next_step',
];
const CONVERSATION_INDEXES = ['conversations_by_agent', 'conversations_by_created', 'conversations_by_user'];

/** Each variant: the SQL run on its clone before the loop. Indexes that exist only in some schemas are skipped. */
const VARIANTS = {
  all: [],
  ...Object.fromEntries(
    [...EVENT_INDEXES, ...CALL_INDEXES, ...CONVERSATION_INDEXES].map((i) => [`-${i}`, [`DROP INDEX IF EXISTS ${i}`]]),
  ),
  '-heads_trigger': ['DROP TRIGGER audit_heads_forward_only ON audit_heads'],
  // The indexes migration 1764900000000 dropped, made again: what they cost before it.
  '+events_by_id': ['CREATE INDEX IF NOT EXISTS events_by_id ON events (tenant_id, id)'],
  '+tool_calls_pending': [
    `CREATE INDEX IF NOT EXISTS tool_calls_pending ON tool_calls (tenant_id, created_at, id) WHERE status = 'pending'`,
  ],
  '-events_secondary': EVENT_INDEXES.map((i) => `DROP INDEX IF EXISTS ${i}`),
  '-calls_secondary': CALL_INDEXES.map((i) => `DROP INDEX IF EXISTS ${i}`),
  '-sql_sha': [APPEND_WITHOUT_SHA],
  // The append function before migration 1764900000003: no halt check after the head's lock.
  '-halt_fence': [require(join(ROOT, 'dist', 'migrations', '1764900000002-chain-head-at')).APPEND_FUNCTION],
};

async function admin(sql) {
  const c = new Client({ connectionString: BASE });
  await c.connect();
  try {
    return await c.query(sql);
  } finally {
    await c.end();
  }
}

/** The template: every migration, one tenant's 500 conversations, as `tollgate migrate` and the API make them. */
async function makeTemplate(name, warmup = P.warmup) {
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${name}`);
  execFileSync(process.execPath, [join(ROOT, 'bin', 'tollgate.js'), 'migrate'], {
    env: { ...process.env, DATABASE_URL: urlOf(name) },
    stdio: 'ignore',
  });
  const c = new Client({ connectionString: urlOf(name) });
  await c.connect();
  const now = new Date();
  await c.query(
    `INSERT INTO conversations (tenant_id, id, agent_id, user_id, user_roles, user_name, user_assurance, title, metadata,
       pending_count, created_at, updated_at, version)
     SELECT $1, 'auto-' || i, 'agent-bench', 'ann', '{approver}', 'Ann', 'asserted', 'bench auto-' || i, '{}', 0, $2, $2, 1
       FROM generate_series(0, $3 - 1) i`,
    [TENANT, now, P.conversations],
  );
  // The history every run starts from: `--warmup` proposals, then what autovacuum would have done by then.
  const store = new EventStore({ instanceId: 'bench', databaseUrl: undefined });
  await c.query('SET synchronous_commit = off');
  await loop(c, store, await versionsOf(c), warmup, { next: 0 });
  // Without a warm-up it stays as a new install is: nothing vacuumed or analysed yet.
  if (warmup > 0) await c.query('VACUUM ANALYZE');
  await c.end();
}

async function versionsOf(c) {
  const { rows } = await c.query('SELECT id, version FROM conversations WHERE tenant_id = $1', [TENANT]);
  return new Map(rows.map((r) => [r.id, r.version]));
}

/** One proposal of conversation `conv` (its root as loaded, version `version`): the save's parts. */
function proposal(store, conv, version) {
  const now = new Date();
  const id = `tc_${randomUUID().replace(/-/g, '')}`;
  const pending = P.path === 'confirm';
  const policy = pending
    ? { level: 'confirm', rule: 1, policyVersion: 1, reason: 'bench: needs a person' }
    : { level: 'auto', rule: 0, policyVersion: 1, reason: 'read-only tools run without asking' };
  const call = {
    tenantId: TENANT,
    id,
    conversationId: conv,
    externalId: null,
    toolName: pending ? 'confirm_delete' : 'get_source',
    arguments: { id: 'src_1', fields: ['title', 'size'] },
    annotations: null,
    reason: 'bench: read a source',
    confidence: null,
    estimatedCost: null,
    display: null,
    status: pending ? 'pending' : 'approved',
    policy,
    approvers: pending ? ['approver'] : null,
    expiresAt: pending ? new Date(now.getTime() + 3_600_000) : null,
    approvals: null,
    followUp: null,
    nextStepAt: null,
    decision: pending ? null : { by: { kind: 'policy', id: 'policy' }, outcome: 'approved', at: now.toISOString() },
    execution: null,
    result: null,
    cancellation: null,
    createdAt: now,
    updatedAt: now,
  };
  const envelope = (type, data) => ({
    type,
    tenantId: TENANT,
    at: now,
    actor: { kind: 'agent', id: 'agent-bench' },
    conversationId: conv,
    toolCallId: id,
    toolName: call.toolName,
    data,
  });
  const events = [
    envelope('ToolCallProposed', {
      arguments: call.arguments,
      reason: call.reason,
      toolFlags: { isReadOnly: !pending, destructive: pending },
      policy,
    }),
    pending
      ? envelope('ApprovalRequested', { ...policy, approvers: ['approver'], expiresAt: call.expiresAt.toISOString() })
      : envelope('ToolCallAutoApproved', { ...policy, outcome: 'approved', via: 'policy', latencyMs: 0 }),
  ];
  const prepared = store.prepare(TENANT, events);
  // For the -sql_sha variant: a hash made in Node (what it would cost there is timed apart, see nodeHashCost).
  const records = prepared.records.map((r) => ({ ...r, hash: createHash('sha256').update(r.head).digest('hex') }));
  const root = PROPOSAL_SAVES.rootRecord({
    id: conv,
    userId: 'ann',
    userRoles: ['approver'],
    userName: 'Ann',
    userAssurance: 'asserted',
    title: `bench ${conv}`,
    metadata: {},
    pendingCount: 0,
    updatedAt: now,
    version,
  });
  return { root, insert: TOOL_CALL_COLUMNS.toRecord(call), records };
}

/**
 * Runs `n` proposals over the conversations, `P.batch` per statement. With `counts`, each statement runs under
 * EXPLAIN (ANALYZE, BUFFERS, WAL) and its buffer and WAL figures are added to `counts`: work that the machine's
 * load does not change, unlike CPU time.
 */
async function loop(c, store, versions, n, counter, counts) {
  const send = async (name, text, values) => {
    if (!counts) return c.query({ name, text, values });
    const res = await c.query({ text: `EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) ${text}`, values });
    const plan = res.rows[0]['QUERY PLAN'][0].Plan;
    // The calls' CTEs (`ins`, `upd`) are read by nothing, so they run after the plan and are not in its totals.
    const writes = (plan.Plans ?? []).filter((p) => /^CTE (ins|upd)$/.test(p['Subplan Name'] ?? ''));
    for (const node of [plan, ...writes]) for (const k of COUNTED) counts[k] = (counts[k] ?? 0) + (node[k] ?? 0);
    return null;
  };
  for (let done = 0; done < n; done += P.batch) {
    const saves = [];
    for (let k = 0; k < P.batch; k++) {
      const conv = `auto-${counter.next++ % P.conversations}`;
      saves.push({ conv, ...proposal(store, conv, versions.get(conv)) });
    }
    if (P.batch === 1) {
      const s = saves[0];
      await send(
        'alone',
        PROPOSAL_SAVES.alone,
        PROPOSAL_SAVES.aloneParams({ tenant: TENANT, root: s.root, inserts: [s.insert], updates: [] }, s.records, []),
      );
    } else {
      const tag = (item, list) => list.map((x) => ({ item, ...x }));
      const res = await send('grouped', PROPOSAL_SAVES.grouped, [
        TENANT,
        JSON.stringify(saves.map((s, i) => ({ item: i, ...s.root }))),
        JSON.stringify(saves.flatMap((s, i) => tag(i, [s.insert]))),
        '[]',
        JSON.stringify(saves.flatMap((s, i) => tag(i, s.records))),
        '[]',
      ]);
      if (res && res.rows[0].items.length !== saves.length) throw new Error('a grouped save was left out');
    }
    for (const s of saves) versions.set(s.conv, versions.get(s.conv) + 1);
  }
}

const COUNTED = [
  'Shared Hit Blocks',
  'Shared Read Blocks',
  'Shared Dirtied Blocks',
  'WAL Records',
  'WAL FPI',
  'WAL Bytes',
];
const EXPLAINED = 200;

function cpuSeconds(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, clock ticks (fields 14 and 15)
}

/** A database made from the template, with a variant's change. */
async function clone(template, db, variant) {
  await admin(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${db} TEMPLATE ${template}`);
  const c = new Client({ connectionString: urlOf(db) });
  await c.connect();
  for (const sql of VARIANTS[variant]) await c.query(sql);
  await c.query('SET synchronous_commit = off');
  const { rows } = await c.query('SELECT pg_backend_pid() AS pid');
  const store = new EventStore({ instanceId: 'bench', databaseUrl: undefined });
  const session = { c, db, pid: rows[0].pid, store, versions: await versionsOf(c), counter: { next: 0 } };
  await loop(c, store, session.versions, 500, session.counter); // plans and caches settle
  return session;
}

async function slice(s, n) {
  const cpu0 = cpuSeconds(s.pid);
  await loop(s.c, s.store, s.versions, n, s.counter);
  return cpuSeconds(s.pid) - cpu0;
}

/**
 * A variant against `all`, paired: two fresh clones of the template, then `--pairs` slices of `--proposals`
 * proposals on each in turn (which goes first alternates). Each pair ran under the same load of the machine, so
 * its ratio holds where absolute CPU times do not: the answer is the median ratio, and the median CPU per
 * proposal of each side. Then EXPLAIN (ANALYZE, BUFFERS, WAL) of `EXPLAINED` proposals on each.
 */
async function pair(template, variant) {
  const a = await clone(template, 'tg_pgw_a', 'all');
  const b = await clone(template, 'tg_pgw_b', variant);
  try {
    const ratios = [];
    const cpuA = [];
    const cpuB = [];
    for (let i = 0; i < P.pairs; i++) {
      const [x, y] = i % 2 === 0 ? [a, b] : [b, a];
      const tx = await slice(x, P.proposals);
      const ty = await slice(y, P.proposals);
      const [ta, tb] = x === a ? [tx, ty] : [ty, tx];
      cpuA.push((ta * 1e6) / P.proposals);
      cpuB.push((tb * 1e6) / P.proposals);
      ratios.push(tb / ta);
    }
    const countsA = {};
    const countsB = {};
    await loop(a.c, a.store, a.versions, EXPLAINED, a.counter, countsA);
    await loop(b.c, b.store, b.versions, EXPLAINED, b.counter, countsB);
    return {
      ratio: median(ratios),
      ratios,
      cpuA: median(cpuA),
      cpuB: median(cpuB),
      minA: Math.min(...cpuA),
      minB: Math.min(...cpuB),
      countsA,
      countsB,
    };
  } finally {
    for (const s of [a, b]) {
      await s.c.end();
      await admin(`DROP DATABASE IF EXISTS ${s.db} WITH (FORCE)`);
    }
  }
}

/** What hashing the same events in Node costs, per proposal (two events): the alternative to SQL's sha256. */
function nodeHashCost(store) {
  const samples = Array.from({ length: 2000 }, (_, i) => proposal(store, `auto-${i % 500}`, 1).records);
  const t0 = performance.now();
  let x = 0;
  for (const records of samples)
    for (const r of records) {
      const prev = 'a'.repeat(64);
      x += createHash('sha256')
        .update(prev + r.head + prev + r.mid + '12345' + r.tail)
        .digest('hex').length;
    }
  return { us: ((performance.now() - t0) * 1000) / samples.length, x };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const variants = (opt('variants', Object.keys(VARIANTS).join(',')) || '').split(',').filter((v) => v !== 'all');
  for (const v of variants) if (!VARIANTS[v]) throw new Error(`unknown variant ${v}`);
  const template = `tg_pgw_template_${P.path}`;
  console.log(`# ${JSON.stringify(P)}; variants ${variants.join(' ')}`);
  const exists = await admin(`SELECT 1 FROM pg_database WHERE datname = '${template}'`);
  if (!(P.reuse && exists.rowCount === 1)) await makeTemplate(template);
  const results = {};
  for (const v of variants) {
    const r = (results[v] = await pair(template, v));
    console.log(
      `${v}: ${r.ratio.toFixed(3)}× of all (pairs ${r.ratios.map((x) => x.toFixed(2)).join(' ')}); ` +
        `${r.cpuB.toFixed(0)} vs ${r.cpuA.toFixed(0)} µs CPU/proposal (fastest slices ${r.minB.toFixed(0)} vs ${r.minA.toFixed(0)})`,
    );
  }
  if (!P.keep) await admin(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
  const per = (counts, k) => counts[k] / EXPLAINED;
  console.log(
    `\n| variant | CPU vs all (median of ${P.pairs} pairs) | µs per proposal: variant / all | ` +
      `${COUNTED.map((k) => `${k}: variant / all`).join(' | ')} |`,
  );
  console.log(`| --- | --- | --- |${COUNTED.map(() => ' --- |').join('')}`);
  for (const v of variants) {
    const r = results[v];
    const cells = COUNTED.map((k) => {
      const d = k === 'WAL Bytes' ? 0 : 2;
      return `${per(r.countsB, k).toFixed(d)} / ${per(r.countsA, k).toFixed(d)}`;
    });
    console.log(
      `| ${v} | ${r.ratio.toFixed(3)}× | ${r.cpuB.toFixed(0)} / ${r.cpuA.toFixed(0)} | ${cells.join(' | ')} |`,
    );
  }
  const node = nodeHashCost(new EventStore({ instanceId: 'bench', databaseUrl: undefined }));
  console.log(`\nNode: sha256 of the two events' canonical text, ${node.us.toFixed(1)} µs per proposal`);
}

if (require.main === module)
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });

// For bench/pg/autovacuum-load.js: the same database and the same proposals.
module.exports = { P, admin, urlOf, makeTemplate, versionsOf, proposal, loop, EventStore, PROPOSAL_SAVES, TENANT };
