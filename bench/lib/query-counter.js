'use strict';
/**
 * Preloaded (`node -r bench/lib/query-counter.js bin/tollgate.js serve`) by `npm run bench -- --profile`, never in
 * a measured run. It
 *   - counts every SQL statement the process sends through `pg`, with the time from sending it to its answer
 *     (which includes waiting for row locks and for the commit's WAL flush), grouped by statement shape;
 *   - with $PROFILE_DIR set, keeps a V8 CPU profile running (node:inspector, in-process).
 * Each SIGUSR2 closes a phase: it writes the statement counts to $QUERY_COUNTER_FILE (JSON) and the phase's CPU
 * profile to $PROFILE_DIR/phase-N.cpuprofile, then starts counting and profiling afresh. So a benchmark profiles
 * exactly the load it drives, without start-up.
 */
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { performance } = require('node:perf_hooks');
const pg = require('pg');

const stats = new Map();

function shape(text) {
  const t = String(text).replace(/\s+/g, ' ').trim();
  return t.length > 110 ? `${t.slice(0, 110)}…` : t;
}

function count(text, started) {
  const key = shape(text);
  let s = stats.get(key);
  if (!s) stats.set(key, (s = { n: 0, ms: 0 }));
  s.n += 1;
  s.ms += performance.now() - started;
}

const original = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(config, values, callback) {
  const text = typeof config === 'string' ? config : config?.text;
  if (text === undefined || (config && typeof config.submit === 'function')) return original.apply(this, arguments);
  const started = performance.now();
  const cb = typeof values === 'function' ? values : callback;
  if (typeof cb === 'function') {
    const wrapped = (err, res) => {
      count(text, started);
      cb(err, res);
    };
    return typeof values === 'function'
      ? original.call(this, config, wrapped)
      : original.call(this, config, values, wrapped);
  }
  const result = original.apply(this, arguments);
  if (result && typeof result.then === 'function') {
    result.then(
      () => count(text, started),
      () => count(text, started),
    );
  }
  return result;
};

let session;
let phase = 0;
if (process.env.PROFILE_DIR) {
  const inspector = require('node:inspector');
  session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable', () =>
    session.post('Profiler.setSamplingInterval', { interval: 500 }, () => session.post('Profiler.start')),
  );
}

process.on('SIGUSR2', () => {
  const rows = [...stats]
    .map(([sql, s]) => ({ sql, n: s.n, ms: Math.round(s.ms * 10) / 10 }))
    .sort((a, b) => b.ms - a.ms);
  stats.clear();
  if (process.env.QUERY_COUNTER_FILE) writeFileSync(process.env.QUERY_COUNTER_FILE, JSON.stringify(rows, null, 1));
  if (session) {
    const n = phase++;
    session.post('Profiler.stop', (err, res) => {
      if (!err) writeFileSync(join(process.env.PROFILE_DIR, `phase-${n}.cpuprofile`), JSON.stringify(res.profile));
      session.post('Profiler.start');
    });
  }
});
