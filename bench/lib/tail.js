'use strict';
/**
 * `npm run bench -- --tail`: lays each request of the fixed-rate run over what was happening meanwhile, to say
 * where the tail at 300 req/s comes from. Inputs, all in milliseconds since the epoch:
 *   - requests: {due, done} of each answered request (the bench's paced load);
 *   - monitor: the Tollgate's own timeline (bench/lib/loop-monitor.js): GC, event-loop stalls, CPU per 50 ms,
 *     SQL statements by kind;
 *   - activity: samples of pg_stat_activity every 50 ms (autovacuum workers of the bench's database, a
 *     checkpoint being written) and of the machine's CPU.
 * A request "meets" something when it overlaps the request's window, from when it was due to when its answer
 * had arrived. The figures are conditional, not causal: a slow request meets more of everything, simply by
 * lasting longer. The comparison across latency classes, and the episodes of the worst requests, show which
 * of them stands out.
 */
const { summary, fmt } = require('./stats');

/** Sum of the parts of [a, b) inside [lo, hi). */
function overlap(a, b, lo, hi) {
  return Math.max(0, Math.min(b, hi) - Math.max(a, lo));
}

/** Intervals sorted by start, and a scan of those overlapping [lo, hi) (intervals are short: a bounded look-back). */
function index(intervals, maxLen = 2000) {
  const xs = intervals
    .filter((x) => Number.isFinite(x.start) && Number.isFinite(x.end))
    .sort((a, b) => a.start - b.start);
  const starts = Float64Array.from(xs, (x) => x.start);
  return (lo, hi) => {
    // first interval that may end after lo: start > lo - maxLen
    let l = 0;
    let r = starts.length;
    while (l < r) {
      const m = (l + r) >> 1;
      if (starts[m] < lo - maxLen) l = m + 1;
      else r = m;
    }
    const out = [];
    for (let i = l; i < xs.length && xs[i].start < hi; i++) if (xs[i].end > lo) out.push(xs[i]);
    return out;
  };
}

/** Outbox statements closer than `gapMs` apart make one pass. */
function passesOf(sql, gapMs = 5) {
  const xs = sql.filter((s) => s.kind === 'outbox' && Number.isFinite(s.end)).sort((a, b) => a.at - b.at);
  const passes = [];
  for (const s of xs) {
    const last = passes[passes.length - 1];
    if (last && s.at - last.end <= gapMs) {
      last.end = Math.max(last.end, s.end);
      last.statements++;
    } else passes.push({ start: s.at, end: s.end, statements: 1 });
  }
  return passes;
}

function analyseTail({ requests, monitor, activity, label }) {
  const lines = [];
  const say = (s = '') => lines.push(s);
  const t0 = Math.min(...requests.map((r) => r.due));
  const tEnd = Math.max(...requests.map((r) => r.done));
  const lat = requests.map((r) => r.done - r.due);
  const all = summary(lat);

  const gc = monitor.gc.map((g) => ({ ...g, start: g.at, end: g.at + g.ms }));
  const stalls = monitor.stalls.map((s) => ({ ...s, start: s.at, end: s.at + s.ms }));
  const saves = monitor.sql
    .filter((s) => s.kind === 'grouped save' || s.kind === 'lone save')
    .map((s) => ({ ...s, start: s.at, end: s.end, saves: s.kind === 'lone save' ? 1 : s.saves }));
  const passes = passesOf(monitor.sql);
  const vacuum = activity.samples
    .filter((a) => a.autovacuum.length > 0)
    .map((a) => ({ start: a.at - 25, end: a.at + 25, what: a.autovacuum }));
  const checkpoint = activity.samples.filter((a) => a.checkpoint).map((a) => ({ start: a.at - 25, end: a.at + 25 }));
  const busy = activity.machine.map((m) => ({ start: m.at - m.ms, end: m.at, busy: m.busy }));
  const cpu = monitor.cpu.map((c) => ({ start: c.at - 50, end: c.at, ms: c.ms }));

  const find = {
    gc: index(gc),
    stalls: index(stalls, 5000),
    saves: index(saves, 10_000),
    passes: index(passes, 10_000),
    vacuum: index(vacuum),
    checkpoint: index(checkpoint),
    busy: index(busy),
    cpu: index(cpu),
  };

  /** What one window [lo, hi) met. */
  const met = (lo, hi) => {
    const g = find.gc(lo, hi);
    const st = find.stalls(lo, hi);
    const sv = find.saves(lo, hi);
    const ps = find.passes(lo, hi);
    const bz = find.busy(lo, hi);
    const cp = find.cpu(lo, hi);
    const span = Math.max(1e-6, hi - lo);
    const weighted = (xs, f) => {
      let w = 0;
      let s = 0;
      for (const x of xs) {
        const o = overlap(x.start, x.end, lo, hi);
        w += o;
        s += o * f(x);
      }
      return w > 0 ? s / w : NaN;
    };
    return {
      gcMs: g.reduce((a, x) => a + overlap(x.start, x.end, lo, hi), 0),
      majorGcMs: g.filter((x) => x.kind === 'major').reduce((a, x) => a + overlap(x.start, x.end, lo, hi), 0),
      maxStall: st.reduce((a, x) => Math.max(a, x.ms), 0),
      stallMs: st.reduce((a, x) => a + overlap(x.start, x.end, lo, hi), 0),
      passMs: ps.reduce((a, x) => a + overlap(x.start, x.end, lo, hi), 0),
      passes: ps.length,
      maxSave: sv.reduce((a, x) => Math.max(a, x.end - x.start), 0),
      maxBatch: sv.reduce((a, x) => Math.max(a, Number.isFinite(x.saves) ? x.saves : 0), 0),
      vacuum: find.vacuum(lo, hi).length > 0,
      vacuumWhat: [...new Set(find.vacuum(lo, hi).flatMap((v) => v.what))],
      checkpoint: find.checkpoint(lo, hi).length > 0,
      busy: weighted(bz, (x) => x.busy),
      cpuPct: (100 * cp.reduce((a, x) => a + x.ms * (overlap(x.start, x.end, lo, hi) / 50), 0)) / span,
    };
  };

  const rows = requests.map((r) => ({ ...r, ms: r.done - r.due, met: met(r.due, r.done) }));
  const sorted = [...rows].sort((a, b) => a.ms - b.ms);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].ms;
  const classes = [
    ['≤ p50', 0, 50],
    ['p50–p90', 50, 90],
    ['p90–p99', 90, 99],
    ['> p99', 99, 100],
  ].map(([name, lo, hi]) => {
    const xs = sorted.slice(Math.floor((lo / 100) * sorted.length), Math.floor((hi / 100) * sorted.length));
    const mean = (f) => xs.reduce((a, x) => a + f(x), 0) / Math.max(1, xs.length);
    const share = (f) => (100 * xs.filter(f).length) / Math.max(1, xs.length);
    return {
      name,
      n: xs.length,
      ms: mean((x) => x.ms),
      gcShare: share((x) => x.met.gcMs > 0),
      gcMs: mean((x) => x.met.gcMs),
      majorShare: share((x) => x.met.majorGcMs > 0),
      stall10Share: share((x) => x.met.maxStall >= 10),
      maxStall: mean((x) => x.met.maxStall),
      stallMs: mean((x) => x.met.stallMs),
      passShare: share((x) => x.met.passes > 0),
      passMs: mean((x) => x.met.passMs),
      maxSave: mean((x) => x.met.maxSave),
      maxBatch: mean((x) => x.met.maxBatch),
      vacuumShare: share((x) => x.met.vacuum),
      checkpointShare: share((x) => x.met.checkpoint),
      busy: mean((x) => (Number.isFinite(x.met.busy) ? x.met.busy : 0)),
      cpuPct: mean((x) => x.met.cpuPct),
    };
  });

  const wall = tEnd - t0;
  const inRun = (x) => x.start >= t0 && x.start < tEnd;
  const gcRun = gc.filter(inRun);
  const byKind = {};
  for (const g of gcRun) {
    const k = (byKind[g.kind] ??= { n: 0, ms: 0, max: 0 });
    k.n++;
    k.ms += g.ms;
    k.max = Math.max(k.max, g.ms);
  }
  const stallRun = stalls.filter(inRun);
  const saveRun = saves.filter(inRun);
  const passRun = passes.filter(inRun);
  const saveMs = summary(saveRun.map((s) => s.end - s.start));
  const batch = summary(saveRun.map((s) => s.saves).filter(Number.isFinite));
  const grouped = saveRun.filter((s) => s.kind === 'grouped save').length;
  const vacuumTables = [...new Set(vacuum.filter(inRun).flatMap((v) => v.what))];
  const vacuumMs = vacuum.filter(inRun).length * 50;
  const cpuRun = cpu.filter(inRun);

  say(`\n== the tail of ${label}`);
  say(
    `${rows.length} requests over ${fmt(wall / 1000, 2)} s: p50 ${fmt(all.p50, 2)} ms, p90 ${fmt(all.p90, 2)} ms, p99 ${fmt(all.p99, 2)} ms, max ${fmt(all.max)} ms (p99/p50 ${fmt(all.p99 / all.p50, 2)}×)`,
  );
  say(
    `Tollgate process CPU ${fmt((100 * cpuRun.reduce((a, c) => a + c.ms, 0)) / wall)}% of one core; machine ${fmt(
      100 *
        (busy.filter(inRun).reduce((a, b) => a + b.busy * (b.end - b.start), 0) /
          Math.max(
            1,
            busy.filter(inRun).reduce((a, b) => a + (b.end - b.start), 0),
          )),
    )}% busy`,
  );
  say(
    `GC: ${Object.entries(byKind)
      .map(([k, v]) => `${k} ${v.n}× (${fmt(v.ms)} ms in all, longest ${fmt(v.max, 2)} ms)`)
      .join(', ')}; ${fmt((100 * gcRun.reduce((a, g) => a + g.ms, 0)) / wall, 2)}% of the time`,
  );
  say(
    `event-loop stalls (timer late by > 2 ms): ${stallRun.length}, of which ≥ 10 ms: ${stallRun.filter((s) => s.ms >= 10).length}, ≥ 50 ms: ${stallRun.filter((s) => s.ms >= 50).length}; longest ${fmt(Math.max(0, ...stallRun.map((s) => s.ms)))} ms; ${fmt((100 * stallRun.reduce((a, s) => a + s.ms, 0)) / wall, 2)}% of the time`,
  );
  say(
    `saves (commits): ${saveRun.length} (${grouped} grouped), ${fmt(batch.mean, 2)} saves each on average (max ${fmt(batch.max, 0)}); statement time p50 ${fmt(saveMs.p50, 2)} ms, p99 ${fmt(saveMs.p99, 2)} ms, max ${fmt(saveMs.max)} ms`,
  );
  say(
    `outbox passes: ${passRun.length} (${fmt(passRun.length / (wall / 1000))}/s), ${fmt(passRun.reduce((a, p) => a + p.statements, 0) / Math.max(1, passRun.length), 2)} statements each, ${fmt(summary(passRun.map((p) => p.end - p.start)).p50, 2)} ms p50 from first statement sent to last answered`,
  );
  say(
    `autovacuum of this database: ${vacuumTables.length ? `${vacuumTables.join(', ')} (seen in samples covering ~${fmt(vacuumMs / 1000, 2)} s)` : 'none seen'}; checkpoint written: ${checkpoint.filter(inRun).length ? `in samples covering ~${fmt((checkpoint.filter(inRun).length * 50) / 1000, 2)} s` : 'none seen'}`,
  );
  say('\nwhat the requests met, by latency class (share of requests, or mean per request):');
  const header = [
    'class',
    'n',
    'latency',
    'met GC',
    'GC ms',
    'met major GC',
    'met stall ≥10ms',
    'longest stall',
    'met outbox pass',
    'longest save',
    'largest batch',
    'met autovacuum',
    'met checkpoint',
    'machine busy',
    'Tollgate CPU',
  ];
  const cells = classes.map((c) => [
    c.name,
    String(c.n),
    `${fmt(c.ms, 2)} ms`,
    `${fmt(c.gcShare)}%`,
    fmt(c.gcMs, 2),
    `${fmt(c.majorShare)}%`,
    `${fmt(c.stall10Share)}%`,
    `${fmt(c.maxStall, 2)} ms`,
    `${fmt(c.passShare)}%`,
    `${fmt(c.maxSave, 2)} ms`,
    fmt(c.maxBatch, 2),
    `${fmt(c.vacuumShare)}%`,
    `${fmt(c.checkpointShare)}%`,
    `${fmt(100 * c.busy)}%`,
    `${fmt(c.cpuPct)}%`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  say(header.map((h, i) => h.padEnd(widths[i])).join('  '));
  for (const r of cells) say(r.map((c, i) => c.padEnd(widths[i])).join('  '));

  // Requests that met none of GC ≥ 1 ms, a stall ≥ 10 ms, autovacuum, a checkpoint: what is left is queueing.
  const quiet = rows.filter((r) => r.met.gcMs < 1 && r.met.maxStall < 10 && !r.met.vacuum && !r.met.checkpoint);
  const q = summary(quiet.map((r) => r.ms));
  const noVac = summary(rows.filter((r) => !r.met.vacuum).map((r) => r.ms));
  const noStall = summary(rows.filter((r) => r.met.maxStall < 10).map((r) => r.ms));
  say(
    `\nrequests that met no GC ≥ 1 ms, no stall ≥ 10 ms, no autovacuum and no checkpoint: ${quiet.length} of ${rows.length}, p50 ${fmt(q.p50, 2)} ms, p99 ${fmt(q.p99, 2)} ms` +
      `; without autovacuum: p99 ${fmt(noVac.p99, 2)} ms (${noVac.n}); without a stall ≥ 10 ms: p99 ${fmt(noStall.p99, 2)} ms (${noStall.n})`,
  );

  // Episodes: the windows of the slowest requests, merged where they overlap.
  const slowMs = at(99);
  const slow = rows.filter((r) => r.ms >= slowMs).sort((a, b) => a.due - b.due);
  const episodes = [];
  for (const r of slow) {
    const last = episodes[episodes.length - 1];
    if (last && r.due <= last.end) {
      last.end = Math.max(last.end, r.done);
      last.n++;
      last.max = Math.max(last.max, r.ms);
    } else episodes.push({ start: r.due, end: r.done, n: 1, max: r.ms });
  }
  episodes.sort((a, b) => b.max - a.max);
  say(
    `\nthe slowest requests (≥ ${fmt(slowMs, 2)} ms: ${slow.length}) in ${episodes.length} episodes (overlapping windows merged); the worst ones, and what happened during each:`,
  );
  for (const e of episodes.slice(0, 8)) {
    const m = met(e.start, e.end);
    say(
      `  at ${fmt((e.start - t0) / 1000, 2)} s, ${fmt(e.end - e.start)} ms, ${e.n} slow (max ${fmt(e.max)} ms): GC ${fmt(m.gcMs, 2)} ms (major ${fmt(m.majorGcMs, 2)}), stalls ${fmt(m.stallMs, 2)} ms (longest ${fmt(m.maxStall, 2)}), ` +
        `outbox ${m.passes} passes (${fmt(m.passMs, 2)} ms in flight), longest save ${fmt(m.maxSave, 2)} ms (batch ≤ ${m.maxBatch}), ` +
        `autovacuum ${m.vacuum ? m.vacuumWhat.join(', ') : 'no'}, checkpoint ${m.checkpoint ? 'yes' : 'no'}, machine ${fmt(100 * m.busy)}% busy, Tollgate CPU ${fmt(m.cpuPct)}%`,
    );
  }
  return {
    lines,
    json: {
      latency: all,
      classes,
      gc: byKind,
      stalls: {
        n: stallRun.length,
        ge10: stallRun.filter((s) => s.ms >= 10).length,
        max: Math.max(0, ...stallRun.map((s) => s.ms)),
      },
      saves: { n: saveRun.length, grouped, batch, ms: saveMs },
      outboxPasses: passRun.length,
      autovacuum: vacuumTables,
      quiet: q,
      withoutVacuum: noVac,
      withoutStall: noStall,
      episodes: episodes.slice(0, 8),
    },
  };
}

module.exports = { analyseTail, overlap, passesOf };
