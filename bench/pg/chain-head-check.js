'use strict';
/**
 * What the chain head's forward-only check costs an append, with its event's `at` (migration 1764900000002) and
 * without it (as before: every month of `events` opened, and every month up to the event's read), by the number
 * of partitions of `events`.
 *
 *   npm run build && node bench/pg/chain-head-check.js [--partitions 5,11,23] [--appends 400] [--pairs 8]
 *     [--warmup 2000] [--per-month 20000] [--variants at,execute]
 *
 * For each partition count: a template migrated by the built service with `--warmup` proposals (the real save
 * statement, bench/pg/proposal-writes.js), months before this one made until `events` has that many partitions
 * (this month, three ahead and the default are the 5 of a new install), and `--per-month` events of another
 * tenant in each past month, so each partition has a real index to descend. Then a clone for each variant:
 * - `at`: the schema as it is;
 * - `before`: migration 1764900000002 taken down (the head without `at`, the check of 1764615000000);
 * - `none`: no forward-only trigger at all, the floor: what is left is the append itself;
 * - `execute`: the check with `at` run by EXECUTE, so it is planned (and pruned) for its values every time.
 * Each runs `tollgate_append_events` with a proposal's two events (made by the real EventStore), one statement
 * each, as the service sends them, in alternating slices of `--appends`; the figure is the backend's CPU
 * (/proc/<pid>/schedstat) per append, median of the slices, and the median of the pairs' ratios. After the loop, one
 * more append in a transaction counts the partitions it read (pg_stat_xact_user_tables), those whose indexes it
 * opened, and those it locked (pg_locks): counts the machine's load does not change.
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
  /** `before` and `none` always run: the others are compared with them. */
  variants: ['before', 'none', ...opt('variants', 'at,execute').split(',')],
};
const TENANT = W.TENANT;

/** Each variant: what is done to its clone before the loop. */
const VARIANTS = {
  at: async () => undefined,
  before: async (c) => new ChainHeadAt1764900000002().down({ query: (text) => c.query(text) }),
  none: async (c) => c.query('DROP TRIGGER audit_heads_forward_only ON audit_heads'),
  // The check with at, planned for its values on every call (EXECUTE): pruned by the planner, so the months it
  // skips are not even locked, at the price of a plan per append. plpgsql's cached generic plan prunes them when
  // it starts instead, after locking every partition (PostgreSQL before 18).
  execute: async (c) => {
    const [{ src }] = (
      await c.query(`SELECT prosrc AS src FROM pg_proc WHERE proname = 'tollgate_audit_heads_forward_only'`)
    ).rows;
    const check =
      /IF EXISTS \(SELECT 1 FROM events\s+WHERE tenant_id = NEW\.tenant_id AND seq = NEW\.seq AND hash = NEW\.hash AND at = NEW\.at\) THEN/;
    if (!check.test(src)) throw new Error('the check with at is not where the execute variant expects it');
    const swapped = src
      .replace(
        check,
        `EXECUTE 'SELECT EXISTS (SELECT 1 FROM events WHERE tenant_id = $1 AND seq = $2 AND hash = $3 AND at = $4)'
           INTO v_found USING NEW.tenant_id, NEW.seq, NEW.hash, NEW.at;
         IF v_found THEN`,
      )
      .replace(/^\s*BEGIN/, 'DECLARE v_found boolean; BEGIN');
    await c.query(
      `CREATE OR REPLACE FUNCTION tollgate_audit_heads_forward_only() RETURNS trigger LANGUAGE plpgsql AS $$${swapped}$$`,
    );
  },
};

/** The backend's time on a CPU, from the scheduler's own count in ns: ticks of 10 ms would be 5% of a slice. */
function cpuSeconds(pid) {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e9;
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

/**
 * What one append touches of `events`: the partitions it reads, those whose indexes it opens, and those it locks
 * (see the file's comment). Only the first two are work per partition; a lock is cheaper, but not free.
 */
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
      `SELECT count(DISTINCT x.indrelid) AS indexed, count(DISTINCT p.inhrelid) AS locked
         FROM pg_locks l
         LEFT JOIN pg_index x ON x.indexrelid = l.relation
              AND x.indrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'events'::regclass)
         LEFT JOIN pg_inherits p ON p.inhrelid = l.relation AND p.inhparent = 'events'::regclass
        WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation'`,
    );
    return {
      read: [...after].filter(([k, v]) => v > (before.get(k) ?? 0)).length,
      opened: Number(rows[0].indexed),
      locked: Number(rows[0].locked),
    };
  } finally {
    await s.c.query('ROLLBACK');
  }
}

async function measure(partitions) {
  const template = `tg_chh_template`;
  await makeTemplate(template, partitions);
  const sessions = [];
  try {
    for (const v of P.variants) sessions.push(await clone(template, v));
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
    for (const v of P.variants) {
      const t = r.counts[v];
      const pairs = r.cpu[v].map((x, i) => (x / r.cpu.before[i]).toFixed(2)).join(' ');
      console.log(
        `${partitions} partitions, ${v}: ${m(v).toFixed(1)} µs CPU per append (median of ${P.pairs} slices; ` +
          `fastest ${Math.min(...r.cpu[v]).toFixed(1)}), ${r.ratio(v, 'before').toFixed(3)}× before (pairs ${pairs}); ` +
          `partitions read ${t.read}, indexes opened ${t.opened}, locked ${t.locked}`,
      );
      rows.push(
        `| ${partitions} | ${v} | ${m(v).toFixed(0)} | ${r.ratio(v, 'before').toFixed(3)}× | ` +
          `${(m(v) - m('none')).toFixed(0)} | ${t.read} / ${t.opened} / ${t.locked} |`,
      );
    }
  }
  console.log(
    `\n| partitions | variant | µs CPU per append | against before (median of the pairs) | ` +
      `the check: µs less none | partitions read / indexes opened / locked |`,
  );
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const row of rows) console.log(row);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
