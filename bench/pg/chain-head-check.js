'use strict';
/**
 * What the chain head's forward-only check costs an append, with its event's `at` (migration 1764900000002) and
 * without it (as before: every month of `events` opened, and every month up to the event's read), by the number
 * of partitions of `events`.
 *
 *   npm run build && node bench/pg/chain-head-check.js [--partitions 5,11,23] [--appends 400] [--pairs 8]
 *     [--warmup 2000] [--per-month 20000]
 *
 * For each partition count: a template migrated by the built service with `--warmup` proposals (the real save
 * statement, bench/pg/proposal-writes.js), months before this one made until `events` has that many partitions
 * (this month, three ahead and the default are the 5 of a new install), and `--per-month` events of another
 * tenant in each past month, so each partition has a real index to descend. Then three clones:
 * - `at`: the schema as it is;
 * - `before`: migration 1764900000002 taken down (the head without `at`, the check of 1764615000000);
 * - `none`: no forward-only trigger at all, the floor: what is left is the append itself.
 * Each runs `tollgate_append_events` with a proposal's two events (made by the real EventStore), one statement
 * each, as the service sends them, in alternating slices of `--appends`; the figure is the backend's CPU
 * (/proc/<pid>/stat) per append, median of the slices, and the median of the pairs' ratios. After the loop, one
 * more append in a transaction counts the partitions it read (pg_stat_xact_user_tables) and the partitions the
 * transaction opened (locks on their indexes): counts the machine's load does not change.
 *
 * DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/postgres); databases made here are
 * named tg_chh_* and dropped at the end.
 */
require('reflect-metadata');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { Client } = require('pg');
const W = require('./proposal-writes');

const ROOT = join(__dirname, '..', '..');
const { ChainHeadAt1764900000002 } = require(join(ROOT, 'dist', 'migrations', '1764900000002-chain-head-at'));

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const P = {
  partitions: opt('partitions', '5,11,23').split(',').map(Number),
  appends: Number(opt('appends', 400)),
  pairs: Number(opt('pairs', 8)),
  warmup: Number(opt('warmup', 2000)),
  perMonth: Number(opt('per-month', 20000)),
};
const TENANT = W.TENANT;

/** Each variant: what is done to its clone before the loop. */
const VARIANTS = {
  at: async () => undefined,
  before: async (c) => new ChainHeadAt1764900000002().down({ query: (text) => c.query(text) }),
  none: async (c) => c.query('DROP TRIGGER audit_heads_forward_only ON audit_heads'),
};

function cpuSeconds(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, clock ticks
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function makeTemplate(name, partitions) {
  W.P.conversations = 500;
  await W.makeTemplate(name, P.warmup);
  const c = new Client({ connectionString: W.urlOf(name) });
  await c.connect();
  try {
    const months = partitions - 5;
    if (months > 0) {
      await c.query(
        `SELECT tollgate_events_ensure_partitions(date_trunc('month', now()) - $1 * interval '1 month', now())`,
        [months],
      );
      // Another tenant's events in each past month; its head at the last of them (a bulk load).
      await c.query(
        `INSERT INTO events (tenant_id, seq, id, type, at, instance_id, actor, data, prev_hash, hash)
         SELECT 'other', m * $2 + i, gen_random_uuid(), 'ToolCallProposed',
                date_trunc('month', now()) - (m + 1) * interval '1 month' + i * interval '1 minute', 'bench',
                '{"kind":"agent","id":"a"}', '{}', repeat('0', 64), md5((m * $2 + i)::text) || md5(i::text)
           FROM generate_series(0, $1 - 1) m, generate_series(1, $2) i`,
        [months, P.perMonth],
      );
    }
    await c.query('VACUUM ANALYZE');
    const [{ n }] = (await c.query(`SELECT count(*) AS n FROM pg_inherits WHERE inhparent = 'events'::regclass`)).rows;
    if (Number(n) !== partitions) throw new Error(`events has ${n} partitions, not ${partitions}`);
  } finally {
    await c.end();
  }
}

async function clone(template, variant) {
  const db = `tg_chh_${variant}`;
  await W.admin(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  await W.admin(`CREATE DATABASE ${db} TEMPLATE ${template}`);
  const c = new Client({ connectionString: W.urlOf(db) });
  await c.connect();
  await VARIANTS[variant](c);
  await c.query('SET synchronous_commit = off');
  const { rows } = await c.query('SELECT pg_backend_pid() AS pid');
  const s = {
    c,
    db,
    variant,
    pid: rows[0].pid,
    store: new W.EventStore({ instanceId: 'bench', databaseUrl: undefined }),
  };
  await appends(s, 200); // plans and caches settle
  return s;
}

/** `n` appends of a proposal's two events, one statement each. */
async function appends(s, n) {
  for (let i = 0; i < n; i++) {
    const { records } = W.proposal(s.store, `auto-${i % 500}`, 1);
    await s.c.query({
      name: 'append',
      text: 'SELECT out_seq FROM tollgate_append_events($1, $2::jsonb)',
      values: [TENANT, JSON.stringify(records)],
    });
  }
}

/** The partitions one append reads and those its transaction opens (see the file's comment). */
async function touched(s) {
  const scans = async () =>
    new Map(
      (
        await s.c.query(
          `SELECT s.relname AS name, coalesce(s.seq_scan, 0) + coalesce(s.idx_scan, 0) AS n
             FROM pg_stat_xact_user_tables s JOIN pg_inherits i ON i.inhrelid = s.relid
            WHERE i.inhparent = 'events'::regclass`,
        )
      ).rows.map((r) => [r.name, Number(r.n)]),
    );
  await s.c.query('BEGIN');
  try {
    const before = await scans();
    await appends(s, 1);
    const after = await scans();
    const { rows } = await s.c.query(
      `SELECT count(DISTINCT x.indrelid) AS n FROM pg_locks l
         JOIN pg_index x ON x.indexrelid = l.relation
         JOIN pg_inherits i ON i.inhrelid = x.indrelid
        WHERE l.pid = pg_backend_pid() AND i.inhparent = 'events'::regclass`,
    );
    return { read: [...after].filter(([k, v]) => v > (before.get(k) ?? 0)).length, opened: Number(rows[0].n) };
  } finally {
    await s.c.query('ROLLBACK');
  }
}

async function measure(partitions) {
  const template = `tg_chh_template`;
  await makeTemplate(template, partitions);
  const sessions = [];
  try {
    for (const v of Object.keys(VARIANTS)) sessions.push(await clone(template, v));
    const cpu = Object.fromEntries(sessions.map((s) => [s.variant, []]));
    for (let i = 0; i < P.pairs; i++) {
      // Each round in another order, so no variant always runs first or last.
      const order = i % 2 === 0 ? sessions : [...sessions].reverse();
      for (const s of order) {
        const t0 = cpuSeconds(s.pid);
        await appends(s, P.appends);
        cpu[s.variant].push(((cpuSeconds(s.pid) - t0) * 1e6) / P.appends);
      }
    }
    const ratio = (v, w) => median(cpu[v].map((x, i) => x / cpu[w][i]));
    const counts = {};
    for (const s of sessions) counts[s.variant] = await touched(s);
    return { partitions, cpu, ratio, counts };
  } finally {
    for (const s of sessions) {
      await s.c.end();
      await W.admin(`DROP DATABASE IF EXISTS ${s.db} WITH (FORCE)`);
    }
    await W.admin(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
  }
}

async function main() {
  console.log(`# ${JSON.stringify(P)}`);
  const rows = [];
  for (const partitions of P.partitions) {
    const r = await measure(partitions);
    const m = (v) => median(r.cpu[v]);
    console.log(
      `${partitions} partitions: µs CPU per append (median of ${P.pairs} slices) at ${m('at').toFixed(1)}, ` +
        `before ${m('before').toFixed(1)}, none ${m('none').toFixed(1)}; at/before ${r.ratio('at', 'before').toFixed(3)}× ` +
        `(pairs ${r.cpu.at.map((x, i) => (x / r.cpu.before[i]).toFixed(2)).join(' ')}); ` +
        `read/opened at ${r.counts.at.read}/${r.counts.at.opened}, before ${r.counts.before.read}/${r.counts.before.opened}`,
    );
    rows.push(
      `| ${partitions} | ${m('before').toFixed(0)} | ${m('at').toFixed(0)} | ${m('none').toFixed(0)} | ` +
        `${r.ratio('at', 'before').toFixed(3)}× | ${(m('before') - m('none')).toFixed(0)} → ${(m('at') - m('none')).toFixed(0)} | ` +
        `${r.counts.before.read} / ${r.counts.before.opened} → ${r.counts.at.read} / ${r.counts.at.opened} |`,
    );
  }
  console.log(
    `\n| partitions | µs per append, before | with at | no trigger | at / before (median of pairs) | ` +
      `the check, µs (less no trigger) | partitions read / opened per append |`,
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const row of rows) console.log(row);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
