'use strict';
/**
 * The chain hash of one event, in SQL as `tollgate_append_events` computes it and in Node as the service could:
 * sha256 over prevHash + head + prevHash + mid + seq + tail of a proposal's two events (templates made by the
 * real EventStore), and in SQL the jsonb work that reads the template out of the function's parameter.
 * Fastest of `--rounds` rounds each (the load of a shared machine only ever adds time).
 *
 *   npm run build && node bench/pg/chain-hash-cost.js [--n 50000] [--rounds 5]
 */
require('reflect-metadata');
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { Client } = require('pg');
const W = require('./proposal-writes');

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const n = Number(opt('n', 50000));
const rounds = Number(opt('rounds', 5));

function cpuSeconds(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

async function main() {
  const store = new W.EventStore({ instanceId: 'bench', databaseUrl: undefined });
  const records = W.proposal(store, 'auto-1', 1).records; // ToolCallProposed, ToolCallAutoApproved
  const c = new Client({ connectionString: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres' });
  await c.connect();
  const { rows } = await c.query('SELECT pg_backend_pid() AS pid');
  const pid = rows[0].pid;
  const prev = 'a'.repeat(64);
  // Per event, over n stored copies of its record (so that nothing is folded into a constant at plan time):
  // the jsonb reads of the function's INSERT, and its hash; each less the scan alone.
  const ALL_FIELDS = `(e->>'head') || (e->>'mid') || (e->>'tail') || (e->>'id') || (e->>'type') || (e->>'at')
    || (e->>'recordedAt') || (e->>'instanceId') || coalesce(e->>'correlationId', '') || (e->>'conversationId')
    || (e->>'toolCallId') || (e->>'toolName') || (e->'actor')::text || (e->'data')::text`;
  const SQL = {
    scan: `SELECT count(e) FROM zz_rec`,
    template: `SELECT count((e->>'head') || (e->>'mid') || (e->>'tail')) FROM zz_rec`,
    jsonb: `SELECT count(${ALL_FIELDS}) FROM zz_rec`,
    sha: `SELECT count(encode(sha256(convert_to($1 || (e->>'head') || $1 || (e->>'mid') || '12345' || (e->>'tail'), 'UTF8')), 'hex')) FROM zz_rec`,
  };
  const best = {};
  for (let r = 0; r < rounds; r++) {
    for (const record of records) {
      await c.query('DROP TABLE IF EXISTS zz_rec');
      await c.query('CREATE TEMP TABLE zz_rec AS SELECT $1::jsonb AS e FROM generate_series(1, $2)', [
        JSON.stringify(record),
        n,
      ]);
      for (const [k, text] of Object.entries(SQL)) {
        const cpu0 = cpuSeconds(pid);
        await c.query(text, k === 'sha' ? [prev] : []);
        const us = ((cpuSeconds(pid) - cpu0) * 1e6) / n;
        const key = `${k} ${record.type}`;
        best[key] = Math.min(best[key] ?? Infinity, us);
      }
      const cpu0 = process.cpuUsage();
      let x = 0;
      for (let i = 0; i < n; i++)
        x += createHash('sha256')
          .update(prev + record.head + prev + record.mid + String(i) + record.tail)
          .digest('hex').length;
      const used = process.cpuUsage(cpu0);
      const key = `node ${record.type}`;
      best[key] = Math.min(best[key] ?? Infinity, (used.user + used.system) / n + x * 0);
    }
  }
  await c.end();
  console.log(`| event | canonical bytes | SQL: sha256 + text | SQL: reading the jsonb record | Node: sha256 + text |`);
  console.log('| --- | --- | --- | --- | --- |');
  for (const record of records) {
    const t = record.type;
    const bytes = Buffer.byteLength(prev + record.head + prev + record.mid + '12345' + record.tail);
    const sha = best[`sha ${t}`] - best[`template ${t}`];
    const jsonb = best[`jsonb ${t}`] - best[`scan ${t}`];
    console.log(
      `| ${t} | ${bytes} | ${sha.toFixed(2)} µs | ${jsonb.toFixed(2)} µs | ${best[`node ${t}`].toFixed(2)} µs |`,
    );
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
