'use strict';
/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time by package / area and the hottest
 * functions. Used by `npm run bench -- --profile`; also runnable: node bench/lib/cpuprofile-summary.js FILE
 */
const { readFileSync } = require('node:fs');

function area(url, functionName) {
  if (!url) {
    if (functionName === '(garbage collector)') return 'GC';
    if (functionName === '(idle)') return 'idle (waiting for I/O)';
    if (functionName === '(program)') return 'V8/native (program)';
    return `native ${functionName || '(anonymous)'}`;
  }
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1];
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0] === 'internal' ? 'internal' : url.slice(5)}`;
  const src = /\/dist\/src\/([^/]+(?:\/[^/]+)?)/.exec(url);
  if (src) return `tollgate ${src[1]}`;
  return url.replace(/^file:\/\//, '');
}

function summarise(file, top = 20) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  let total = 0;
  const areas = new Map();
  const fns = new Map();
  for (const [id, us] of selfUs) {
    const n = byId.get(id);
    const { functionName, url, lineNumber } = n.callFrame;
    total += us;
    const a = area(url, functionName);
    areas.set(a, (areas.get(a) ?? 0) + us);
    const key =
      `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${lineNumber + 1}` : ''}`.trim();
    fns.set(key, (fns.get(key) ?? 0) + us);
  }
  // Inclusive time: each sample counts once for every distinct function on its stack.
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map();
  const label = (cf) =>
    `${cf.functionName || '(anonymous)'} ${cf.url ? `${cf.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${cf.lineNumber + 1}` : ''}`.trim();
  for (const [id, us] of selfUs) {
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur).callFrame;
      if (cf.functionName === '(root)' || cf.functionName === '(idle)') continue;
      const key = label(cf);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const pct = (us) => (100 * us) / total;
  const sortDesc = (m) => [...m].sort((a, b) => b[1] - a[1]);
  const busy = total - (areas.get('idle (waiting for I/O)') ?? 0);
  return {
    totalMs: total / 1000,
    busyMs: busy / 1000,
    areas: sortDesc(areas)
      .slice(0, top)
      .map(([name, us]) => ({
        name,
        ms: us / 1000,
        pct: pct(us),
        pctOfBusy: name.startsWith('idle') ? NaN : (100 * us) / busy,
      })),
    functions: sortDesc(fns)
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: us / 1000, pct: pct(us) })),
    inclusive: sortDesc(inclusive)
      .slice(0, top * 3)
      .map(([name, us]) => ({ name, ms: us / 1000, pct: pct(us) })),
  };
}

module.exports = { summarise };

if (require.main === module) {
  const s = summarise(process.argv[2], Number(process.argv[3] ?? 25));
  console.log(`total ${s.totalMs.toFixed(0)} ms, busy ${s.busyMs.toFixed(0)} ms`);
  for (const a of s.areas)
    console.log(
      `${a.pct.toFixed(1).padStart(5)}%  ${Number.isNaN(a.pctOfBusy) ? '      ' : `${a.pctOfBusy.toFixed(1).padStart(5)}%b`}  ${a.name}`,
    );
  console.log('');
  for (const f of s.functions) console.log(`${f.pct.toFixed(1).padStart(5)}%  ${f.name}`);
  console.log('\ninclusive (self + callees):');
  for (const f of s.inclusive) console.log(`${f.pct.toFixed(1).padStart(5)}%  ${f.name}`);
}
