'use strict';
/**
 * The guarded-call figure of `npm run bench`: what an agent waits for when it runs an auto-approved, read-only
 * tool through the built SDK (`conversation.guard('get_source', fn)`, fn returning at once), beside one durable
 * round trip to the baseline server, both through the same `fetch`, one call at a time.
 *
 * The SDK is given a counting `fetch`. A request is on the agent's critical path when it started after the
 * guarded function was called and its answer had arrived before the function returned: a result report left in
 * the background is not, and neither is the previous call's report still in flight. Each mode gets its own
 * client and conversation; the modes and the baseline take turns in blocks, so drift of the machine hits all
 * of them alike.
 */
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');
const { performance } = require('node:perf_hooks');
const { summary } = require('./stats');

/** The built SDK (ESM) from packages/sdk/dist, as the bench takes the server from dist/. */
async function loadSdk(root) {
  return import(pathToFileURL(join(root, 'packages', 'sdk', 'dist', 'index.js')).href);
}

/** What a request was for, from its method and path. */
function kindOf(method, url) {
  const path = new URL(url).pathname;
  if (method === 'POST' && /\/tool-calls$/.test(path)) return 'propose';
  if (method === 'POST' && /\/execution$/.test(path)) return 'claim';
  if (method === 'POST' && /\/result$/.test(path)) return 'result';
  if (method === 'GET' && /^\/v1\/tool-calls\//.test(path)) return 'wait';
  return `${method} ${path}`;
}

/** A fetch that keeps when each request started and when its answer (head) arrived. */
function countingFetch() {
  const log = [];
  const fetchImpl = (input, init = {}) => {
    const entry = { kind: kindOf(init.method ?? 'GET', String(input)), started: performance.now(), answered: NaN };
    log.push(entry);
    return globalThis.fetch(input, init).then((res) => {
      entry.answered = performance.now();
      return res;
    });
  };
  return { fetch: fetchImpl, log };
}

/** The requests of `log` on the critical path of a call made at t0 that returned at t1. */
function criticalBetween(log, from, t0, t1) {
  const out = [];
  for (let i = from; i < log.length; i++) {
    const e = log[i];
    if (e.started >= t0 && e.answered <= t1) out.push(e);
  }
  return out;
}

/**
 * One mode: a client with `report` set (or left to the SDK's default when `report` is undefined), its own
 * conversation, and a guarded `get_source` whose function returns at once.
 */
async function guardedClient(sdk, { url, token, report, conversationId }) {
  const counted = countingFetch();
  const options = { url, token, fetch: counted.fetch };
  if (report !== undefined) options.report = report;
  const tollgate = new sdk.Tollgate(options);
  const conv = await tollgate.conversation({
    id: conversationId,
    user: { id: 'ann', roles: ['approver'], name: 'Ann' },
    title: `bench guarded call (${report ?? 'SDK default'})`,
  });
  const getSource = conv.guard('get_source', (args) => ({ id: args.id, title: 'a source', size: 1 }));
  const samples = [];
  const paths = new Map();
  /** Requests sent from the first measured call to the end (reports in flight included, once flushed). */
  let firstKept = -1;
  let total = 0;
  const call = async (i, keep) => {
    const from = counted.log.length;
    if (keep && firstKept < 0) firstKept = from;
    const t0 = performance.now();
    await getSource({ id: `src_${i}`, fields: ['title', 'size'] });
    const t1 = performance.now();
    if (!keep) return;
    const critical = criticalBetween(counted.log, from, t0, t1);
    // The SDK's own time: before its first request started, and after its last answer's head arrived.
    const own = critical.length ? critical[0].started - t0 + (t1 - critical[critical.length - 1].answered) : NaN;
    samples.push({ ms: t1 - t0, requests: critical.length, own });
    const key = critical.map((e) => e.kind).join(' + ') || '(none)';
    paths.set(key, (paths.get(key) ?? 0) + 1);
  };
  return {
    report,
    call,
    /** Waits for reports in flight (background mode), then lets go of the client. */
    async close() {
      if (typeof tollgate.flush === 'function') await tollgate.flush();
      await tollgate.close();
      total = firstKept < 0 ? 0 : counted.log.length - firstKept;
    },
    result() {
      const ms = samples.map((s) => s.ms);
      const requests = samples.map((s) => s.requests);
      return {
        report: report ?? 'default',
        n: samples.length,
        lat: summary(ms),
        criticalRequests: summary(requests),
        sdkOwnMs: summary(samples.map((x) => x.own).filter(Number.isFinite)),
        criticalPaths: Object.fromEntries([...paths].sort((a, b) => b[1] - a[1])),
        requestsPerCall: total / Math.max(1, samples.length),
        resultOnCriticalPath: [...paths.keys()].some((k) => k.includes('result')),
      };
    },
  };
}

/** One durable round trip to the baseline (the same POST as its proposal figure), through the same fetch. */
function baselineClient({ url, path, body }) {
  const samples = [];
  const call = async (_i, keep) => {
    const t0 = performance.now();
    const res = await globalThis.fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
    });
    await res.json();
    const t1 = performance.now();
    if (res.status !== 201) throw new Error(`baseline answered ${res.status}`);
    if (keep) samples.push(t1 - t0);
  };
  return { call, close: async () => undefined, result: () => ({ n: samples.length, lat: summary(samples) }) };
}

/**
 * The SDK alone: the same guarded call against a `fetch` that answers at once, in process (a proposal whose call
 * is claimed, then the result), so what is left is the SDK's own time per call, with no server and no network.
 */
async function sdkAlone(sdk, { report, n }) {
  const json = (status, body) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const call = { status: 'executed', toolName: 'get_source', arguments: { id: 'src_1' }, conversationId: 'alone' };
  let k = 0;
  const fetchImpl = async (url, init) => {
    const path = new URL(url).pathname;
    if (path === '/v1/conversations') return json(201, { id: 'alone', status: 'active' });
    if (path.endsWith('/tool-calls')) {
      const id = `tc_alone_${++k}`;
      return json(201, {
        conversation: { id: 'alone' },
        toolCalls: [{ ...call, id }],
        claims: [{ toolCallId: id, arguments: call.arguments, receipt: 'stub' }],
      });
    }
    if (path.endsWith('/result')) return json(200, { ...call, id: `tc_alone_${k}`, status: 'completed' });
    return json(404, { code: 'not_found' });
  };
  const tollgate = new sdk.Tollgate({ url: 'http://127.0.0.1:9', token: 'stub', fetch: fetchImpl, report });
  const conv = await tollgate.conversation({ id: 'alone' });
  const f = conv.guard('get_source', (args) => ({ id: args.id }));
  const ms = [];
  for (let i = 0; i < n + 100; i++) {
    const t0 = performance.now();
    await f({ id: 'src_1' });
    if (i >= 100) ms.push(performance.now() - t0);
  }
  if (typeof tollgate.flush === 'function') await tollgate.flush();
  return summary(ms);
}

/**
 * Runs the guarded-call figure: `report: 'await'` and `report: 'background'` through the SDK, and the baseline,
 * `n` measured calls each after `warm` warm-up calls, in turns of `block` calls. Also asks the SDK's default
 * with a few calls (does its guard return before the result is reported?), so the target row can use it.
 */
async function runGuardedBench({ root, tollgateUrl, token, baselineUrl, baselinePath, baselineBody, n, warm, block }) {
  const sdk = await loadSdk(root);
  const tag = Date.now().toString(36);
  const modes = {
    await: await guardedClient(sdk, { url: tollgateUrl, token, report: 'await', conversationId: `guard-await-${tag}` }),
    background: await guardedClient(sdk, {
      url: tollgateUrl,
      token,
      report: 'background',
      conversationId: `guard-background-${tag}`,
    }),
    baseline: baselineClient({ url: baselineUrl, path: baselinePath, body: baselineBody }),
  };
  const probe = await guardedClient(sdk, {
    url: tollgateUrl,
    token,
    report: undefined,
    conversationId: `guard-default-${tag}`,
  });
  try {
    let i = 0;
    for (const m of Object.values(modes)) for (let k = 0; k < warm; k++) await m.call(i++, false);
    for (let k = 0; k < 20; k++) await probe.call(i++, k >= 5);
    for (let done = 0; done < n; done += block) {
      for (const m of Object.values(modes)) for (let k = 0; k < Math.min(block, n - done); k++) await m.call(i++, true);
    }
  } finally {
    // Reports still in flight are sent before the clients go (tollgate.flush()), as an agent's exit would.
    for (const m of [...Object.values(modes), probe]) await m.close();
  }
  const d = probe.result();
  const alone = {
    await: await sdkAlone(sdk, { report: 'await', n: 1000 }),
    background: await sdkAlone(sdk, { report: 'background', n: 1000 }),
  };
  return {
    sdkAlone: alone,
    sdkHasReportOption: typeof sdk.Tollgate.prototype.flush === 'function',
    defaultReport: d.resultOnCriticalPath ? 'await' : 'background',
    defaultProbe: d,
    await: modes.await.result(),
    background: modes.background.result(),
    baseline: modes.baseline.result(),
  };
}

module.exports = { runGuardedBench, loadSdk, kindOf };
