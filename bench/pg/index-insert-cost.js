'use strict';
/**
 * What each index of `events` and `tool_calls` adds to inserting a row, measured in bulk so that the machine's
 * load can be filtered out: the rows the proposal bench wrote (a template of bench/pg/proposal-writes.js) are
 * inserted again, in their order, into an empty copy of the table that has the primary key and one index, and
 * into one with the primary key alone. Variants alternate over `--rounds` rounds; the fastest round of each is
 * taken (the load of a shared machine only ever adds time), and the difference is the index's cost per row.
 *
 *   node bench/pg/proposal-writes.js --keep --variants -heads_trigger   # leaves tg_pgw_template_auto
 *   createdb -h 127.0.0.1 -U postgres -T tg_pgw_template_auto tg_pgw_copy
 *   node bench/pg/index-insert-cost.js --db tg_pgw_copy [--rounds 5]
 *
 * Needs a database with rows in `events` and `tool_calls`, which it adds scratch tables to: a copy, not the
 * template itself.
 */
const { Client } = require('pg');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const BASE = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const source = opt('db', 'tg_pgw_copy');
const rounds = Number(opt('rounds', 5));

const DROPPED = ['events_by_id', 'tool_calls_pending'];

const TABLES = {
  events: {
    key: '(tenant_id, seq, at)',
    indexes: {
      events_by_id: '(tenant_id, id)',
      events_by_conversation: '(tenant_id, conversation_id, seq) WHERE conversation_id IS NOT NULL',
      events_by_tool_call: '(tenant_id, tool_call_id, seq) WHERE tool_call_id IS NOT NULL',
      events_by_type: '(tenant_id, type, seq)',
      events_by_time: '(tenant_id, at, seq)',
      events_by_tool_name: '(tenant_id, tool_name, seq) WHERE tool_name IS NOT NULL',
      events_by_actor: "(tenant_id, (actor->>'id'), seq)",
    },
  },
  tool_calls: {
    key: '(tenant_id, id)',
    // The auto-approved calls as written; then the same rows as calls that wait for a person (pending).
    statuses: ['approved', 'pending'],
    indexes: {
      tool_calls_by_conversation: '(tenant_id, conversation_id, created_at, id)',
      tool_calls_by_status: '(tenant_id, status, created_at, id)',
      tool_calls_open: "(tenant_id, conversation_id) WHERE status IN ('pending', 'approved', 'executed')",
      tool_calls_external_id: '(tenant_id, conversation_id, external_id) WHERE external_id IS NOT NULL',
      tool_calls_pending: "(tenant_id, created_at, id) WHERE status = 'pending'",
      tool_calls_pending_by_conversation: "(tenant_id, conversation_id) WHERE status = 'pending'",
      tool_calls_pending_expiry: "(tenant_id, expires_at) WHERE status = 'pending'",
    },
  },
};

async function main() {
  const url = new URL(BASE);
  url.pathname = `/${source}`;
  const c = new Client({ connectionString: url.toString() });
  await c.connect();
  const { rows } = await c.query('SELECT pg_backend_pid() AS pid');
  await c.query('SET synchronous_commit = off');
  for (const [table, spec] of Object.entries(TABLES))
    for (const status of spec.statuses ?? [null]) await measure(c, rows[0].pid, table, spec, status);
  await c.end();
}

/** One table's rows (as written, or all with `status`) into each variant's empty copy; prints the table. */
async function measure(c, pid, table, spec, status) {
  // The rows in their insert order, in a plain table: the source of every run.
  await c.query(`DROP TABLE IF EXISTS zz_src`);
  await c.query(
    `CREATE TEMP TABLE zz_src AS SELECT * FROM ${table} ORDER BY ${table === 'events' ? 'seq' : 'created_at'}`,
  );
  if (status) await c.query(`UPDATE zz_src SET status = $1`, [status]);
  const [{ n }] = (await c.query(`SELECT count(*)::int AS n FROM zz_src`)).rows;
  const variants = { 'primary key only': [], ...Object.fromEntries(Object.keys(spec.indexes).map((i) => [i, [i]])) };
  // Every index as before migration 1764900000000, and as now (without events_by_id and tool_calls_pending).
  variants['all, before'] = Object.keys(spec.indexes);
  variants['all, now'] = Object.keys(spec.indexes).filter((i) => !DROPPED.includes(i));
  const best = {};
  for (let r = 0; r < rounds; r++) {
    const names = Object.keys(variants);
    for (const v of names.map((_, i) => names[(i + r) % names.length])) {
      await c.query(`DROP TABLE IF EXISTS zz_t`);
      await c.query(`CREATE TABLE zz_t (LIKE zz_src)`);
      await c.query(`ALTER TABLE zz_t ADD PRIMARY KEY ${spec.key}`);
      for (const i of variants[v]) await c.query(`CREATE INDEX ON zz_t ${spec.indexes[i]}`);
      const cpu0 = cpuSeconds(pid);
      await c.query(`INSERT INTO zz_t SELECT * FROM zz_src`);
      const us = ((cpuSeconds(pid) - cpu0) * 1e6) / n;
      best[v] = Math.min(best[v] ?? Infinity, us);
    }
  }
  await c.query(`DROP TABLE IF EXISTS zz_t`);
  console.log(
    `\n${table}${status ? ` (status ${status})` : ''}: ${n} rows, backend CPU per row (fastest of ${rounds} rounds)`,
  );
  console.log('| index | µs per row | added by the index |');
  console.log('| --- | --- | --- |');
  const base = best['primary key only'];
  for (const [v, us] of Object.entries(best))
    console.log(`| ${v} | ${us.toFixed(2)} | ${v === 'primary key only' ? '' : `${(us - base).toFixed(2)} µs`} |`);
}

function cpuSeconds(pid) {
  const f = require('node:fs').readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
