#!/usr/bin/env node
'use strict';
/**
 * Approval-loop and scale-out benchmark (issue 4): `npm run bench`.
 *
 * On a fresh PostgreSQL database it starts two Tollgate instances (the built service, `node bin/tollgate.js
 * serve`, as child processes) and the minimal baseline (bench/baseline-server.js: node:http + pg doing one
 * proposal's durable writes), then measures, in one run:
 *   1. auto-approved proposals: max throughput (autocannon, closed loop; over 500 conversations, over 10
 *      conversations so that concurrent proposals hit the same conversation, and spread over 16 tenants),
 *      p50/p99 latency at a fixed 300 req/s (open loop, bench/lib/paced.js), and one request at a time (p50),
 *      Tollgate beside the baseline; a guarded call through the built SDK (bench/lib/guarded.js), with its
 *      result reported in the background and awaited, beside one durable round trip to the baseline, and the
 *      requests on the agent's critical path; the two max-throughput loads again with two more Tollgate instances behind a
 *      private PgBouncer in transaction mode (bench/lib/pgbouncer.js; skipped when pgbouncer is not installed);
 *   2. the full human loop (propose → long-poll while a person decides on the other instance → claim →
 *      result), loops per second;
 *   3. cross-instance wake latency (long-poll on A, decision on B), p50/p99, with A otherwise idle and with A
 *      taking proposals at a third of its max throughput, beside a client that polls every 3 s against the same
 *      decision schedule;
 *   4. RSS of each process under that load (peak of /proc/<pid>/status VmRSS);
 * plus, in-process, policy evaluation on a 1,000-rule policy beside a trivial function call.
 * Every figure is printed with its target (met / MISSED) and its ratio to the baseline measured in the same run.
 *
 *   npm run bench                    # about 4 minutes
 *   npm run bench -- --quick         # about 2 minutes, fewer samples
 *   npm run bench -- --profile       # no figures: CPU profile + SQL statements per request of a Tollgate under load
 *   npm run bench -- --tail          # no figures: what the requests at 300 req/s met (GC, event-loop stalls,
 *                                    # commits, outbox passes, autovacuum), by latency class (bench/lib/tail.js)
 *   npm run bench -- --tail --rate 150   # the fixed-rate phases at another rate (default 300)
 *   npm run bench -- --tail --tail-node-options "--max-semi-space-size=64"   # what the third monitored Tollgate
 *                                    # adds to NODE_OPTIONS (a GC setting to compare; this is the default)
 *   npm run bench -- --no-pgbouncer  # leave out the PgBouncer run (its rows say so)
 *   npm run bench -- --md out.md     # also write the table (Markdown) to out.md
 *   npm run bench -- --node-options "--max-old-space-size=128"   # NODE_OPTIONS for the Tollgate processes only
 *                                    # (default: --max-old-space-size=256, as `npm start` runs it; "" for none)
 *   DATABASE_URL=postgres://user@host:5432/postgres npm run bench   # admin URL (default postgres://postgres@127.0.0.1:5432/postgres)
 *
 * It builds dist/ first when src/ is newer. Traffic goes to 127.0.0.1 only; every phase is bounded in time and
 * count; the database is dropped at the end, on failure and on Ctrl-C (unless --keep).
 */
const { execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync, readFileSync } = require('node:fs');
const { cpus, loadavg, tmpdir, totalmem } = require('node:os');
const { join } = require('node:path');
const { performance } = require('node:perf_hooks');

const ROOT = join(__dirname, '..');

// ---------------------------------------------------------------- options

function parseArgs(argv) {
  const o = {
    quick: false,
    profile: false,
    tail: false,
    keep: false,
    pgbouncer: true,
    md: undefined,
    json: undefined,
    nodeOptions: '--max-old-space-size=256',
    rate: 300,
    tailNodeOptions: '--max-semi-space-size=64',
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') o.quick = true;
    else if (a === '--profile') o.profile = true;
    else if (a === '--tail') o.tail = true;
    else if (a === '--keep') o.keep = true;
    else if (a === '--no-pgbouncer') o.pgbouncer = false;
    else if (a === '--md') o.md = argv[++i];
    else if (a === '--json') o.json = argv[++i];
    else if (a === '--node-options') o.nodeOptions = argv[++i] ?? '';
    else if (a === '--tail-node-options') o.tailNodeOptions = argv[++i] ?? '';
    else if (a === '--rate') {
      o.rate = Number(argv[++i]);
      if (!(o.rate > 0)) {
        console.error('--rate needs a number of requests per second');
        process.exit(2);
      }
    } else if (a === '--help' || a === '-h') {
      console.log(
        'usage: node bench/run.js [--quick] [--profile] [--tail] [--tail-node-options "FLAGS"] [--rate N] [--keep] [--no-pgbouncer] [--md FILE] [--json FILE] [--node-options "FLAGS"]',
      );
      process.exit(0);
    } else {
      console.error(`unknown option ${a}`);
      process.exit(2);
    }
  }
  return o;
}

const OPTS = parseArgs(process.argv.slice(2));
const FULL = !OPTS.quick;
const P = {
  warmupS: FULL ? 3 : 2,
  maxRounds: FULL ? 2 : 1, // Tollgate and baseline alternate, each round
  maxS: FULL ? 8 : 4,
  connections: 16,
  rate: OPTS.rate, // the fixed rate (--rate N; 300 by default, as the target says)
  rateS: FULL ? 12 : 5,
  autoConversations: 500,
  hotConversations: 10, // the contended load: the same proposals over 10 conversations
  singleSamples: FULL ? 2000 : 500, // auto-approved proposals one at a time
  guardedSamples: FULL ? 1000 : 300, // guarded calls through the SDK, per mode, one at a time
  loops: 16,
  loopS: FULL ? 15 : 6,
  wakeCalls: FULL ? 200 : 100,
  wakeWindowS: FULL ? 8 : 4, // decisions are spread over this window
  policySamples: FULL ? 200_000 : 50_000,
};

// ---------------------------------------------------------------- build

function newest(dir, test) {
  let t = 0;
  if (!existsSync(dir)) return 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) t = Math.max(t, newest(p, test));
    else if (test(e.name)) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}

/** Builds dist/ (tsc -p tsconfig.build.json) when it is missing or older than src/, migrations/ or the tsconfigs. */
function ensureBuilt() {
  const ts = (n) => n.endsWith('.ts') && !n.endsWith('.spec.ts');
  const mtime = (p) => (existsSync(p) ? statSync(p).mtimeMs : 0);
  const sources = Math.max(
    newest(join(ROOT, 'src'), ts),
    newest(join(ROOT, 'migrations'), ts),
    mtime(join(ROOT, 'tsconfig.json')),
    mtime(join(ROOT, 'tsconfig.build.json')),
  );
  const built = existsSync(join(ROOT, 'dist', 'src', 'server.js'))
    ? Math.max(
        newest(join(ROOT, 'dist', 'src'), (n) => n.endsWith('.js')),
        newest(join(ROOT, 'dist', 'migrations'), (n) => n.endsWith('.js')),
        mtime(join(ROOT, 'dist', '.tsbuildinfo.build')),
      )
    : 0;
  if (built >= sources) return;
  console.log('dist/ is missing or older than src/: building (tsc -p tsconfig.build.json)…');
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    { cwd: ROOT, stdio: 'inherit' },
  );
}

/** Builds packages/sdk/dist when it is older than packages/sdk/src: the guarded-call figure runs the built SDK. */
function ensureSdkBuilt() {
  const sdk = join(ROOT, 'packages', 'sdk');
  const sources = Math.max(
    newest(join(sdk, 'src'), (n) => n.endsWith('.ts')),
    existsSync(join(sdk, 'tsconfig.json')) ? statSync(join(sdk, 'tsconfig.json')).mtimeMs : 0,
  );
  const built = existsSync(join(sdk, 'dist', 'index.js')) ? newest(join(sdk, 'dist'), (n) => n.endsWith('.js')) : 0;
  if (built >= sources) return;
  console.log('packages/sdk/dist is missing or older than its sources: building (tsc -p packages/sdk/tsconfig.json)…');
  execFileSync(process.execPath, [join(sdk, 'scripts', 'copy-proto.mjs')], { cwd: ROOT, stdio: 'inherit' });
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'packages/sdk/tsconfig.json'],
    { cwd: ROOT, stdio: 'inherit' },
  );
}

ensureBuilt();
if (!OPTS.profile && !OPTS.tail) ensureSdkBuilt();

require('reflect-metadata');
const autocannon = require('autocannon');
const { Client } = require('pg');
const { mintToken } = require(join(ROOT, 'dist/src/infrastructure/auth/jwt-verifier.js'));
const { request, expect, closeAgent } = require('./lib/http');
const { paced } = require('./lib/paced');
const { startChild, cpuMsOf, memoryOf, machineCpu, RssSampler } = require('./lib/proc');
const { runPolicyBench } = require('./lib/policy-eval');
const { summary, fmt, ratio, table } = require('./lib/stats');
const { startPgbouncer, findPgbouncer, INSTALL_HINT } = require('./lib/pgbouncer');
const { runGuardedBench } = require('./lib/guarded');
const { analyseTail } = require('./lib/tail');

const SECRET = 'bench-secret-that-is-long-enough-for-hs256-0123456789';
const ADMIN_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (...a) => console.log(...a);

// ---------------------------------------------------------------- database

async function admin(sql) {
  const c = new Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    return await c.query(sql);
  } finally {
    await c.end();
  }
}

function dbUrl(name) {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

/** CPU ms of the PostgreSQL backends serving database `name` (their pids from pg_stat_activity). */
async function pgBackendCpu(pgc, name) {
  const { rows } = await pgc.query('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
    name,
  ]);
  const out = new Map();
  for (const { pid } of rows) out.set(pid, cpuMsOf(pid));
  return out;
}

function cpuDelta(before, after) {
  let ms = 0;
  for (const [pid, t] of after) {
    if (!Number.isFinite(t)) continue;
    const b = before.get(pid);
    ms += Number.isFinite(b) ? t - b : t; // a backend opened during the phase counts from its start
  }
  return ms;
}

/**
 * ANALYZE the bench's database, as autovacuum would once the tables grew: this machine runs PostgreSQL with
 * autovacuum off (conf.d/90-ci.conf), and without statistics the planner's default estimates choose plans no
 * database in service would (a tenant of "6" calls hashed whole to update one). Run between phases.
 */
async function analyzeTables(pgc) {
  await pgc.query('ANALYZE');
}

// ---------------------------------------------------------------- servers

/** Data dirs made for the Tollgate children (unused with DATABASE_URL, but set so nothing lands in ./.tollgate). */
const dataDirs = [];

function tollgateEnv(url, id, extra = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), `tollgate-bench-${id}-`));
  dataDirs.push(dataDir);
  return {
    DATABASE_URL: url,
    TOLLGATE_JWT_SECRET: SECRET,
    HOST: '127.0.0.1',
    PORT: '0',
    TOLLGATE_RATE_LIMIT: '0',
    TOLLGATE_MAX_WAITS_PER_TOKEN: '5000',
    TOLLGATE_INSTANCE_ID: id,
    TOLLGATE_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    NODE_OPTIONS: [process.env.NODE_OPTIONS, OPTS.nodeOptions].filter(Boolean).join(' '),
    ...extra,
  };
}

function startTollgate(name, url, { migrate = true, nodeArgs = [], env = {} } = {}) {
  return startChild({
    name,
    script: join(ROOT, 'bin', 'tollgate.js'),
    args: ['serve'],
    nodeArgs,
    cwd: ROOT,
    env: tollgateEnv(url, name, { TOLLGATE_MIGRATE: String(migrate), ...env }),
    ready: /Tollgate listening on (http:\/\/\S+)/,
  });
}

function startBaseline(url) {
  return startChild({
    name: 'baseline',
    script: join(__dirname, 'baseline-server.js'),
    cwd: ROOT,
    env: { DATABASE_URL: url, PORT: '0' },
    ready: /baseline listening on (http:\/\/\S+)/,
  });
}

// ---------------------------------------------------------------- setup through the API

const POLICY = {
  defaults: { unknownTools: 'confirm', timeoutSeconds: 600, approvers: ['approver', 'admin'] },
  rules: [
    { match: 'get_*', level: 'automatic' },
    { match: 'confirm_*', level: 'confirm', approvers: ['approver', 'admin'], timeoutSeconds: 600 },
    { match: 'shell(cmd=rm *)', level: 'deny' },
  ],
};

async function tokens() {
  return {
    agent: await mintToken(SECRET, { sub: 'bench-agent', roles: ['agent'], name: 'Bench agent' }, '2h'),
    approver: await mintToken(SECRET, { sub: 'ann', roles: ['approver'], name: 'Ann' }, '2h'),
    admin: await mintToken(SECRET, { sub: 'root', roles: ['admin'], name: 'Root' }, '2h'),
  };
}

async function inParallel(items, width, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i], i);
      }
    }),
  );
}

async function createConversations(base, token, ids) {
  await inParallel(ids, 8, (id) =>
    expect([200, 201], base, 'POST', '/v1/conversations', {
      token,
      body: { id, user: { id: 'ann', roles: ['approver'], name: 'Ann' }, title: `bench ${id}` },
    }),
  );
}

const AUTO_BODY = JSON.stringify({
  toolCalls: [
    { toolName: 'get_source', arguments: { id: 'src_1', fields: ['title', 'size'] }, reason: 'bench: read a source' },
  ],
});
const CONFIRM_BODY = (n) =>
  JSON.stringify({
    toolCalls: [{ toolName: 'confirm_delete', arguments: { id: `src_${n}` }, reason: 'bench: needs a person' }],
  });

async function proposeConfirm(base, token, conversationId, n) {
  const res = await expect([201], base, 'POST', `/v1/conversations/${conversationId}/tool-calls`, {
    token,
    body: CONFIRM_BODY(n),
  });
  const call = res.body.toolCalls[0];
  if (call.status !== 'pending') throw new Error(`expected a pending call, got ${call.status}`);
  return call.id;
}

// ---------------------------------------------------------------- (1) auto-approved proposals

function autoRequests(conversations) {
  let i = 0;
  return [
    {
      method: 'POST',
      path: `/v1/conversations/${conversations[0]}/tool-calls`,
      setupRequest: (req) => {
        req.path = `/v1/conversations/${conversations[i++ % conversations.length]}/tool-calls`;
        return req;
      },
    },
  ];
}

function cannon(opts) {
  return new Promise((resolve, reject) => {
    autocannon(opts, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

/**
 * Closed-loop max throughput with autocannon (proposals round-robin over `conversations`, or over each tenant's
 * conversations with that tenant's token when `tenants` is given); CPU of the server process and of the database's
 * backends over the run.
 */
async function maxThroughput(target, { token, conversations, tenants, durationS, pgc, dbName }) {
  const cpu0 = cpuMsOf(target.pid);
  const pg0 = await pgBackendCpu(pgc, dbName);
  const m0 = machineCpu();
  let requests = autoRequests(conversations ?? []);
  if (tenants) {
    let i = 0;
    requests = [
      {
        method: 'POST',
        path: `/v1/conversations/${tenants[0].conversations[0]}/tool-calls`,
        setupRequest: (req) => {
          const t = tenants[i % tenants.length];
          req.path = `/v1/conversations/${t.conversations[Math.floor(i / tenants.length) % t.conversations.length]}/tool-calls`;
          req.headers = { ...req.headers, authorization: `Bearer ${t.agent}` };
          i++;
          return req;
        },
      },
    ];
  }
  const r = await cannon({
    url: target.url,
    connections: P.connections,
    duration: durationS,
    headers: { authorization: `Bearer ${token ?? tenants[0].agent}`, 'content-type': 'application/json' },
    body: AUTO_BODY,
    requests,
  });
  const m1 = machineCpu();
  const cpu = cpuMsOf(target.pid) - cpu0;
  const pgCpu = cpuDelta(pg0, await pgBackendCpu(pgc, dbName));
  const ok = r['2xx'];
  return {
    rps: ok / r.duration,
    ok,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    latencyP50: r.latency.p50,
    latencyP99: r.latency.p99,
    cpuUsPerReq: (cpu * 1000) / ok,
    pgCpuUsPerReq: (pgCpu * 1000) / ok,
    machineBusy: (m1.busy - m0.busy) / (m1.total - m0.total),
  };
}

/** `n` extra tenants (bench-t0…), each with its own agent, the bench policy and `perTenant` conversations. */
async function setupTenants(base, n, perTenant) {
  const tenants = [];
  for (let k = 0; k < n; k++) {
    const tenant = `bench-t${k}`;
    const agent = await mintToken(SECRET, { sub: 'bench-agent', roles: ['agent'], tenant }, '2h');
    const adminTok = await mintToken(SECRET, { sub: 'root', roles: ['admin'], tenant }, '2h');
    await expect([200], base, 'PUT', '/v1/policy', { token: adminTok, body: POLICY });
    const conversations = Array.from({ length: perTenant }, (_, i) => `mt-${k}-${i}`);
    await createConversations(base, agent, conversations);
    tenants.push({ tenant, agent, conversations });
  }
  return tenants;
}

/** Open-loop fixed rate: latency counted from when each request was due. */
async function fixedRate(target, { token, conversations, rate, durationS }) {
  let i = 0;
  const r = await paced({
    base: target.url,
    rate,
    durationS,
    request: () => ({
      method: 'POST',
      path: `/v1/conversations/${conversations[i++ % conversations.length]}/tool-calls`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: AUTO_BODY,
    }),
  });
  return { ...r, lat: summary(r.latenciesMs) };
}

// ---------------------------------------------------------------- (2) human loop

async function humanLoop({ A, B, tok, conversations, durationS }) {
  const deadline = performance.now() + durationS * 1000;
  const loopMs = [];
  const steps = { propose: [], decide: [], wake: [], claim: [], result: [] };
  let n = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    conversations.map(async (conv, k) => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          const id = await proposeConfirm(A.url, tok.agent, conv, k * 1_000_000 + n);
          const t1 = performance.now();
          const poll = (async () => {
            for (;;) {
              const r = await expect([200], A.url, 'GET', `/v1/tool-calls/${id}?wait=30`, { token: tok.agent });
              if (r.body.status !== 'pending') return r;
            }
          })();
          const decided = expect([200], B.url, 'POST', `/v1/tool-calls/${id}/decision`, {
            token: tok.approver,
            body: { decision: 'approve', reason: 'bench' },
          });
          const [seen, decision] = await Promise.all([poll, decided]);
          if (seen.body.status !== 'approved') throw new Error(`long-poll saw ${seen.body.status}`);
          const t2 = performance.now();
          await expect([200], A.url, 'POST', `/v1/tool-calls/${id}/execution`, { token: tok.agent });
          const t3 = performance.now();
          await expect([200], A.url, 'POST', `/v1/tool-calls/${id}/result`, {
            token: tok.agent,
            body: { outcome: 'succeeded', output: { ok: true } },
          });
          const t4 = performance.now();
          steps.propose.push(t1 - t0);
          steps.decide.push(decision.at - t1);
          steps.wake.push(seen.at - decision.at);
          steps.claim.push(t3 - t2);
          steps.result.push(t4 - t3);
          loopMs.push(t4 - t0);
          n++;
        } catch (e) {
          failures++;
          if (failures <= 3) console.error(`  loop failure: ${e.message}`);
          if (failures > 20) throw e;
        }
      }
    }),
  );
  const elapsedS = (performance.now() - started) / 1000;
  return {
    loops: n,
    loopsPerS: n / elapsedS,
    failures,
    lat: summary(loopMs),
    steps: Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, summary(v)])),
  };
}

// ---------------------------------------------------------------- (3) wake latency

/** A fixed pseudo-random sequence in [0, 1), so every pass decides on the same schedule. */
function seeded(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/**
 * One pass over `conversations.length` pending calls (one per conversation, proposed on A). Each call has one
 * waiting client on A: `client = 'long-poll'` holds GET ?wait=30 (re-issued should it time out);
 * `client = 'poll-3s'` sends GET every 3 s from a random phase, as an SDK that polls does. The decisions are taken
 * on B at moments drawn from `schedule` (seeded: the same in every pass), spread over `windowS`.
 * Latency = when the client had the decided call − when B had answered the decision (its transaction, NOTIFY
 * included, had committed); also given from when the decision was sent.
 */
async function wakeLatency({ A, B, tok, conversations, windowS, client, seed, numberBase }) {
  const ids = [];
  await inParallel(
    conversations,
    8,
    async (conv, i) => (ids[i] = await proposeConfirm(A.url, tok.agent, conv, numberBase + i)),
  );
  const draw = seeded(seed);
  const samples = ids.map((id) => ({
    id,
    offset: draw() * windowS * 1000,
    phase: draw() * 3000,
    sentAt: NaN,
    decidedAt: NaN,
    seenAt: NaN,
    requests: 0,
  }));
  let stop = false;

  const waiters = samples.map(async (s) => {
    if (client === 'poll-3s') await sleep(s.phase);
    for (;;) {
      s.requests++;
      const r = await expect([200], A.url, 'GET', `/v1/tool-calls/${s.id}${client === 'long-poll' ? '?wait=30' : ''}`, {
        token: tok.agent,
      });
      if (r.body.status !== 'pending') return void (s.seenAt = r.at);
      if (stop) return;
      if (client === 'poll-3s') await sleep(3000);
    }
  });
  // A waiter that fails before the decisions are all sent is reported by the Promise.all below, not as an
  // unhandled rejection that would kill the bench before it stops its servers and drops its database.
  for (const w of waiters) w.catch(() => undefined);

  // Let every long-poll reach the server (and every poller start its cycle), then decide on schedule.
  await sleep(client === 'poll-3s' ? 3000 : 1500);
  const t0 = performance.now();
  await Promise.all(
    samples.map(async (s) => {
      await sleep(Math.max(0, t0 + s.offset - performance.now()));
      s.sentAt = performance.now();
      const r = await expect([200], B.url, 'POST', `/v1/tool-calls/${s.id}/decision`, {
        token: tok.approver,
        body: { decision: 'approve', reason: 'bench' },
      });
      s.decidedAt = r.at;
    }),
  );
  const safety = setTimeout(() => (stop = true), 35_000);
  await Promise.all(waiters);
  clearTimeout(safety);
  return {
    client,
    n: samples.length,
    fromAnswer: summary(samples.map((s) => s.seenAt - s.decidedAt).filter(Number.isFinite)),
    fromSent: summary(samples.map((s) => s.seenAt - s.sentAt).filter(Number.isFinite)),
    decision: summary(samples.map((s) => s.decidedAt - s.sentAt)),
    missed: samples.filter((s) => !Number.isFinite(s.seenAt)).length,
    requestsPerCall: samples.reduce((a, s) => a + s.requests, 0) / samples.length,
  };
}

// ---------------------------------------------------------------- profile mode

/**
 * `--profile`: one Tollgate with bench/lib/query-counter.js preloaded (SQL statements per request, time per
 * statement including lock and commit waits; a CPU profile per phase). Prints, for each phase, statements per
 * request and where the server's CPU goes. No figures for the table: profiling slows the server down.
 */
async function profileMode({ url, dbName, pgc, tok, outDir }) {
  const counterFile = join(outDir, 'queries.json');
  const P1 = await startTollgate('profiled', url, {
    nodeArgs: ['-r', join(__dirname, 'lib', 'query-counter.js')],
    env: { QUERY_COUNTER_FILE: counterFile, PROFILE_DIR: outDir },
  });
  let phase = 0;
  /** Closes a phase: its statement counts, and the path of its CPU profile. */
  const close = async () => {
    const profile = join(outDir, `phase-${phase++}.cpuprofile`);
    process.kill(P1.pid, 'SIGUSR2');
    for (let i = 0; i < 100 && !existsSync(profile); i++) await sleep(100);
    await sleep(200);
    return { rows: JSON.parse(readFileSync(counterFile, 'utf8')), profile };
  };
  const { summarise } = require('./lib/cpuprofile-summary');
  const report = (title, { rows, profile }, requests, cpuMs) => {
    const total = rows.reduce((a, r) => a + r.n, 0);
    const ms = rows.reduce((a, r) => a + r.ms, 0);
    log(`\n== ${title}`);
    log(
      `${requests} requests; ${fmt(total / requests, 2)} SQL statements per request; ${fmt(ms / requests, 2)} ms of statement round trips per request (summed); server CPU ${fmt((cpuMs * 1000) / requests)} µs per request`,
    );
    for (const r of rows.slice(0, 16))
      log(`  ${fmt(r.n / requests, 2).padStart(6)}/req  ${fmt(r.ms / r.n, 2).padStart(7)} ms avg  ${r.sql}`);
    const s = summarise(profile, 16);
    log(
      `CPU profile (${profile}): ${fmt(s.totalMs / 1000)} s sampled, ${fmt((100 * s.busyMs) / s.totalMs)}% busy. Self time by area, % of busy:`,
    );
    for (const a of s.areas.filter((x) => !Number.isNaN(x.pctOfBusy)))
      log(`  ${fmt(a.pctOfBusy).padStart(5)}%  ${a.name}`);
    log('hottest functions, self time, % of all samples:');
    for (const f of s.functions.slice(0, 12)) log(`  ${fmt(f.pct).padStart(5)}%  ${f.name}`);
  };
  try {
    await expect([200], P1.url, 'PUT', '/v1/policy', { token: tok.admin, body: POLICY });
    const convs = Array.from({ length: P.autoConversations }, (_, i) => `prof-${i}`);
    await createConversations(P1.url, tok.agent, convs);
    const tenants = await setupTenants(P1.url, 16, Math.ceil(P.autoConversations / 16));
    await analyzeTables(pgc);
    await close(); // set-up and start-up are not profiled

    let cpu0 = cpuMsOf(P1.pid);
    let lone = 0;
    for (let i = 0; i < 300; i++) {
      await expect([201], P1.url, 'POST', `/v1/conversations/${convs[i % convs.length]}/tool-calls`, {
        token: tok.agent,
        body: AUTO_BODY,
      });
      lone++;
    }
    report('auto-approve, one request at a time (no contention)', await close(), lone, cpuMsOf(P1.pid) - cpu0);

    // What a guarded call asks of the server: a proposal that claims (as the SDK sends it), then its result.
    cpu0 = cpuMsOf(P1.pid);
    let guardedRequests = 0;
    for (let i = 0; i < 300; i++) {
      const proposal = await expect([201], P1.url, 'POST', `/v1/conversations/${convs[i % convs.length]}/tool-calls`, {
        token: tok.agent,
        body: {
          toolCalls: [{ toolName: 'get_source', arguments: { id: `src_${i}` }, id: `call_prof_${i}` }],
          claim: true,
          claimKey: `claim_prof_${i}`,
        },
      });
      await expect([200], P1.url, 'POST', `/v1/tool-calls/${proposal.body.toolCalls[0].id}/result`, {
        token: tok.agent,
        body: { outcome: 'succeeded', output: { id: `src_${i}` } },
      });
      guardedRequests += 2;
    }
    report(
      "a guarded call's requests, one at a time: a claiming proposal, then its result",
      await close(),
      guardedRequests,
      cpuMsOf(P1.pid) - cpu0,
    );

    cpu0 = cpuMsOf(P1.pid);
    const max = await maxThroughput(P1, { token: tok.agent, conversations: convs, durationS: 8, pgc, dbName });
    report(
      `auto-approve, max throughput, one tenant, ${P.connections} connections (${fmt(max.rps)} req/s while profiled)`,
      await close(),
      max.ok,
      cpuMsOf(P1.pid) - cpu0,
    );

    cpu0 = cpuMsOf(P1.pid);
    const mt = await maxThroughput(P1, { tenants, durationS: 8, pgc, dbName });
    report(
      `auto-approve, max throughput, 16 tenants, ${P.connections} connections (${fmt(mt.rps)} req/s while profiled)`,
      await close(),
      mt.ok,
      cpuMsOf(P1.pid) - cpu0,
    );

    cpu0 = cpuMsOf(P1.pid);
    const health = 1000;
    for (let i = 0; i < health; i++) await expect([200], P1.url, 'GET', '/health/live', {});
    report('GET /health/live, one at a time (the framework alone)', await close(), health, cpuMsOf(P1.pid) - cpu0);
  } finally {
    await P1.stop();
  }
}

// ---------------------------------------------------------------- tail mode

/**
 * Samples what PostgreSQL and the machine are doing every 50 ms: autovacuum workers on database `name` (and the
 * table each is on), whether the checkpointer is writing, and the machine's busy share since the last sample.
 */
function activitySampler(pgc, name) {
  const samples = [];
  const machine = [];
  let last = machineCpu();
  let lastAt = performance.timeOrigin + performance.now();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const { rows } = await pgc.query(
        `SELECT backend_type, wait_event, query FROM pg_stat_activity
          WHERE (backend_type = 'autovacuum worker' AND datname = $1) OR backend_type = 'checkpointer'`,
        [name],
      );
      const at = performance.timeOrigin + performance.now();
      samples.push({
        at,
        autovacuum: rows
          .filter((r) => r.backend_type === 'autovacuum worker')
          .map((r) => r.query.replace(/^autovacuum:\s*/, '').replace(/\s+public\./, ' ')),
        checkpoint: rows.some((r) => r.backend_type === 'checkpointer' && r.wait_event !== 'CheckpointerMain'),
      });
      const m = machineCpu();
      machine.push({ at, ms: at - lastAt, busy: (m.busy - last.busy) / Math.max(1, m.total - last.total) });
      last = m;
      lastAt = at;
      await sleep(50);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { samples, machine };
    },
  };
}

/**
 * `--tail`: three Tollgates with bench/lib/loop-monitor.js preloaded (GC, event-loop stalls, CPU, SQL statements on
 * a timeline): one as it ships, one that runs no outbox pass (LOOP_MONITOR_OUTBOX=off), one with
 * `--tail-node-options` added to its NODE_OPTIONS (a GC setting); and the baseline.
 * After a closed-loop warm-up that grows the tables as the measured run's first phase does, each takes the fixed
 * rate in turn, `rounds` times; for each run it prints what the requests met, by latency class.
 */
async function tailMode({ url, dbName, pgc, tok, outDir, children, watch }) {
  const monitored = async (name, env) => {
    const file = join(outDir, `${name}.json`);
    const t = await startTollgate(name, url, {
      migrate: children.length === 0,
      nodeArgs: ['-r', join(__dirname, 'lib', 'loop-monitor.js')],
      env: { LOOP_MONITOR_FILE: file, ...env },
    });
    children.push(watch(t));
    /** Closes a window of the instance's timeline and answers it. */
    t.timeline = async () => {
      const before = existsSync(file) ? statSync(file).mtimeMs : 0;
      process.kill(t.pid, 'SIGUSR2');
      for (let i = 0; i < 100; i++) {
        await sleep(50);
        if (existsSync(file) && statSync(file).mtimeMs > before) break;
      }
      await sleep(100);
      return JSON.parse(readFileSync(file, 'utf8'));
    };
    return t;
  };
  const A = await monitored('tollgate-A', {});
  const A0 = await monitored('tollgate-A-no-outbox', { LOOP_MONITOR_OUTBOX: 'off' });
  const gcFlags = [process.env.NODE_OPTIONS, OPTS.nodeOptions, OPTS.tailNodeOptions].filter(Boolean).join(' ');
  const Ag = OPTS.tailNodeOptions ? await monitored('tollgate-A-gc-flags', { NODE_OPTIONS: gcFlags }) : undefined;
  const variants = [A, A0, ...(Ag ? [Ag] : [])];
  if (Ag) log(`tollgate-A-gc-flags runs with NODE_OPTIONS ${gcFlags}`);
  const base = await startBaseline(url);
  children.push(watch(base));
  await expect([200], A.url, 'PUT', '/v1/policy', { token: tok.admin, body: POLICY });
  const convs = Array.from({ length: P.autoConversations }, (_, i) => `tail-${i}`);
  await createConversations(A.url, tok.agent, convs);
  const ctx = { token: tok.agent, conversations: convs, pgc, dbName };
  const warmS = P.warmupS + P.maxS;
  log(`\nwarm-up: ${warmS} s closed loop on each Tollgate, ${P.warmupS} s on the baseline`);
  for (const t of variants) {
    const w = await maxThroughput(t, { ...ctx, durationS: warmS });
    log(`  ${t.name}: ${fmt(w.rps)} req/s at max (${w.ok} proposals)`);
  }
  await maxThroughput(base, { ...ctx, durationS: P.warmupS });
  await analyzeTables(pgc);
  // What the passes cost at max, taking turns: CPU per proposal with and without them.
  for (let round = 0; round < P.maxRounds; round++) {
    for (const t of variants) {
      const m = await maxThroughput(t, { ...ctx, durationS: P.maxS });
      log(
        `  ${t.name.padEnd(22)} max round ${round + 1}: ${fmt(m.rps)} req/s, ${fmt(m.cpuUsPerReq)} µs server CPU + ${fmt(m.pgCpuUsPerReq)} µs PostgreSQL CPU per request; machine ${fmt(100 * m.machineBusy)}% busy`,
      );
    }
  }
  const out = [];
  for (let round = 0; round < P.maxRounds; round++) {
    const runs = {};
    for (const t of variants) {
      await t.timeline(); // drop what came before
      const cpu0 = cpuMsOf(t.pid);
      const pg0 = await pgBackendCpu(pgc, dbName);
      const activity = activitySampler(pgc, dbName);
      const f = await fixedRate(t, { ...ctx, rate: P.rate, durationS: P.rateS });
      const act = await activity.stop();
      const cpuUs = ((cpuMsOf(t.pid) - cpu0) * 1000) / f.ok;
      const pgUs = (cpuDelta(pg0, await pgBackendCpu(pgc, dbName)) * 1000) / f.ok;
      const monitor = await t.timeline();
      const origin = performance.timeOrigin;
      const requests = f.dueAtMs.map((due, k) => ({ due: origin + due, done: origin + due + f.latenciesMs[k] }));
      const a = analyseTail({
        requests,
        monitor,
        activity: act,
        label: `${t.name}, round ${round + 1}: ${P.rate} req/s for ${P.rateS} s (${fmt(f.achievedRate)} req/s achieved, ${f.sustained ? 'sustained' : 'NOT sustained'})`,
      });
      for (const l of a.lines) log(l);
      log(
        `CPU per request: ${fmt(cpuUs)} µs in the Tollgate process, ${fmt(pgUs)} µs in PostgreSQL (every backend of the database); Tollgate RSS now ${fmt(memoryOf(t.pid).rss)} MB, peak so far ${fmt(memoryOf(t.pid).hwm)} MB`,
      );
      const rss = memoryOf(t.pid);
      runs[t.name] = { ...a.json, achievedRate: f.achievedRate, sustained: f.sustained, cpuUs, pgUs, rss };
    }
    const fb = await fixedRate(base, { ...ctx, rate: P.rate, durationS: P.rateS });
    log(`\nround ${round + 1}, ${P.rate} req/s:`);
    for (const t of variants) {
      const r = runs[t.name];
      log(
        `  ${t.name.padEnd(22)} p50 ${fmt(r.latency.p50, 2)} ms, p99 ${fmt(r.latency.p99, 2)} ms (p99/p50 ${fmt(r.latency.p99 / r.latency.p50, 2)}×); ${fmt(r.cpuUs)} + ${fmt(r.pgUs)} µs CPU per request${r.sustained ? '' : '; NOT sustained'}`,
      );
    }
    log(
      `  ${'baseline'.padEnd(22)} p50 ${fmt(fb.lat.p50, 2)} ms, p99 ${fmt(fb.lat.p99, 2)} ms (p99/p50 ${fmt(fb.lat.p99 / fb.lat.p50, 2)}×)`,
    );
    out.push({ ...runs, baseline: fb.lat });
  }
  return out;
}

// ---------------------------------------------------------------- main

async function main() {
  const dbName = `tollgate_bench4_${randomBytes(5).toString('hex')}`;
  const url = dbUrl(dbName);
  const children = [];
  let pgc;
  let dropped = false;
  let stopping = false;
  /** A child that exits before the end is reported at once, with the tail of its output. */
  const watch = (c) => {
    c.child?.on('exit', (code, signal) => {
      if (!stopping)
        console.error(
          `\n${c.name} exited during the bench (code ${code}, signal ${signal}); its last output:\n${c.output().split('\n').slice(-30).join('\n')}`,
        );
    });
    return c;
  };
  const cleanup = async () => {
    stopping = true;
    for (const c of children.reverse()) await c.stop().catch(() => undefined);
    closeAgent();
    for (const d of dataDirs.splice(0)) rmSync(d, { recursive: true, force: true });
    await pgc?.end().catch(() => undefined);
    if (!OPTS.keep && !dropped) {
      dropped = true;
      await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch((e) =>
        console.error(`could not drop ${dbName}: ${e.message}`),
      );
    }
  };
  let interrupted = false;
  const onSignal = (sig) => {
    if (interrupted) process.exit(130);
    interrupted = true;
    console.error(`\n${sig}: stopping the servers and dropping ${dbName}…`);
    cleanup().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Whatever fails outside the awaited chain still stops the servers and drops the database.
  process.on('unhandledRejection', (e) => {
    console.error(`\nbench failed: ${e?.stack ?? e}`);
    cleanup().finally(() => process.exit(1));
  });

  const started = performance.now();
  const versionRow = (
    await admin("SELECT version() AS v, current_setting('synchronous_commit') AS sc, current_setting('fsync') AS fs")
  ).rows[0];
  log(
    `Tollgate approval-loop benchmark (${FULL ? 'full' : 'quick'}${OPTS.profile ? ', profile' : ''}${OPTS.tail ? ', tail' : ''})`,
  );
  log(
    `machine: ${cpus().length} cores (${cpus()[0]?.model.trim()}), ${Math.round(totalmem() / 2 ** 30)} GiB, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  log(
    `node ${process.version}; ${versionRow.v.split(' on ')[0]}, fsync=${versionRow.fs}, synchronous_commit=${versionRow.sc}${OPTS.nodeOptions ? `; Tollgate NODE_OPTIONS: ${OPTS.nodeOptions}` : ''}`,
  );

  const results = { mode: FULL ? 'full' : 'quick', startedAt: new Date().toISOString(), loadavgStart: loadavg() };

  // Policy first, in this process, before any server competes for the CPU.
  if (!OPTS.profile && !OPTS.tail) {
    log('\n[policy] evaluating a 1,000-rule policy in-process…');
    const pr = runPolicyBench({ samples: P.policySamples });
    results.policy = {
      rules: pr.rules,
      repeating: summary(pr.repeating),
      distinct: summary(pr.distinct),
      trivial: summary(pr.trivial),
      buildOnly: summary(pr.buildOnly),
      candidatesPerName: summary(pr.candidatesPerName),
      levels: pr.levelsSeen,
    };
    const q = results.policy;
    log(
      `  repeating names: p50 ${fmt(q.repeating.p50, 2)} µs, p99 ${fmt(q.repeating.p99, 2)} µs; all-distinct names: p50 ${fmt(q.distinct.p50, 2)} µs, p99 ${fmt(q.distinct.p99, 2)} µs; trivial call: p50 ${fmt(q.trivial.p50, 2)} µs, p99 ${fmt(q.trivial.p99, 2)} µs`,
    );
  }

  await admin(`CREATE DATABASE ${dbName}`);
  try {
    pgc = new Client({ connectionString: url });
    await pgc.connect();
    const tok = await tokens();

    if (OPTS.profile) {
      const outDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-profile-'));
      await profileMode({ url, dbName, pgc, tok, outDir });
      log(`\nprofile files in ${outDir}`);
      return;
    }
    if (OPTS.tail) {
      const outDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-tail-'));
      results.tail = await tailMode({ url, dbName, pgc, tok, outDir, children, watch });
      if (OPTS.json) writeFileSync(OPTS.json, JSON.stringify(results, null, 1));
      log(`\nthe last timeline is in ${outDir}`);
      return;
    }

    log(`\nstarting two Tollgate instances and the baseline on database ${dbName}…`);
    const A = await startTollgate('tollgate-A', url, { migrate: true });
    children.push(watch(A));
    const B = await startTollgate('tollgate-B', url, { migrate: false });
    children.push(watch(B));
    const base = await startBaseline(url);
    children.push(watch(base));
    const sampler = new RssSampler([A, B, base]);
    const idle = { A: memoryOf(A.pid).rss, B: memoryOf(B.pid).rss, baseline: memoryOf(base.pid).rss };

    // Two more instances on the same database, through a private PgBouncer in transaction mode. PgBouncer 1.18
    // cannot carry named prepared statements in that mode, so these run with TOLLGATE_DATABASE_PREPARED_STATEMENTS=off;
    // their LISTEN connection (and anything session-level) goes straight to PostgreSQL (TOLLGATE_DATABASE_DIRECT_URL).
    const pooled = { skipped: undefined, version: undefined, poolSize: 10 };
    let Ap;
    let Au;
    let pgb;
    if (!OPTS.pgbouncer) pooled.skipped = 'left out (--no-pgbouncer)';
    else if (!findPgbouncer()) pooled.skipped = `pgbouncer not installed (${INSTALL_HINT})`;
    else {
      try {
        pgb = await startPgbouncer({ serverUrl: url, poolSize: pooled.poolSize });
        children.push(watch(pgb));
        pooled.version = pgb.version;
        const viaPooler = { TOLLGATE_DATABASE_PREPARED_STATEMENTS: 'off', TOLLGATE_DATABASE_DIRECT_URL: url };
        Ap = await startTollgate('tollgate-A-pgbouncer', pgb.url, { migrate: false, env: viaPooler });
        children.push(watch(Ap));
        children.push(watch(await startTollgate('tollgate-B-pgbouncer', pgb.url, { migrate: false, env: viaPooler })));
        // One more straight to PostgreSQL with prepared statements off too: what the pooler run pays for them,
        // apart from the hop through PgBouncer.
        Au = await startTollgate('tollgate-unprepared', url, {
          migrate: false,
          env: { TOLLGATE_DATABASE_PREPARED_STATEMENTS: 'off' },
        });
        children.push(watch(Au));
        log(
          `PgBouncer ${pgb.version} on ${pgb.url.replace(/^.*@/, '')} (pool_mode=transaction, default_pool_size=${pooled.poolSize}): two more Tollgate instances through it, prepared statements off, LISTEN direct`,
        );
      } catch (e) {
        pooled.skipped = `pgbouncer failed to start: ${e.message.split('\n')[0]}`;
        log(`${pooled.skipped}\n${e.message.split('\n').slice(1).join('\n')}`);
      }
    }
    results.pgbouncer = pooled;

    await expect([200], A.url, 'PUT', '/v1/policy', { token: tok.admin, body: POLICY });
    const autoConvs = Array.from({ length: P.autoConversations }, (_, i) => `auto-${i}`);
    const hotConvs = Array.from({ length: P.hotConversations }, (_, i) => `hot-${i}`);
    const loopConvs = Array.from({ length: P.loops }, (_, i) => `loop-${i}`);
    const wakeConvs = (pass) => Array.from({ length: P.wakeCalls }, (_, i) => `wake-${pass}-${i}`);
    await createConversations(A.url, tok.agent, [
      ...autoConvs,
      ...hotConvs,
      ...loopConvs,
      ...wakeConvs('long'),
      ...wakeConvs('poll'),
      ...wakeConvs('load'),
    ]);
    const tenants = await setupTenants(A.url, 16, Math.ceil(P.autoConversations / 16));
    idle.afterSetup = { A: memoryOf(A.pid).rss, B: memoryOf(B.pid).rss, baseline: memoryOf(base.pid).rss };
    results.rssIdle = idle;

    // (1) auto-approved proposals
    log(
      `\n[1] auto-approved proposals: warm-up ${P.warmupS} s each, then ${P.maxRounds} × ${P.maxS} s max throughput (${P.connections} connections), alternating:` +
        ` ${P.autoConversations} conversations, baseline, ${P.hotConversations} conversations${Ap ? ', both again through PgBouncer, and direct without prepared statements' : ''}`,
    );
    sampler.phase('auto-max');
    const ctx = { token: tok.agent, conversations: autoConvs, pgc, dbName };
    const hot = { ...ctx, conversations: hotConvs };
    await maxThroughput(A, { ...ctx, durationS: P.warmupS });
    await maxThroughput(base, { ...ctx, durationS: P.warmupS });
    if (Ap) await maxThroughput(Ap, { ...ctx, durationS: P.warmupS });
    if (Au) await maxThroughput(Au, { ...ctx, durationS: P.warmupS });
    await analyzeTables(pgc);
    const runs = [
      ['tollgate', A, ctx],
      ['baseline', base, ctx],
      ['tollgate, 10 conversations', A, hot],
      ...(Ap
        ? [
            ['via PgBouncer', Ap, ctx],
            ['via PgBouncer, 10 conversations', Ap, hot],
            ['direct, prepared statements off', Au, ctx],
          ]
        : []),
    ];
    const rounds = Object.fromEntries(runs.map(([name]) => [name, []]));
    for (let r = 0; r < P.maxRounds; r++) {
      for (const [name, target, load] of runs) {
        const pgb0 = pgb && target === Ap ? cpuMsOf(pgb.pid) : NaN;
        const m = await maxThroughput(target, { ...load, durationS: P.maxS });
        if (pgb && target === Ap) m.pgbouncerCpuUsPerReq = ((cpuMsOf(pgb.pid) - pgb0) * 1000) / m.ok;
        rounds[name].push(m);
        log(
          `  ${name.padEnd(32)} round ${r + 1}: ${fmt(m.rps)} req/s (p50 ${fmt(m.latencyP50)} ms, p99 ${fmt(m.latencyP99)} ms; ${fmt(m.cpuUsPerReq)} µs server CPU + ${fmt(m.pgCpuUsPerReq)} µs PostgreSQL CPU` +
            `${Number.isFinite(m.pgbouncerCpuUsPerReq) ? ` + ${fmt(m.pgbouncerCpuUsPerReq)} µs PgBouncer CPU` : ''} per request; machine ${fmt(100 * m.machineBusy)}% busy${m.non2xx || m.errors ? `; ${m.non2xx} non-2xx, ${m.errors} errors` : ''})`,
        );
      }
    }
    // The same load spread over 16 tenants: each tenant has its own audit chain head, so this shows what the
    // one-tenant figure loses to the chain head's row lock.
    const mt = await maxThroughput(A, { tenants, durationS: P.maxS, pgc, dbName });
    log(
      `  tollgate 16 tenants: ${fmt(mt.rps)} req/s (p50 ${fmt(mt.latencyP50)} ms, p99 ${fmt(mt.latencyP99)} ms; ${fmt(mt.cpuUsPerReq)} µs server CPU + ${fmt(mt.pgCpuUsPerReq)} µs PostgreSQL CPU per request${mt.non2xx || mt.errors ? `; ${mt.non2xx} non-2xx, ${mt.errors} errors` : ''})`,
    );
    await analyzeTables(pgc); // the tables grew by the throughput rounds
    // One request at a time, each sent when the last was answered: latency with no queue, and CPU per request.
    const oneAtATime = async (target, { n, warm, method, path, status, body, token }) => {
      for (let i = 0; i < warm; i++) await expect([status], target.url, method, path(i), { token, body });
      const cpu0 = cpuMsOf(target.pid);
      const lat = [];
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        const r = await expect([status], target.url, method, path(warm + i), { token, body });
        lat.push(r.at - t0);
      }
      return { n, cpuUsPerReq: ((cpuMsOf(target.pid) - cpu0) * 1000) / n, lat: summary(lat) };
    };
    // Auto-approved proposals one at a time, round-robin over the 500 conversations (no contention, no queue).
    const singleReq = {
      n: P.singleSamples,
      warm: 100,
      method: 'POST',
      status: 201,
      body: AUTO_BODY,
      token: tok.agent,
      path: (i) => `/v1/conversations/${autoConvs[i % autoConvs.length]}/tool-calls`,
    };
    const singleT = await oneAtATime(A, singleReq);
    const singleB = await oneAtATime(base, singleReq);
    log(
      `  one proposal at a time (${P.singleSamples} each): tollgate p50 ${fmt(singleT.lat.p50, 2)} ms, p99 ${fmt(singleT.lat.p99, 2)} ms, ${fmt(singleT.cpuUsPerReq)} µs server CPU;` +
        ` baseline p50 ${fmt(singleB.lat.p50, 2)} ms, p99 ${fmt(singleB.lat.p99, 2)} ms, ${fmt(singleB.cpuUsPerReq)} µs server CPU`,
    );
    // The framework's floor: an empty route, one request at a time, CPU per request (Tollgate's /health/live is
    // answered by Nest on Fastify with no database work; the baseline's /health by bare node:http).
    const floorReq = { n: FULL ? 2000 : 500, warm: 200, method: 'GET', status: 200, body: undefined, token: undefined };
    const floorT = await oneAtATime(A, { ...floorReq, path: () => '/health/live' });
    const floorB = await oneAtATime(base, { ...floorReq, path: () => '/health' });
    log(
      `  empty route, one at a time: tollgate GET /health/live ${fmt(floorT.cpuUsPerReq)} µs CPU, p50 ${fmt(floorT.lat.p50, 2)} ms; baseline GET /health ${fmt(floorB.cpuUsPerReq)} µs CPU, p50 ${fmt(floorB.lat.p50, 2)} ms`,
    );
    // A guarded call through the built SDK, one at a time, beside one durable round trip to the baseline.
    const guarded = await runGuardedBench({
      root: ROOT,
      tollgateUrl: A.url,
      token: tok.agent,
      baselineUrl: base.url,
      baselinePath: `/v1/conversations/${autoConvs[0]}/tool-calls`,
      baselineBody: AUTO_BODY,
      n: P.guardedSamples,
      warm: 50,
      block: 50,
    });
    results.guarded = guarded;
    for (const mode of ['await', 'background']) {
      const g = guarded[mode];
      log(
        `  guarded call (SDK, report: '${mode}'${guarded.defaultReport === mode ? ', as the SDK defaults' : ''}), ${g.n} one at a time: p50 ${fmt(g.lat.p50, 2)} ms, p99 ${fmt(g.lat.p99, 2)} ms;` +
          ` critical path ${Object.entries(g.criticalPaths)
            .map(([k, v]) => `${k} ×${v}`)
            .join(', ')}; ${fmt(g.requestsPerCall, 2)} requests per call in all;` +
          ` the SDK's own time (before its first request, after its last answer) p50 ${fmt(g.sdkOwnMs.p50, 2)} ms`,
      );
    }
    log(
      `  baseline, one durable round trip (same fetch, same turns): p50 ${fmt(guarded.baseline.lat.p50, 2)} ms, p99 ${fmt(guarded.baseline.lat.p99, 2)} ms` +
        `${guarded.sdkHasReportOption ? '' : "; this SDK has no tollgate.flush() yet: 'background' is not in effect"}`,
    );
    log(
      `  the SDK alone (a fetch that answers at once, in process), per guarded call: p50 ${fmt(guarded.sdkAlone.await.p50, 2)} ms with 'await', ${fmt(guarded.sdkAlone.background.p50, 2)} ms with 'background'`,
    );
    const mean = (xs, k) => xs.reduce((a, x) => a + x[k], 0) / xs.length;
    const averaged = (xs) =>
      xs && xs.length
        ? {
            rps: mean(xs, 'rps'),
            cpuUsPerReq: mean(xs, 'cpuUsPerReq'),
            pgCpuUsPerReq: mean(xs, 'pgCpuUsPerReq'),
            ...(xs[0].pgbouncerCpuUsPerReq !== undefined
              ? { pgbouncerCpuUsPerReq: mean(xs, 'pgbouncerCpuUsPerReq') }
              : {}),
            non2xx: xs.reduce((a, x) => a + x.non2xx, 0),
            errors: xs.reduce((a, x) => a + x.errors, 0),
            rounds: xs,
          }
        : undefined;
    results.autoMax = {
      tollgate: averaged(rounds.tollgate),
      baseline: averaged(rounds.baseline),
      contended: averaged(rounds['tollgate, 10 conversations']),
      pgbouncer: averaged(rounds['via PgBouncer']),
      pgbouncerContended: averaged(rounds['via PgBouncer, 10 conversations']),
      unprepared: averaged(rounds['direct, prepared statements off']),
      tollgate16Tenants: mt,
      single: { tollgate: singleT, baseline: singleB },
      floor: { tollgate: floorT, baseline: floorB },
    };

    log(`  fixed rate: ${P.rate} req/s for ${P.rateS} s each (open loop, latency from when each request was due)`);
    sampler.phase('auto-300');
    const fixedT = await fixedRate(A, { ...ctx, rate: P.rate, durationS: P.rateS });
    const fixedB = await fixedRate(base, { ...ctx, rate: P.rate, durationS: P.rateS });
    for (const [name, f] of [
      ['tollgate', fixedT],
      ['baseline', fixedB],
    ]) {
      log(
        `  ${name.padEnd(8)} ${fmt(f.achievedRate)} req/s achieved (${f.sustained ? 'sustained' : 'NOT sustained'}): p50 ${fmt(f.lat.p50, 2)} ms, p90 ${fmt(f.lat.p90, 2)} ms, p99 ${fmt(f.lat.p99, 2)} ms, max ${fmt(f.lat.max)} ms` +
          `${f.dropped ? `; ${f.dropped} of ${f.due} not sent (256 already in flight)` : ''}${f.failed ? `; ${f.failed} failed ${JSON.stringify(f.statuses)}` : ''}`,
      );
    }
    results.auto300 = {
      tollgate: { ...fixedT, latenciesMs: undefined, dueAtMs: undefined },
      baseline: { ...fixedB, latenciesMs: undefined, dueAtMs: undefined },
    };

    // (2) human loop
    log(
      `\n[2] human loop: ${P.loops} agents × (propose on A → long-poll on A while Ann approves on B → claim → result) for ${P.loopS} s`,
    );
    await analyzeTables(pgc);
    sampler.phase('human-loop');
    const loop = await humanLoop({ A, B, tok, conversations: loopConvs, durationS: P.loopS });
    log(
      `  ${loop.loops} loops, ${fmt(loop.loopsPerS)} loops/s; one loop p50 ${fmt(loop.lat.p50)} ms, p99 ${fmt(loop.lat.p99)} ms${loop.failures ? `; ${loop.failures} failures` : ''}`,
    );
    log(
      `  steps, p50 (p99) ms: ${Object.entries(loop.steps)
        .map(([k, v]) => `${k} ${fmt(v.p50)} (${fmt(v.p99)})`)
        .join(', ')}  [wake = long-poll answered − decision answered]`,
    );
    results.humanLoop = loop;

    // (3) wake latency, idle and under load
    log(
      `\n[3] cross-instance wake: ${P.wakeCalls} pending calls on A, decided on B at seeded random moments over ${P.wakeWindowS} s; one pass per client`,
    );
    const printWake = (label, w) =>
      log(
        `  ${label.padEnd(34)}: p50 ${fmt(w.fromAnswer.p50, 2)} ms, p90 ${fmt(w.fromAnswer.p90, 2)} ms, p99 ${fmt(w.fromAnswer.p99, 2)} ms, max ${fmt(w.fromAnswer.max, 2)} ms` +
          ` after B answered (from decision sent: p50 ${fmt(w.fromSent.p50, 2)}, p99 ${fmt(w.fromSent.p99, 2)}); decision round trip p50 ${fmt(w.decision.p50, 2)} ms;` +
          ` ${fmt(w.requestsPerCall, 2)} GETs per call${w.missed ? `; ${w.missed} never saw it` : ''}`,
      );
    sampler.phase('wake');
    const wakeLong = await wakeLatency({
      A,
      B,
      tok,
      conversations: wakeConvs('long'),
      windowS: P.wakeWindowS,
      client: 'long-poll',
      seed: 4242,
      numberBase: 9_000_000,
    });
    printWake('long-poll (GET ?wait=30) on A', wakeLong);
    const wakePoll = await wakeLatency({
      A,
      B,
      tok,
      conversations: wakeConvs('poll'),
      windowS: P.wakeWindowS,
      client: 'poll-3s',
      seed: 4242,
      numberBase: 9_100_000,
    });
    printWake('poll every 3 s on A', wakePoll);
    sampler.phase('wake-under-load');
    // Background load the instance should sustain: a third of its measured max throughput, at most 300 req/s.
    const bgRate = Math.max(10, Math.min(P.rate, Math.round(results.autoMax.tollgate.rps / 3)));
    results.wakeBackgroundRate = bgRate;
    let bg;
    const loadDone = fixedRate(A, { ...ctx, rate: bgRate, durationS: P.wakeWindowS + 6 }).then((r) => (bg = r));
    await sleep(1000);
    const wakeLoad = await wakeLatency({
      A,
      B,
      tok,
      conversations: wakeConvs('load'),
      windowS: P.wakeWindowS,
      client: 'long-poll',
      seed: 4242,
      numberBase: 9_200_000,
    });
    await loadDone;
    printWake(`long-poll, ${bgRate} req/s proposals on A`, wakeLoad);
    log(
      `  (background proposals meanwhile: ${fmt(bg.achievedRate)} req/s, ${bg.sustained ? 'sustained' : 'NOT sustained'}, p50 ${fmt(bg.lat.p50, 2)} ms, p99 ${fmt(bg.lat.p99, 2)} ms${bg.dropped ? `, ${bg.dropped} not sent` : ''})`,
    );
    results.wake = {
      longPoll: wakeLong,
      poll3s: wakePoll,
      underLoad: wakeLoad,
      background: {
        rate: bgRate,
        achievedRate: bg.achievedRate,
        sustained: bg.sustained,
        lat: bg.lat,
        dropped: bg.dropped,
      },
    };

    // (4) RSS
    sampler.phase('end');
    const peaks = sampler.peaks();
    sampler.stop();
    const loadPhases = ['auto-max', 'auto-300', 'human-loop', 'wake', 'wake-under-load'];
    const peakOf = (name) => Math.max(...loadPhases.map((p) => peaks[p]?.[name] ?? 0));
    results.rss = {
      idle,
      peakUnderLoad: { A: peakOf('tollgate-A'), B: peakOf('tollgate-B'), baseline: peakOf('baseline') },
      hwm: { A: memoryOf(A.pid).hwm, B: memoryOf(B.pid).hwm, baseline: memoryOf(base.pid).hwm },
      byPhase: peaks,
    };
    log(
      `\n[4] RSS: peak under load A ${fmt(results.rss.peakUnderLoad.A)} MB, B ${fmt(results.rss.peakUnderLoad.B)} MB, baseline ${fmt(results.rss.peakUnderLoad.baseline)} MB (idle after start: A ${fmt(idle.A)}, B ${fmt(idle.B)}, baseline ${fmt(idle.baseline)} MB)`,
    );
    for (const p of loadPhases) {
      log(
        `  RSS peak during ${p.padEnd(15)}: ${['tollgate-A', 'tollgate-B', 'baseline'].map((n) => `${n} ${fmt(peaks[p]?.[n])} MB`).join(', ')}`,
      );
    }

    results.loadavgEnd = loadavg();
    results.seconds = (performance.now() - started) / 1000;
    const out = report(results);
    results.targets = out.targets;
    log(`\n${out.text}`);
    log(
      `\nload average at start ${results.loadavgStart.map((l) => l.toFixed(2)).join(' ')}, at end ${results.loadavgEnd.map((l) => l.toFixed(2)).join(' ')}; ${fmt(results.seconds)} s in all`,
    );
    if (OPTS.md) writeFileSync(OPTS.md, `${out.md}\n`);
    if (OPTS.json) writeFileSync(OPTS.json, JSON.stringify(results, null, 1));
  } finally {
    await cleanup();
  }
}

function report(r) {
  const met = (ok) => (ok ? 'met' : 'MISSED');
  const T = r.autoMax.tollgate;
  const Bm = r.autoMax.baseline;
  const C = r.autoMax.contended;
  const S = r.autoMax.single;
  const t3 = r.auto300.tollgate.lat;
  const b3 = r.auto300.baseline.lat;
  const w = r.wake.longPoll;
  const wp = r.wake.poll3s;
  const wl = r.wake.underLoad;
  const pol = r.policy;
  const failures = (m) => (m.non2xx || m.errors ? `; ${m.non2xx} non-2xx, ${m.errors} errors` : '');
  const hot = `${P.hotConversations} conversations`;
  const pooled = r.pgbouncer;
  // Through PgBouncer in transaction mode, with TOLLGATE_DATABASE_PREPARED_STATEMENTS=off (1.18 cannot carry them).
  const viaPgb = `via PgBouncer${pooled.version ? ` ${pooled.version}` : ''}`;
  const pgbMax = `(1) ${viaPgb} (transaction mode, prepared statements off), max throughput (${P.autoConversations} conversations)`;
  const pgbHot = `(1) ${viaPgb}, same over ${hot}`;
  const pgbRows = pooled.skipped
    ? [
        [pgbMax, `skipped: ${pooled.skipped}`, `${fmt(Bm.rps)} req/s`, '', '≥ 0.8× baseline', 'skipped'],
        [pgbHot, `skipped: ${pooled.skipped}`, '', '', '≥ 0.8× the 500-conversation figure', 'skipped'],
      ]
    : (() => {
        const Pm = r.autoMax.pgbouncer;
        const Pc = r.autoMax.pgbouncerContended;
        const U = r.autoMax.unprepared;
        return [
          [
            pgbMax,
            `${fmt(Pm.rps)} req/s${failures(Pm)}`,
            `${fmt(Bm.rps)} req/s (direct)`,
            ratio(Pm.rps, Bm.rps),
            '≥ 0.8× baseline',
            met(Pm.rps / Bm.rps >= 0.8),
          ],
          [
            pgbHot,
            `${fmt(Pc.rps)} req/s (${ratio(Pc.rps, Bm.rps)} baseline)${failures(Pc)}`,
            `${viaPgb}, ${P.autoConversations} conversations: ${fmt(Pm.rps)} req/s`,
            ratio(Pc.rps, Pm.rps),
            '≥ 0.8× the 500-conversation figure',
            met(Pc.rps / Pm.rps >= 0.8),
          ],
          [
            `(1) ${viaPgb}, server / PostgreSQL / PgBouncer CPU per proposal`,
            `${fmt(Pm.cpuUsPerReq)} / ${fmt(Pm.pgCpuUsPerReq)} / ${fmt(Pm.pgbouncerCpuUsPerReq)} µs`,
            `direct: ${fmt(T.cpuUsPerReq)} / ${fmt(T.pgCpuUsPerReq)} µs`,
            '',
            '(diagnostic)',
            '',
          ],
          [
            `(1) direct, prepared statements off (apart from the hop)`,
            `${fmt(U.rps)} req/s; ${fmt(U.cpuUsPerReq)} / ${fmt(U.pgCpuUsPerReq)} µs CPU${failures(U)}`,
            `${fmt(Bm.rps)} req/s`,
            ratio(U.rps, Bm.rps),
            '(diagnostic)',
            '',
          ],
        ];
      })();
  const rows = [
    ['figure', 'Tollgate', 'baseline (same run)', 'ratio T/baseline', 'target', 'met/missed'],
    [
      `(1) auto-approved proposals, max throughput (${P.autoConversations} conversations)`,
      `${fmt(T.rps)} req/s${failures(T)}`,
      `${fmt(Bm.rps)} req/s`,
      ratio(T.rps, Bm.rps),
      '≥ 0.8× baseline',
      met(T.rps / Bm.rps >= 0.8),
    ],
    [
      `(1) same over ${hot} (concurrent proposals hit one conversation)`,
      `${fmt(C.rps)} req/s (${ratio(C.rps, Bm.rps)} baseline)${failures(C)}`,
      `Tollgate, ${P.autoConversations} conversations: ${fmt(T.rps)} req/s`,
      ratio(C.rps, T.rps),
      '≥ 0.8× the 500-conversation figure',
      met(C.rps / T.rps >= 0.8),
    ],
    [
      '(1) same, spread over 16 tenants (16 chain heads)',
      `${fmt(r.autoMax.tollgate16Tenants.rps)} req/s`,
      `${fmt(Bm.rps)} req/s`,
      ratio(r.autoMax.tollgate16Tenants.rps, Bm.rps),
      '(diagnostic)',
      '',
    ],
    [
      '(1) server CPU per proposal (at max)',
      `${fmt(T.cpuUsPerReq)} µs`,
      `${fmt(Bm.cpuUsPerReq)} µs`,
      ratio(T.cpuUsPerReq, Bm.cpuUsPerReq),
      '',
      '',
    ],
    [
      '(1) PostgreSQL CPU per proposal (at max)',
      `${fmt(T.pgCpuUsPerReq)} µs`,
      `${fmt(Bm.pgCpuUsPerReq)} µs`,
      ratio(T.pgCpuUsPerReq, Bm.pgCpuUsPerReq),
      '',
      '',
    ],
    [
      '(1) empty route (/health), server CPU per request',
      `${fmt(r.autoMax.floor.tollgate.cpuUsPerReq)} µs`,
      `${fmt(r.autoMax.floor.baseline.cpuUsPerReq)} µs`,
      ratio(r.autoMax.floor.tollgate.cpuUsPerReq, r.autoMax.floor.baseline.cpuUsPerReq),
      '(diagnostic)',
      '',
    ],
    [
      `(1) single request, one at a time, p50 (${S.tollgate.n} sequential)`,
      `${fmt(S.tollgate.lat.p50, 2)} ms (p99 ${fmt(S.tollgate.lat.p99, 2)})`,
      `${fmt(S.baseline.lat.p50, 2)} ms (p99 ${fmt(S.baseline.lat.p99, 2)})`,
      ratio(S.tollgate.lat.p50, S.baseline.lat.p50),
      '≤ 2 ms',
      met(S.tollgate.lat.p50 <= 2),
    ],
    ...guardedRows(r.guarded, met),
    [
      `(1) latency p50 at ${P.rate} req/s`,
      `${fmt(t3.p50, 2)} ms`,
      `${fmt(b3.p50, 2)} ms`,
      ratio(t3.p50, b3.p50),
      '',
      '',
    ],
    [
      `(1) latency p99 at ${P.rate} req/s`,
      `${fmt(t3.p99, 2)} ms${r.auto300.tollgate.sustained ? '' : ` (rate not sustained: ${fmt(r.auto300.tollgate.achievedRate)} req/s)`}`,
      `${fmt(b3.p99, 2)} ms${r.auto300.baseline.sustained ? '' : ` (rate not sustained: ${fmt(r.auto300.baseline.achievedRate)} req/s)`}`,
      ratio(t3.p99, b3.p99),
      '≤ 10 ms',
      met(t3.p99 <= 10 && r.auto300.tollgate.sustained),
    ],
    ...pgbRows,
    [
      '(2) human loops/s (propose→decide→wake→claim→result)',
      `${fmt(r.humanLoop.loopsPerS)} loops/s (4 writes each)`,
      `${fmt(Bm.rps / 4)} "loops"/s (4 of its writes)`,
      ratio(r.humanLoop.loopsPerS, Bm.rps / 4),
      '≥ 0.5× baseline ÷ 4',
      met(r.humanLoop.loopsPerS / (Bm.rps / 4) >= 0.5 && !r.humanLoop.failures),
    ],
    [
      '(3) cross-instance wake p50 (long-poll on A, decision on B)',
      `${fmt(w.fromAnswer.p50, 2)} ms`,
      `poll every 3 s: ${fmt(wp.fromAnswer.p50)} ms`,
      `poll/long-poll ${ratio(wp.fromAnswer.p50, w.fromAnswer.p50)}`,
      '',
      '',
    ],
    [
      '(3) cross-instance wake p99',
      `${fmt(w.fromAnswer.p99, 2)} ms`,
      `poll every 3 s: ${fmt(wp.fromAnswer.p99)} ms`,
      `poll/long-poll ${ratio(wp.fromAnswer.p99, w.fromAnswer.p99)}`,
      '≤ 50 ms',
      met(w.fromAnswer.p99 <= 50),
    ],
    [
      `(3) cross-instance wake p99, A also taking ${r.wakeBackgroundRate} req/s of proposals (⅓ of its max)`,
      `${fmt(wl.fromAnswer.p99, 2)} ms`,
      `(proposals meanwhile: p99 ${fmt(r.wake.background.lat.p99)} ms${r.wake.background.sustained ? '' : ', rate not sustained'})`,
      '',
      '≤ 50 ms',
      met(wl.fromAnswer.p99 <= 50),
    ],
    [
      '(4) RSS under load, peak (A / B)',
      `${fmt(r.rss.peakUnderLoad.A)} / ${fmt(r.rss.peakUnderLoad.B)} MB`,
      `${fmt(r.rss.peakUnderLoad.baseline)} MB`,
      ratio(Math.max(r.rss.peakUnderLoad.A, r.rss.peakUnderLoad.B), r.rss.peakUnderLoad.baseline),
      '≤ 200 MB',
      met(Math.max(r.rss.peakUnderLoad.A, r.rss.peakUnderLoad.B) <= 200),
    ],
    [
      'policy eval, 1,000 rules, repeating names p99',
      `${fmt(pol.repeating.p99, 2)} µs (p50 ${fmt(pol.repeating.p50, 2)})`,
      `trivial call ${fmt(pol.trivial.p99, 2)} µs`,
      ratio(pol.repeating.p99, pol.trivial.p99),
      '≤ 50 µs',
      met(pol.repeating.p99 <= 50),
    ],
    [
      'policy eval, 1,000 rules, all-distinct names p99',
      `${fmt(pol.distinct.p99, 2)} µs (p50 ${fmt(pol.distinct.p50, 2)})`,
      `trivial call ${fmt(pol.trivial.p99, 2)} µs`,
      ratio(pol.distinct.p99, pol.trivial.p99),
      '≤ 50 µs',
      met(pol.distinct.p99 <= 50),
    ],
  ];
  // Every row with a verdict, for --json: what was measured, against what, and whether the target was met.
  const targets = rows
    .slice(1)
    .filter((row) => row[5] !== '')
    .map(([figure, tollgate, reference, ratioText, target, verdict]) => ({
      figure,
      tollgate,
      reference,
      ratio: ratioText,
      target,
      result: verdict === 'MISSED' ? 'missed' : verdict,
    }));
  return { ...table(rows), targets };
}

/**
 * The guarded call's rows: the SDK's default mode against one baseline round trip (target ≤ 2×), the requests on
 * the agent's critical path (target 1), and the other mode beside it.
 */
function guardedRows(g, met) {
  const d = g[g.defaultReport];
  const other = g.defaultReport === 'await' ? 'background' : 'await';
  const o = g[other];
  const b = g.baseline.lat;
  const paths = (x) => Object.keys(x.criticalPaths)[0] ?? '';
  const lat = (x) => `${fmt(x.lat.p50, 2)} ms (p99 ${fmt(x.lat.p99, 2)})`;
  const one = `${fmt(b.p50, 2)} ms (p99 ${fmt(b.p99, 2)}), one round trip`;
  return [
    [
      `(1) guarded call through the SDK, auto-approved, one at a time, p50 (report: '${g.defaultReport}', the SDK's default)`,
      lat(d),
      one,
      ratio(d.lat.p50, b.p50),
      '≤ 2× baseline',
      met(d.lat.p50 / b.p50 <= 2),
    ],
    [
      `(1) requests on the agent's critical path per guarded call (report: '${g.defaultReport}')`,
      `${d.criticalRequests.max} (${paths(d)})`,
      '1',
      '',
      '1',
      met(d.criticalRequests.max <= 1),
    ],
    [
      '(1) guarded call, the SDK alone (a fetch that answers at once, in process), p50',
      `${fmt(g.sdkAlone[g.defaultReport].p50, 2)} ms ('${g.defaultReport}'); ${fmt(g.sdkAlone[other].p50, 2)} ms ('${other}')`,
      one,
      ratio(g.sdkAlone[g.defaultReport].p50, b.p50),
      '(diagnostic)',
      '',
    ],
    [
      `(1) guarded call, report: '${other}'`,
      `${lat(o)}; ${o.criticalRequests.max} on the critical path (${paths(o)})`,
      one,
      ratio(o.lat.p50, b.p50),
      '(diagnostic)',
      '',
    ],
  ];
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`\nbench failed: ${e.stack ?? e.message}`);
    process.exit(1);
  },
);
