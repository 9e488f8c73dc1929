'use strict';
/**
 * Preloaded (`node -r bench/lib/loop-monitor.js bin/tollgate.js serve`) by `npm run bench -- --tail`, never in a
 * measured run. It keeps a timeline of what the process was doing, for the bench to lay its requests over:
 *   - every garbage collection (perf_hooks `gc` entries: when, how long, which kind);
 *   - event-loop stalls: a 5 ms interval timer, and each time it fires more than 2 ms late, when and by how much;
 *   - the process's CPU time every 50 ms (process.cpuUsage: main thread and the rest together);
 *   - every SQL statement sent through `pg`: when it was sent and answered, what kind (the conversation read, a
 *     grouped save and how many saves it carried, a lone save, an outbox statement, other).
 * Times are milliseconds since the epoch (performance.timeOrigin + performance.now(), fractional), so they line
 * up with the bench's own clock on the same machine. Each SIGUSR2 writes the timeline since the last one to
 * $LOOP_MONITOR_FILE (JSON) and starts afresh.
 *
 * With LOOP_MONITOR_OUTBOX=off this instance runs no outbox pass at all (neither after its commits nor on its
 * timer): the bench compares it with one that does, under the same load, to measure what the passes cost.
 * Another instance delivers the events meanwhile.
 */
const { writeFileSync } = require('node:fs');
const { performance, PerformanceObserver, constants } = require('node:perf_hooks');
const pg = require('pg');

if (process.env.LOOP_MONITOR_OUTBOX === 'off') {
  require('reflect-metadata'); // before the decorated class is loaded, as bin/tollgate.js does
  const { join } = require('node:path');
  const { OutboxRelay } = require(
    join(__dirname, '..', '..', 'dist', 'src', 'infrastructure', 'outbox', 'outbox-relay.js'),
  );
  OutboxRelay.prototype.kick = function kick() {};
  OutboxRelay.prototype.onApplicationBootstrap = function onApplicationBootstrap() {};
}

const now = () => performance.timeOrigin + performance.now();
let gc = [];
let stalls = [];
let cpu = [];
let sql = [];

const GC_KINDS = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gc.push({ at: performance.timeOrigin + e.startTime, ms: e.duration, kind: GC_KINDS[e.detail?.kind] ?? '?' });
  }
}).observe({ entryTypes: ['gc'] });

const TICK_MS = 5;
let expected = performance.now() + TICK_MS;
setInterval(() => {
  const t = performance.now();
  const late = t - expected;
  if (late > 2) stalls.push({ at: performance.timeOrigin + t - late, ms: late });
  expected = t + TICK_MS;
}, TICK_MS).unref();

let lastCpu = process.cpuUsage();
setInterval(() => {
  const c = process.cpuUsage();
  cpu.push({ at: now(), ms: (c.user - lastCpu.user + c.system - lastCpu.system) / 1000 });
  lastCpu = c;
}, 50).unref();

/** What a statement is, from its text (and, for a grouped save, how many saves went in it). */
function kindOf(text, values) {
  if (text.includes('outbox_cursors') || text.includes('audit_heads h') || /\bwebhooks?\b/.test(text))
    return { kind: 'outbox' };
  if (/^\s*WITH conv AS/.test(text) && Array.isArray(values) && values.length === 6) {
    let saves = NaN;
    try {
      saves = JSON.parse(values[1]).length;
    } catch {
      /* unknown size */
    }
    return { kind: 'grouped save', saves };
  }
  if (text.includes('tollgate_append_events')) return { kind: 'lone save' };
  if (/\bFROM events\b/.test(text)) return { kind: 'events read' };
  if (/^\s*(BEGIN|COMMIT|ROLLBACK|SELECT 1)\b/i.test(text)) return { kind: 'other' };
  return { kind: 'read' };
}

const original = pg.Client.prototype.query;
pg.Client.prototype.query = function monitoredQuery(config, values, callback) {
  const text = typeof config === 'string' ? config : config?.text;
  if (text === undefined || (config && typeof config.submit === 'function')) return original.apply(this, arguments);
  const params = Array.isArray(values) ? values : config?.values;
  const entry = { at: now(), end: NaN, ...kindOf(text, params) };
  sql.push(entry);
  const done = () => (entry.end = now());
  const cb = typeof values === 'function' ? values : callback;
  if (typeof cb === 'function') {
    const wrapped = (err, res) => {
      done();
      cb(err, res);
    };
    return typeof values === 'function'
      ? original.call(this, config, wrapped)
      : original.call(this, config, values, wrapped);
  }
  const result = original.apply(this, arguments);
  if (result && typeof result.then === 'function') result.then(done, done);
  return result;
};

process.on('SIGUSR2', () => {
  const out = { gc, stalls, cpu, sql, until: now() };
  gc = [];
  stalls = [];
  cpu = [];
  sql = [];
  if (process.env.LOOP_MONITOR_FILE) writeFileSync(process.env.LOOP_MONITOR_FILE, JSON.stringify(out));
});
