'use strict';
/**
 * Does autovacuum (or autoanalyze) run on the write path's tables during a load, what does it cost, and does
 * the tail of the writes move with it?
 *
 *   npm run build && node bench/pg/autovacuum-load.js [--seconds 240] [--rate 500] [--batch 8] [--label x]
 *     [--setup "SQL; SQL"]
 *
 * A fresh database (every migration, one tenant's 500 conversations, nothing analysed yet: as a new install
 * starts), then auto-approved proposals at `--rate` per second, `--batch` saves per statement (the group commit's
 * statement, `synchronous_commit` on), on one connection: one tenant's writes of one instance. `--setup` runs
 * before the load (e.g. storage parameters to compare). Every 10 s it prints the window's statement latency
 * (p50 / p99 / max) and which of the tables autovacuum or autoanalyze processed in the window
 * (pg_stat_user_tables). At the end it reads the server's log for the database's autovacuum lines (the tables
 * are set to `log_autovacuum_min_duration = 0`), with their CPU and elapsed time. Needs read access to
 * `--log` (default /var/log/postgresql/postgresql-15-main.log).
 */
const { readFileSync } = require('node:fs');
const { performance } = require('node:perf_hooks');
const { Client } = require('pg');
const W = require('./proposal-writes');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const seconds = Number(opt('seconds', 240));
const rate = Number(opt('rate', 500));
const label = opt('label', 'default');
const setup = opt('setup', '');
const logFile = opt('log', '/var/log/postgresql/postgresql-15-main.log');
W.P.batch = Number(opt('batch', 8));

const TABLES = `relname = ANY('{tool_calls,conversations,audit_heads}') OR relname LIKE 'events\\_%'`;

async function stats(c) {
  const { rows } = await c.query(
    `SELECT relname, autovacuum_count AS v, autoanalyze_count AS a FROM pg_stat_user_tables WHERE ${TABLES}`,
  );
  return new Map(rows.map((r) => [r.relname, { v: Number(r.v), a: Number(r.a) }]));
}

const pct = (xs, p) => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function main() {
  const db = `tg_pgw_av_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase()}`;
  await W.makeTemplate(db, 0);
  const c = new Client({ connectionString: W.urlOf(db) });
  await c.connect();
  const tables = await c.query(`SELECT relname FROM pg_class WHERE relkind = 'r' AND (${TABLES})`);
  for (const { relname } of tables.rows) await c.query(`ALTER TABLE ${relname} SET (log_autovacuum_min_duration = 0)`);
  for (const sql of setup.split(';').filter((s) => s.trim())) await c.query(sql);
  const started = new Date();
  console.log(`# ${db}: ${seconds} s at ${rate} proposals/s, ${W.P.batch} per statement; setup: ${setup || 'none'}`);
  const store = new W.EventStore({ instanceId: 'bench', databaseUrl: undefined });
  const versions = await W.versionsOf(c);
  const counter = { next: 0 };
  const all = [];
  let window = [];
  let before = await stats(c);
  const t0 = performance.now();
  let sent = 0;
  let nextReport = 10_000;
  for (;;) {
    const now = performance.now() - t0;
    if (now >= seconds * 1000) break;
    // Paced: a statement is due every batch/rate seconds; one that is late goes at once.
    const due = (sent / rate) * 1000;
    if (due > now) await new Promise((r) => setTimeout(r, due - now));
    const s0 = performance.now();
    await W.loop(c, store, versions, W.P.batch, counter);
    const ms = performance.now() - s0;
    sent += W.P.batch;
    window.push(ms);
    all.push(ms);
    if (performance.now() - t0 >= nextReport) {
      const after = await stats(c);
      const ran = [];
      for (const [t, x] of after) {
        const b = before.get(t) ?? { v: 0, a: 0 };
        if (x.v > b.v) ran.push(`vacuum ${t}`);
        if (x.a > b.a) ran.push(`analyze ${t}`);
      }
      console.log(
        `${(nextReport / 1000).toFixed(0).padStart(4)} s: ${window.length} statements, p50 ${pct(window, 50).toFixed(1)} ` +
          `p99 ${pct(window, 99).toFixed(1)} max ${Math.max(...window).toFixed(1)} ms; ${ran.join(', ') || '-'}`,
      );
      before = after;
      window = [];
      nextReport += 10_000;
    }
  }
  const wall = (performance.now() - t0) / 1000;
  console.log(
    `all: ${(sent / wall).toFixed(0)} proposals/s; statement p50 ${pct(all, 50).toFixed(1)} p99 ${pct(all, 99).toFixed(1)} ` +
      `p99.9 ${pct(all, 99.9).toFixed(1)} max ${Math.max(...all).toFixed(1)} ms`,
  );
  await c.end();
  // The server's log: "automatic vacuum of table "db.public.t": ..." and "automatic analyze of table ...", each
  // followed some lines later by "system usage: CPU: user: x s, system: y s, elapsed: z s".
  try {
    const lines = readFileSync(logFile, 'utf8').split('\n');
    let current = null;
    const found = [];
    for (const l of lines) {
      const ts = l.slice(0, 23);
      if (ts < started.toISOString().replace('T', ' ').slice(0, 23)) continue;
      const m = /automatic (vacuum|analyze) of table "([^"]+)"/.exec(l);
      if (m && m[2].startsWith(`${db}.`)) current = { at: ts.slice(11, 19), what: `${m[1]} ${m[2].split('.')[2]}` };
      const u = /system usage: CPU: user: ([\d.]+) s, system: ([\d.]+) s, elapsed: ([\d.]+) s/.exec(l);
      if (u && current) {
        found.push(
          `${current.at} ${current.what}: CPU ${(Number(u[1]) + Number(u[2])).toFixed(2)} s, elapsed ${u[3]} s`,
        );
        current = null;
      }
    }
    console.log(`autovacuum in the log (${found.length}):\n  ${found.join('\n  ')}`);
  } catch (e) {
    console.log(`(the server's log was not readable: ${e.message})`);
  }
  if (!args.includes('--keep')) await W.admin(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
