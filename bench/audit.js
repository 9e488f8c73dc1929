#!/usr/bin/env node
'use strict';
/**
 * Audit-trail benchmark (issue 3): loads a realistic, valid hash chain of N events (default 1,000,000) into a
 * fresh PostgreSQL database, starts the real, built service on it and measures GET /v1/audit/events (every
 * filter), /export (NDJSON and CSV) and /verify over HTTP. Every figure comes with a baseline measured in the
 * same run, in the same process, on the same rows:
 *   - a query: the same SELECT (same WHERE / ORDER BY / LIMIT) sent with plain `pg`;
 *   - an export: a plain `pg` keyset loop over the same rows, JSON.stringify(row) into a byte-counting sink;
 *   - verify: the same read loop + canonicalize + sha256 written directly, timed part by part (the read alone,
 *     canonicalize, sha256), so the ratio to the plain read loop and the raw sha256 cost come from one pass.
 * Results go to stdout only. The database is dropped at the end, on failure and on Ctrl-C (unless --keep).
 *
 *   npm run bench:audit                      # 1M events
 *   npm run bench:audit -- --events 100000   # or BENCH_EVENTS=100000
 *   DATABASE_URL=postgres://user@host:5432/postgres npm run bench:audit
 */
require('reflect-metadata');
const { performance, monitorEventLoopDelay } = require('node:perf_hooks');
const { randomBytes } = require('node:crypto');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir, cpus, totalmem, loadavg } = require('node:os');
const { join } = require('node:path');
const { Client } = require('pg');

const DIST = join(__dirname, '..', 'dist', 'src');
const { startServer } = require(join(DIST, 'server.js'));
const { loadConfig } = require(join(DIST, 'infrastructure/config/config.js'));
const { mintToken } = require(join(DIST, 'infrastructure/auth/jwt-verifier.js'));
const { eventHash, digestJson, sha256Hex, GENESIS_HASH } = require(
  join(DIST, 'infrastructure/persistence/event-store.js'),
);
const { pageQuery, seqRangeQuery } = require(join(DIST, 'infrastructure/persistence/sql-audit-log.js'));
const canonicalizeModule = require('canonicalize');
const canonicalize = canonicalizeModule.default ?? canonicalizeModule;

const SECRET = 'bench-secret-that-is-long-enough-for-hs256-0123456789';
const TENANT_A = 'acme';
const TENANT_B = 'globex';
const DAY = 86_400_000;
const START = Date.UTC(2025, 2, 1); // fixed, so every run loads the same data
const SPAN = 182 * DAY;
/** The service's selection, column for column (sql-audit-log.ts). */
const COLUMNS = `e.tenant_id, e.seq, e.id, e.type, e.at, e.recorded_at, e.instance_id, e.correlation_id, e.conversation_id,
  e.tool_call_id, e.tool_name, e.actor, e.data, e.prev_hash, e.hash`;
const EXPORT_BATCH = 1000; // the service's EXPORT_BATCH
const VERIFY_BATCH = 5000; // the service's VERIFY_BATCH

/** A pg client whose dropped connection fails its queries instead of crashing the process (cleanup still runs). */
async function connect(url) {
  const c = new Client({ connectionString: url });
  c.on('error', (e) => console.error(`pg connection error: ${e.message}`));
  await c.connect();
  return c;
}

// ---------------------------------------------------------------- options

function usage() {
  return `usage: node bench/audit.js [--events N] [--other N] [--reps N] [--heavy-reps N] [--batch N] [--seed N] [--keep]
  --events N       events of the main tenant (default 1000000, or BENCH_EVENTS)
  --other N        events of the second tenant (default 5000, at most N/10 for small runs)
  --reps N         timed repetitions of each query, after 3 warm-ups (default 20)
  --heavy-reps N   repetitions of the full export and its baseline, and of verify (default 2; the
                   smaller exports run max(3, N) times; the verify baseline, split by cost, runs once)
  --batch N        rows per INSERT while loading (default 5000)
  --seed N         data seed (default 42)
  --keep           keep the database afterwards (its URL is printed) to run EXPLAIN ANALYZE by hand
DATABASE_URL       admin URL of the PostgreSQL to use (default postgres://postgres@127.0.0.1:5432/postgres)`;
}

function usageError(message) {
  return Object.assign(new Error(`${message}\n${usage()}`), { usage: true });
}

function parseArgs(argv) {
  const o = { events: 1_000_000, other: undefined, reps: 20, heavyReps: 2, batch: 5000, seed: 42, keep: false };
  if (process.env.BENCH_EVENTS) o.events = Number(process.env.BENCH_EVENTS);
  const num = (name, v) => {
    const n = Number(String(v).replace(/_/g, ''));
    if (!Number.isInteger(n) || n < 1) throw usageError(`${name} must be a positive whole number, got ${v}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    let [flag, value] = argv[i].split('=', 2);
    const take = () => (value !== undefined ? value : argv[++i]);
    switch (flag) {
      case '--events':
        o.events = num(flag, take());
        break;
      case '--other':
        o.other = num(flag, take());
        break;
      case '--reps':
        o.reps = num(flag, take());
        break;
      case '--heavy-reps':
        o.heavyReps = num(flag, take());
        break;
      case '--batch':
        o.batch = Math.min(num(flag, take()), 20000);
        break;
      case '--seed':
        o.seed = num(flag, take());
        break;
      case '--keep':
        o.keep = true;
        break;
      case '-h':
      case '--help':
        console.log(usage());
        process.exit(0);
        break;
      default:
        throw usageError(`unknown option ${argv[i]}`);
    }
  }
  o.events = num('--events', o.events);
  if (o.other === undefined) o.other = Math.max(100, Math.min(5000, Math.floor(o.events / 10)));
  return o;
}

// ---------------------------------------------------------------- deterministic data

function prng(seed) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const hex8 = () => ((next() * 4294967296) >>> 0).toString(16).padStart(8, '0');
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (list) => list[Math.floor(next() * list.length)],
    weighted: (list) => {
      let r = next() * list.reduce((s, x) => s + x.w, 0);
      for (const x of list) if ((r -= x.w) < 0) return x;
      return list[list.length - 1];
    },
    exp: (mean) => -Math.log(1 - next()) * mean,
    logNormal: (median, sigma) =>
      median * Math.exp(sigma * Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next())),
    hex32: () => hex8() + hex8() + hex8() + hex8(),
    uuid: () => {
      const h = hex8() + hex8() + hex8() + hex8();
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[parseInt(h[16], 16) & 3]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
    },
  };
}

/** level: what the policy says for the tool; rule: the policy rule that matched. */
const TOOLS = [
  { name: 'get_weather', w: 14, level: 'automatic', rule: 0, ro: true, destructive: false },
  { name: 'search_docs', w: 18, level: 'automatic', rule: 0, ro: true, destructive: false },
  { name: 'read_file', w: 12, level: 'automatic', rule: 1, ro: true, destructive: false },
  { name: 'update_crm', w: 9, level: 'notify', rule: 2, ro: false, destructive: false },
  { name: 'create_ticket', w: 10, level: 'confirm', rule: 3, ro: false, destructive: false },
  { name: 'send_email', w: 12, level: 'confirm', rule: 3, ro: false, destructive: false },
  { name: 'run_sql', w: 8, level: 'confirm', rule: 4, ro: false, destructive: false },
  { name: 'delete_file', w: 6, level: 'confirm', rule: 5, ro: false, destructive: true },
  { name: 'deploy_service', w: 6, level: 'manual', rule: 6, ro: false, destructive: true },
  { name: 'transfer_funds', w: 5, level: 'manual', rule: 7, ro: false, destructive: true },
];
const AGENTS = [
  { id: 'agent-support', name: 'Support bot', w: 30 },
  { id: 'agent-billing', name: 'Billing bot', w: 15 },
  { id: 'agent-ops', name: 'Ops bot', w: 20 },
  { id: 'agent-sales', name: 'Sales bot', w: 15 },
  { id: 'agent-research', name: 'Research bot', w: 12 },
  { id: 'agent-devops', name: 'Deploy bot', w: 8 },
];
const PEOPLE = [
  { id: 'alice', name: 'Alice', w: 20 },
  { id: 'bob', name: 'Bob', w: 15 },
  { id: 'carol', name: 'Carol', w: 12 },
  { id: 'dave', name: 'Dave', w: 10 },
  { id: 'erin', name: 'Erin', w: 10 },
  { id: 'frank', name: 'Frank', w: 8 },
  { id: 'grace', name: 'Grace', w: 8 },
  { id: 'heidi', name: 'Heidi', w: 7 },
  { id: 'ivan', name: 'Ivan', w: 5 },
  { id: 'judy', name: 'Judy', w: 5 },
];
const CHANNELS = [
  { via: 'web', w: 50 },
  { via: 'slack', w: 30 },
  { via: 'cli', w: 10 },
  { via: 'api', w: 10 },
];
const WORDS = (
  'the quarterly report customer invoice refund account migration cluster staging production ticket urgent please ' +
  'review update schedule meeting summary database backup restore rollback deploy release notes weather forecast berlin paris ' +
  'contract renewal payment overdue escalate priority incident resolved pending approval budget forecast'
).split(' ');
const POLICY_ACTOR = { id: 'policy', kind: 'system', via: 'policy' };
const SYSTEM_ACTOR = { id: 'system', kind: 'system', via: 'system' };
const INSTANCES = ['tollgate-0', 'tollgate-1'];
/** Expected events per tool call with the mix below; sets the arrival rate so N events span SPAN. */
const EVENTS_PER_CALL = 4.05;

/** A tiny binary heap on [time, order]. */
class Heap {
  constructor() {
    this.a = [];
  }
  get size() {
    return this.a.length;
  }
  peek() {
    return this.a[0];
  }
  less(x, y) {
    return x.t < y.t || (x.t === y.t && x.o < y.o);
  }
  push(x) {
    const a = this.a;
    a.push(x);
    for (let i = a.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (!this.less(a[i], a[p])) break;
      [a[i], a[p]] = [a[p], a[i]];
      i = p;
    }
  }
  pop() {
    const a = this.a;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0) {
      a[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1,
          r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l], a[m])) m = l;
        if (r < a.length && this.less(a[r], a[m])) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]];
        i = m;
      }
    }
    return top;
  }
}

/**
 * One tenant's trail as the service would write it: conversations start, agents propose tool calls, the policy
 * decides or asks people, people decide after a while (or the call expires or is cancelled), agents execute and
 * complete; now and then a policy update, a halt and a resume. Events come out in time order, so `seq` follows `at`.
 */
class TrailGenerator {
  constructor(tenant, events, seed) {
    this.tenant = tenant;
    this.r = prng(seed);
    this.heap = new Heap();
    this.order = 0;
    const calls = events / EVENTS_PER_CALL;
    this.callGap = SPAN / calls;
    this.convGap = SPAN / Math.max(10, Math.round(events / 50)); // ~20k conversations for 1M events
    this.adminGap = 14 * DAY;
    this.convLife = 20 * this.convGap; // ~20 conversations open at a time
    this.nextCall = START + this.r.exp(this.callGap);
    this.nextConv = START;
    this.nextAdmin = START + this.r.exp(this.adminGap);
    this.active = [];
    this.policyVersion = 1;
    this.halted = null;
    this.stats = { conversations: 0, calls: 0, types: {}, convEvents: new Map() };
    // The tools are registered and the first policy set up at the start.
    const admin = { id: 'admin', kind: 'person', via: 'api', name: 'Admin', roles: ['admin'] };
    const corr = this.corr();
    for (const tool of TOOLS) {
      this.emit(
        START,
        'ToolRegistered',
        admin,
        { toolName: tool.name, correlationId: this.corr() },
        {
          description: `${tool.name.replace('_', ' ')} tool`,
          isReadOnly: tool.ro,
          requiresApproval: tool.level === 'confirm' || tool.level === 'manual',
          destructive: tool.destructive,
          registeredBy: 'admin',
          kind: 'admin',
          created: true,
        },
      );
    }
    this.emit(
      START,
      'PolicyUpdated',
      admin,
      { correlationId: corr },
      { version: 1, previousVersion: 0, document: this.policyDoc(), source: 'file' },
    );
  }

  corr() {
    return this.r.uuid();
  }

  policyDoc() {
    return {
      defaults: { unknownTools: 'confirm', timeoutSeconds: 3600, approvers: ['approver', 'admin'] },
      rules: [
        { match: 'get_*', level: 'automatic' },
        { match: 'read_*', level: 'automatic' },
        { match: 'update_crm', level: 'notify' },
        { match: '*', when: { confidenceBelow: 0.6 }, level: 'confirm' },
        { match: 'run_sql', level: 'confirm', requireRole: 'dba' },
        { match: 'delete_*', level: 'confirm', approvers: ['admin'], timeoutSeconds: 1800 },
        { match: 'deploy_service', level: 'manual', approvers: ['admin'], reason: 'production change' },
        {
          match: 'transfer_funds',
          level: 'manual',
          requireRole: 'finance',
          approvers: ['finance'],
          timeoutSeconds: 14400,
          reason: 'money',
        },
        { match: 'shell(cmd=rm *)', level: 'deny' },
      ],
    };
  }

  /** Schedules one event; `env` holds the optional envelope fields. */
  emit(t, type, actor, env, data) {
    this.heap.push({ t: Math.round(t), o: this.order++, type, actor, env, data });
  }

  startConversation(t) {
    const r = this.r;
    const agent = r.weighted(AGENTS);
    const id = `conv_${r.hex32()}`;
    const user =
      r.next() < 0.8 ? { id: `user_${r.int(5000)}`, roles: ['employee'], name: `User ${r.int(5000)}` } : null;
    const conv = { id, agent, until: t + r.exp(this.convLife) + 600_000 };
    this.active.push(conv);
    this.stats.conversations += 1;
    const data = { agentId: agent.id, user };
    if (r.next() < 0.6) data.title = `${r.pick(WORDS)} ${r.pick(WORDS)} ${r.pick(WORDS)}`;
    this.emit(
      t,
      'ConversationStarted',
      this.agentActor(agent),
      { conversationId: id, correlationId: this.corr() },
      data,
    );
    return conv;
  }

  agentActor(agent) {
    return { id: agent.id, kind: 'agent', via: 'api', roles: ['agent'], name: agent.name };
  }

  words(n) {
    let s = this.r.pick(WORDS);
    for (let i = 1; i < n; i++) s += ' ' + this.r.pick(WORDS);
    return s;
  }

  argumentsFor(tool) {
    const r = this.r;
    switch (tool.name) {
      case 'get_weather':
        return { city: r.pick(['Berlin', 'Paris', 'Lisbon', 'Oslo', 'Madrid']), units: 'metric' };
      case 'search_docs':
        return { query: this.words(4 + r.int(6)), limit: 10 };
      case 'read_file':
        return { path: `/srv/data/${r.pick(WORDS)}/${r.hex32().slice(0, 8)}.txt` };
      case 'update_crm':
        return {
          accountId: `acc_${r.int(100000)}`,
          fields: { status: r.pick(['lead', 'customer', 'churned']), note: this.words(8) },
        };
      case 'create_ticket':
        return { title: this.words(6), body: this.words(30 + r.int(40)), priority: r.pick(['low', 'normal', 'high']) };
      case 'send_email':
        return { to: `${r.pick(WORDS)}@example.com`, subject: this.words(6), body: this.words(40 + r.int(80)) };
      case 'run_sql':
        return { sql: `SELECT * FROM ${r.pick(WORDS)} WHERE id = ${r.int(1e6)} LIMIT 100`, database: 'reporting' };
      case 'delete_file':
        return { path: `/srv/data/${r.pick(WORDS)}/${r.hex32().slice(0, 8)}.bak`, recursive: false };
      case 'deploy_service':
        return { service: r.pick(['api', 'web', 'worker']), version: `1.${r.int(50)}.${r.int(20)}`, env: 'production' };
      default:
        return {
          from: `acc_${r.int(1000)}`,
          to: `acc_${r.int(1000)}`,
          amount: r.int(100000) / 100,
          currency: 'EUR',
          memo: this.words(5),
        };
    }
  }

  proposeCall(t) {
    const r = this.r;
    this.active = this.active.filter((c) => c.until > t);
    const conv = this.active.length > 0 ? r.pick(this.active) : this.startConversation(t);
    const tool = r.weighted(TOOLS);
    const id = `tc_${r.hex32()}`;
    this.stats.calls += 1;
    const env = { conversationId: conv.id, toolCallId: id, toolName: tool.name };
    const agentActor = this.agentActor(conv.agent);
    const args = this.argumentsFor(tool);
    const confidence = Math.round((0.4 + r.next() * 0.6) * 100) / 100;
    const deny = r.next() < 0.08;
    const level = deny ? 'deny' : tool.level;
    const rule = deny ? 8 : tool.rule;
    const policy = {
      level,
      rule,
      policyVersion: this.policyVersion,
      reason: deny ? 'matched a deny rule' : `rule ${rule} (${tool.name}) says ${level}`,
    };
    const ref = { level, rule, policyVersion: this.policyVersion };
    const proposed = {
      externalId: `ext_${r.hex32().slice(0, 12)}`,
      arguments: args,
      reason: this.words(5 + r.int(10)),
      confidence,
    };
    if (r.next() < 0.3) proposed.estimatedCost = Math.round(r.next() * 5000) / 100;
    proposed.toolFlags = {
      isReadOnly: tool.ro,
      requiresApproval: tool.level === 'confirm' || tool.level === 'manual',
      destructive: tool.destructive,
    };
    proposed.policy = policy;
    const request = this.corr();
    this.emit(t, 'ToolCallProposed', agentActor, { ...env, correlationId: request }, proposed);

    const execute = (at, approvedBy, approvedVia, edited) => {
      const ex = at + 200 + r.exp(2000);
      this.emit(
        ex,
        'ToolCallExecuted',
        agentActor,
        { ...env, correlationId: this.corr() },
        { arguments: args, edited, approvedBy, approvedVia, ...ref },
      );
      const duration = Math.round(r.logNormal(800, 1));
      const failed = r.next() < 0.05;
      this.emit(
        ex + duration,
        'ToolCallCompleted',
        agentActor,
        { ...env, correlationId: this.corr() },
        failed
          ? {
              outcome: 'failed',
              error: `${r.pick(['timeout', 'permission denied', 'not found'])}: ${this.words(4)}`,
              durationMs: duration,
            }
          : { outcome: 'succeeded', durationMs: duration },
      );
    };

    if (level === 'deny') {
      this.emit(
        t,
        'ToolCallRejected',
        POLICY_ACTOR,
        { ...env, correlationId: request },
        { outcome: 'rejected', rejectedBy: 'policy', via: 'policy', latencyMs: 0, reason: policy.reason, ...ref },
      );
      return;
    }
    if (level === 'automatic' || level === 'notify') {
      const data = { outcome: 'approved', via: 'policy', latencyMs: 0, ...policy };
      if (r.next() < 0.1) data.grantId = `grant_${r.hex32()}`;
      this.emit(t, 'ToolCallAutoApproved', POLICY_ACTOR, { ...env, correlationId: request }, data);
      execute(t, 'policy', 'policy', false);
      return;
    }
    const timeout = level === 'manual' ? 4 * 3600_000 : 3600_000;
    const approvers = level === 'manual' ? ['admin'] : ['approver', 'admin'];
    this.emit(
      t,
      'ApprovalRequested',
      POLICY_ACTOR,
      { ...env, correlationId: request },
      { ...policy, approvers, expiresAt: new Date(Math.round(t) + timeout).toISOString() },
    );
    const outcome = r.next();
    const person = r.weighted(PEOPLE);
    const via = r.weighted(CHANNELS).via;
    const personActor = { id: person.id, kind: 'person', via, name: person.name, roles: ['approver'] };
    const decidedAt = t + Math.min(timeout - 1000, Math.max(800, r.logNormal(90_000, 1.5)));
    const latencyMs = Math.round(decidedAt) - Math.round(t);
    if (outcome < 0.75) {
      const always = level !== 'manual' && r.next() < 0.1;
      const data = {
        outcome: 'approved',
        approvedBy: person.id,
        via,
        latencyMs,
        decision: always ? 'always_allow' : 'approve',
        ...ref,
      };
      if (r.next() < 0.3) data.reason = this.words(4);
      const edited = r.next() < 0.05;
      if (edited) {
        data.editedArguments = { ...args, note: 'edited by approver' };
        data.editedArgumentsDigest = digestJson(data.editedArguments);
      }
      const decision = this.corr();
      this.emit(decidedAt, 'ToolCallApproved', personActor, { ...env, correlationId: decision }, data);
      if (always) {
        this.emit(
          decidedAt,
          'GrantCreated',
          personActor,
          { ...env, correlationId: decision },
          { grantId: `grant_${r.hex32()}`, scope: 'conversation', scopeId: conv.id, createdBy: person.id, via },
        );
      }
      execute(decidedAt, person.id, via, edited);
    } else if (outcome < 0.9) {
      this.emit(
        decidedAt,
        'ToolCallRejected',
        personActor,
        { ...env, correlationId: this.corr() },
        { outcome: 'rejected', rejectedBy: person.id, via, latencyMs, reason: this.words(3 + r.int(6)), ...ref },
      );
    } else if (outcome < 0.97) {
      const expiresAt = Math.round(t) + timeout;
      const at = expiresAt + r.int(500);
      this.emit(
        at,
        'ToolCallExpired',
        SYSTEM_ACTOR,
        { ...env },
        {
          outcome: 'expired',
          reason: `No decision before ${new Date(expiresAt).toISOString()}`,
          expiresAt: new Date(expiresAt).toISOString(),
          waitedMs: at - Math.round(t),
          latencyMs: at - Math.round(t),
          ...ref,
        },
      );
    } else {
      const byAgent = r.next() < 0.5;
      this.emit(
        decidedAt,
        'ToolCallCancelled',
        byAgent ? agentActor : personActor,
        { ...env, correlationId: this.corr() },
        {
          outcome: 'cancelled',
          reason: byAgent ? 'conversation ended' : 'no longer needed',
          previousStatus: 'pending',
          ...ref,
        },
      );
    }
  }

  adminEvent(t) {
    const r = this.r;
    const admin = { id: 'admin', kind: 'person', via: 'web', name: 'Admin', roles: ['admin'] };
    if (this.halted) {
      const h = this.halted;
      this.halted = null;
      this.emit(
        t,
        'Resumed',
        admin,
        { correlationId: this.corr() },
        {
          scope: h.scope,
          id: h.id,
          reason: 'incident over',
          haltedAt: new Date(h.t).toISOString(),
          haltReason: h.reason,
        },
      );
    } else if (r.next() < 0.5) {
      const previousVersion = this.policyVersion++;
      this.emit(
        t,
        'PolicyUpdated',
        admin,
        { correlationId: this.corr() },
        { version: this.policyVersion, previousVersion, document: this.policyDoc(), source: 'api' },
      );
    } else {
      const scope = r.next() < 0.5 ? 'tenant' : 'agent';
      this.halted = {
        scope,
        id: scope === 'agent' ? r.weighted(AGENTS).id : null,
        reason: `incident ${r.int(1000)}: ${this.words(4)}`,
        t: Math.round(t),
      };
      this.emit(
        t,
        'Halted',
        admin,
        { correlationId: this.corr() },
        { scope, id: this.halted.id, reason: this.halted.reason },
      );
    }
  }

  /** Time of the next event this tenant writes. */
  peekTime() {
    this.fill();
    return this.heap.peek().t;
  }

  fill() {
    while (this.heap.size === 0 || this.heap.peek().t > Math.min(this.nextCall, this.nextConv, this.nextAdmin)) {
      if (this.nextConv <= this.nextCall && this.nextConv <= this.nextAdmin) {
        this.startConversation(this.nextConv);
        this.nextConv += this.r.exp(this.convGap);
      } else if (this.nextCall <= this.nextAdmin) {
        this.proposeCall(this.nextCall);
        this.nextCall += this.r.exp(this.callGap);
      } else {
        this.adminEvent(this.nextAdmin);
        this.nextAdmin += this.r.exp(this.adminGap);
      }
    }
  }

  /** The next scheduled event, in time order. */
  next() {
    this.fill();
    const e = this.heap.pop();
    this.stats.types[e.type] = (this.stats.types[e.type] ?? 0) + 1;
    if (e.env.conversationId)
      this.stats.convEvents.set(e.env.conversationId, (this.stats.convEvents.get(e.env.conversationId) ?? 0) + 1);
    return e;
  }
}

const DIGESTS = new WeakMap();

/** Appends to one tenant's chain exactly as EventStore does: same JSON shape, same eventHash. */
class Chain {
  constructor(tenant) {
    this.tenant = tenant;
    this.seq = 0;
    this.prevHash = GENESIS_HASH;
    this.firstAt = undefined;
    this.lastAt = undefined;
  }

  /** Returns the row in column order. */
  append(e, r) {
    this.seq += 1;
    const at = new Date(e.t);
    const recordedAt = new Date(e.t + r.int(30));
    const data = e.data;
    if (data.arguments !== undefined) {
      // A call's arguments are proposed and executed: digest them once.
      let digest = DIGESTS.get(data.arguments);
      if (digest === undefined) DIGESTS.set(data.arguments, (digest = digestJson(data.arguments)));
      data.argumentsDigest = digest;
    }
    const json = {
      seq: this.seq,
      id: r.uuid(),
      type: e.type,
      at: at.toISOString(),
      recordedAt: recordedAt.toISOString(),
      tenant: this.tenant,
      instanceId: r.pick(INSTANCES),
      ...(e.env.correlationId ? { correlationId: e.env.correlationId } : {}),
      ...(e.env.conversationId ? { conversationId: e.env.conversationId } : {}),
      ...(e.env.toolCallId ? { toolCallId: e.env.toolCallId } : {}),
      ...(e.env.toolName ? { toolName: e.env.toolName } : {}),
      actor: e.actor,
      data,
      prevHash: this.prevHash,
    };
    const hash = eventHash(this.prevHash, json);
    const row = [
      this.tenant,
      this.seq,
      json.id,
      e.type,
      json.at,
      json.recordedAt,
      json.instanceId,
      e.env.correlationId ?? null,
      e.env.conversationId ?? null,
      e.env.toolCallId ?? null,
      e.env.toolName ?? null,
      JSON.stringify(e.actor),
      JSON.stringify(data),
      this.prevHash,
      hash,
    ];
    this.prevHash = hash;
    this.firstAt ??= e.t;
    this.lastAt = e.t;
    return row;
  }
}

const INSERT_SQL = `INSERT INTO events (tenant_id, seq, id, type, at, recorded_at, instance_id, correlation_id, conversation_id,
    tool_call_id, tool_name, actor, data, prev_hash, hash)
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::uuid[], $4::text[], $5::timestamptz[], $6::timestamptz[], $7::text[], $8::text[],
    $9::text[], $10::text[], $11::text[], $12::jsonb[], $13::jsonb[], $14::text[], $15::text[])`;

/**
 * Loads both tenants' trails, interleaved in time, in multi-row INSERTs (unnest of 15 arrays) of `batch` rows,
 * committed every 10 batches. One INSERT is in flight while the next batch is generated and hashed.
 */
async function load(url, opts, log) {
  const client = await connect(url);
  const genA = new TrailGenerator(TENANT_A, opts.events, opts.seed);
  const genB = new TrailGenerator(TENANT_B, opts.other, opts.seed + 1);
  const chainA = new Chain(TENANT_A);
  const chainB = new Chain(TENANT_B);
  const r = prng(opts.seed + 2);
  const sample = { midCall: undefined, midConversation: undefined };
  const mid = Math.floor(opts.events / 2);
  let cols = Array.from({ length: 15 }, () => []);
  let pending = null;
  let waitMs = 0;
  let batches = 0;
  const t0 = performance.now();
  const flush = async () => {
    if (cols[0].length === 0) return;
    const params = cols;
    cols = Array.from({ length: 15 }, () => []);
    const w = performance.now();
    if (pending) await pending;
    pending = client.query(INSERT_SQL, params);
    pending.catch(() => undefined); // awaited below; avoids an unhandled rejection in between
    batches += 1;
    if (batches % 10 === 0) {
      await pending;
      await client.query('COMMIT');
      await client.query('BEGIN');
      pending = null;
    }
    waitMs += performance.now() - w;
  };
  await client.query('BEGIN');
  let lastReport = t0;
  while (chainA.seq < opts.events || chainB.seq < opts.other) {
    const useB = chainB.seq < opts.other && (chainA.seq >= opts.events || genB.peekTime() < genA.peekTime());
    const e = useB ? genB.next() : genA.next();
    const row = (useB ? chainB : chainA).append(e, r);
    if (!useB && chainA.seq >= mid && sample.midCall === undefined && e.type === 'ToolCallProposed') {
      sample.midCall = e.env.toolCallId;
      sample.midConversation = e.env.conversationId;
    }
    for (let i = 0; i < 15; i++) cols[i].push(row[i]);
    if (cols[0].length >= opts.batch) {
      await flush();
      const now = performance.now();
      if (now - lastReport > 15_000) {
        lastReport = now;
        log(
          `  loaded ${(chainA.seq + chainB.seq).toLocaleString('en-US')} events (${fmtRate((chainA.seq + chainB.seq) / ((now - t0) / 1000))}/s)`,
        );
      }
    }
  }
  await flush();
  if (pending) await pending;
  await client.query('COMMIT');
  for (const c of [chainA, chainB]) {
    await client.query(
      `INSERT INTO audit_heads (tenant_id, seq, hash) VALUES ($1, $2, $3)
      ON CONFLICT (tenant_id) DO UPDATE SET seq = EXCLUDED.seq, hash = EXCLUDED.hash`,
      [c.tenant, c.seq, c.prevHash],
    );
  }
  const ms = performance.now() - t0;
  await client.end();
  return { ms, waitMs, chainA, chainB, statsA: genA.stats, sample };
}

// ---------------------------------------------------------------- measuring

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
  const mid = s.length >> 1;
  const median = s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return { n: s.length, min: s[0], median, p95: at(0.95), max: s[s.length - 1] };
}

/** The service's WHERE for an audit filter (sql-audit-log.ts `where`), for the baseline and EXPLAIN. */
function selection(tenant, f, limit) {
  const params = [tenant];
  const c = ['e.tenant_id = $1'];
  if (f.conversationId !== undefined) c.push(`e.conversation_id = $${params.push(f.conversationId)}`);
  if (f.toolCallId !== undefined) c.push(`e.tool_call_id = $${params.push(f.toolCallId)}`);
  if (f.toolName !== undefined) c.push(`e.tool_name = $${params.push(f.toolName)}`);
  if (f.actor !== undefined) c.push(`(e.actor->>'id') = $${params.push(f.actor)}`);
  if (f.types?.length) c.push(`e.type = ANY($${params.push(f.types)}::text[])`);
  if (f.from) c.push(`e.at >= $${params.push(f.from)}`);
  if (f.to) c.push(`e.at < $${params.push(f.to)}`);
  if (f.afterSeq !== undefined) c.push(`e.seq > $${params.push(f.afterSeq)}`);
  const where = c.join(' AND ');
  const sql = `SELECT ${COLUMNS} FROM events e WHERE ${where} ORDER BY e.seq LIMIT $${params.push(limit)}`;
  return { sql, params, where, whereParams: params.slice(0, -1) };
}

function queryString(f, extra = {}) {
  const q = new URLSearchParams();
  if (f.conversationId) q.set('conversationId', f.conversationId);
  if (f.toolCallId) q.set('toolCallId', f.toolCallId);
  if (f.toolName) q.set('toolName', f.toolName);
  if (f.actor) q.set('actor', f.actor);
  if (f.types) q.set('type', f.types.join(','));
  if (f.from) q.set('from', f.from.toISOString());
  if (f.to) q.set('to', f.to.toISOString());
  if (f.afterSeq !== undefined) q.set('cursor', Buffer.from(`seq:${f.afterSeq}`).toString('base64url'));
  for (const [k, v] of Object.entries(extra)) q.set(k, String(v));
  return q.toString();
}

/**
 * The plan's shape, e.g. "Limit > Index Scan using events_by_tool_name". Partitions of `events` are summed up:
 * "Merge Append of 2/27 partitions > Index Scan using events_by_time", each partition's index named by the index
 * on `events` it belongs to (`layout` from `partitionLayout`).
 */
function planShape(node, layout) {
  let s = node['Node Type'];
  if (node['Strategy'] && node['Node Type'] === 'Aggregate') s = `${node['Strategy']} ${s}`;
  if (node['Index Name']) s += ` using ${layout?.indexes.get(node['Index Name']) ?? node['Index Name']}`;
  let kids = (node.Plans ?? []).filter((p) => p['Parent Relationship'] !== 'InitPlan');
  if (
    layout &&
    (s === 'Append' || s === 'Merge Append') &&
    kids.length > 0 &&
    kids.every((k) => layout.partitions.has(k['Relation Name']))
  ) {
    const shapes = [...new Set(kids.map((k) => planShape(k, layout)))];
    return `${s} of ${kids.length}/${layout.partitions.size} partitions > ${shapes.join(' | ')}`;
  }
  kids = kids.map((k) => planShape(k, layout));
  if (kids.length === 1) return `${s} > ${kids[0]}`;
  if (kids.length > 1) return `${s} > (${kids.join(' + ')})`;
  return s;
}

/** The partitions of events (none if it is a plain table) and each partition index's index on events. */
async function partitionLayout(client) {
  const parts = (
    await client.query(
      `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass`,
    )
  ).rows;
  const idx = (
    await client.query(`SELECT c.relname AS child, p.relname AS parent FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
     WHERE i.inhparent IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'events'::regclass)`)
  ).rows;
  return { partitions: new Set(parts.map((r) => r.relname)), indexes: new Map(idx.map((r) => [r.child, r.parent])) };
}

/** The relations an EXPLAIN reads. */
function relations(node, out = new Set()) {
  if (node['Relation Name']) out.add(node['Relation Name']);
  for (const k of node.Plans ?? []) relations(k, out);
  return out;
}

async function explain(client, sel, layout) {
  const res = await client.query(`EXPLAIN (FORMAT JSON) ${sel.sql}`, sel.params);
  const plan = res.rows[0]['QUERY PLAN'][0].Plan;
  return {
    shape: planShape(plan, layout).replace(/^Limit > /, ''),
    cost: plan['Total Cost'],
    relations: [...relations(plan)].sort(),
  };
}

/**
 * Cheap RSS peak sampling of this process (the service runs in it), and the event-loop delay meanwhile: how long
 * any other request to this instance (an approval, a long-poll answer) would have waited behind this work.
 */
class RssSampler {
  start() {
    this.loop = monitorEventLoopDelay({ resolution: 10 });
    this.loop.enable();
    this.before = process.memoryUsage.rss();
    this.peak = this.before;
    this.timer = setInterval(() => {
      const r = process.memoryUsage.rss();
      if (r > this.peak) this.peak = r;
    }, 10);
  }
  stop() {
    clearInterval(this.timer);
    this.loop.disable();
    const r = process.memoryUsage.rss();
    if (r > this.peak) this.peak = r;
    return {
      before: this.before,
      peak: this.peak,
      loopP99: this.loop.percentile(99) / 1e6,
      loopMax: this.loop.max / 1e6,
    };
  }
}

async function httpGet(base, path, token) {
  const t0 = performance.now();
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
  const body = Buffer.from(await res.arrayBuffer());
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${body.toString('utf8').slice(0, 300)}`);
  return { ms, body };
}

/** Streams an export, counting bytes and lines as it goes; nothing is kept. */
async function httpExport(base, path, token) {
  const sampler = new RssSampler();
  sampler.start();
  const t0 = performance.now();
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  let ttfb;
  let bytes = 0;
  let lines = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    ttfb ??= performance.now() - t0;
    bytes += value.length;
    for (let i = value.indexOf(10); i !== -1; i = value.indexOf(10, i + 1)) lines += 1;
  }
  const ms = performance.now() - t0;
  return { ms, ttfb, bytes, lines, ...sampler.stop() };
}

/** Baseline export: the same keyset batches with plain pg, JSON.stringify(row) per row into a counting sink. */
async function pgExport(client, tenant, f) {
  const sampler = new RssSampler();
  sampler.start();
  const t0 = performance.now();
  let bytes = 0;
  let rows = 0;
  let afterSeq = f.afterSeq;
  for (;;) {
    const sel = selection(tenant, { ...f, afterSeq }, EXPORT_BATCH);
    const res = await client.query(sel.sql, sel.params);
    for (const row of res.rows) bytes += Buffer.byteLength(JSON.stringify(row)) + 1;
    rows += res.rows.length;
    if (res.rows.length < EXPORT_BATCH) break;
    afterSeq = Number(res.rows[res.rows.length - 1].seq);
  }
  return { ms: performance.now() - t0, bytes, lines: rows, ...sampler.stop() };
}

/** Baseline verify: the plain read loop + rebuild the hashed JSON + canonicalize + sha256, with the time split. */
async function pgVerify(client, tenant) {
  const t0 = performance.now();
  let read = 0,
    build = 0,
    canon = 0,
    sha = 0,
    bytes = 0,
    n = 0,
    ok = true;
  let prevHash = GENESIS_HASH;
  for (let seq = 1; ;) {
    let t = performance.now();
    const res = await client.query(
      `SELECT ${COLUMNS} FROM events e WHERE e.tenant_id = $1 AND e.seq >= $2 ORDER BY e.seq LIMIT $3`,
      [tenant, seq, VERIFY_BATCH],
    );
    read += performance.now() - t;
    for (const row of res.rows) {
      t = performance.now();
      const json = {
        seq: Number(row.seq),
        id: row.id,
        type: row.type,
        at: row.at.toISOString(),
        recordedAt: row.recorded_at.toISOString(),
        tenant: row.tenant_id,
        instanceId: row.instance_id,
        ...(row.correlation_id !== null ? { correlationId: row.correlation_id } : {}),
        ...(row.conversation_id !== null ? { conversationId: row.conversation_id } : {}),
        ...(row.tool_call_id !== null ? { toolCallId: row.tool_call_id } : {}),
        ...(row.tool_name !== null ? { toolName: row.tool_name } : {}),
        actor: row.actor,
        data: row.data,
        prevHash: row.prev_hash,
      };
      const t1 = performance.now();
      const text = prevHash + canonicalize(json);
      const t2 = performance.now();
      const hash = sha256Hex(text);
      const t3 = performance.now();
      build += t1 - t;
      canon += t2 - t1;
      sha += t3 - t2;
      bytes += Buffer.byteLength(text);
      if (hash !== row.hash || row.prev_hash !== prevHash) ok = false;
      prevHash = row.hash;
      n += 1;
    }
    if (res.rows.length < VERIFY_BATCH) break;
    seq += VERIFY_BATCH;
  }
  return { ms: performance.now() - t0, n, ok, read, build, canon, sha, bytes };
}

// ---------------------------------------------------------------- formatting

function fmtMs(ms) {
  if (ms === undefined) return '-';
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}
/** The loop-delay histogram samples every 10 ms: a short run may have nothing to show. */
function fmtLoop(ms) {
  return ms >= 1 ? fmtMs(ms) : '< 1 ms';
}
function fmtRate(n) {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : n.toFixed(0);
}
function fmtBytes(b) {
  return b >= 1 << 30
    ? `${(b / (1 << 30)).toFixed(2)} GiB`
    : b >= 1 << 20
      ? `${(b / (1 << 20)).toFixed(1)} MiB`
      : `${(b / 1024).toFixed(1)} KiB`;
}
function ratio(a, b) {
  return `${(a / b).toFixed(2)}x`;
}
function table(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => '| ' + cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ') + ' |';
  return [line(headers), '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|', ...rows.map(line)].join('\n');
}

// ---------------------------------------------------------------- main

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const log = (s = '') => console.log(s);
  const adminUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `tollgate_bench_${randomBytes(5).toString('hex')}`;
  const dbUrl = new URL(adminUrl);
  dbUrl.pathname = `/${name}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'));
  let server;
  let client;
  let created = false;
  let cleaning;
  const cleanup = () =>
    (cleaning ??= (async () => {
      if (client) await client.end().catch(() => undefined);
      if (server) await server.close().catch((e) => console.error(`closing the service: ${e.message}`));
      rmSync(dataDir, { recursive: true, force: true });
      if (created && !opts.keep) {
        const admin = await connect(adminUrl);
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      } else if (created) {
        log(`\nkept database ${dbUrl.toString()} (drop it with: DROP DATABASE ${name})`);
      }
    })());
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.once(sig, () => {
      console.error(`\n${sig}: cleaning up`);
      cleanup().finally(() => process.exit(sig === 'SIGINT' ? 130 : 143));
    });
  }
  for (const ev of ['uncaughtException', 'unhandledRejection']) {
    process.once(ev, (e) => {
      console.error(`${ev}: ${e instanceof Error ? e.stack : e}`);
      cleanup().finally(() => process.exit(1));
    });
  }

  try {
    const admin = await connect(adminUrl);
    const [{ server_version: pgVersion }] = (await admin.query('SHOW server_version')).rows;
    await admin.query(`CREATE DATABASE ${name}`);
    created = true;
    await admin.end();

    log(
      `Tollgate audit benchmark: ${opts.events.toLocaleString('en-US')} events (${TENANT_A}) + ${opts.other.toLocaleString('en-US')} (${TENANT_B}), seed ${opts.seed}`,
    );
    log(
      `machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ${fmtBytes(totalmem())} RAM, Node ${process.version}, PostgreSQL ${pgVersion} at ${dbUrl.host}`,
    );
    log(
      `database ${name}; up to ${opts.reps} reps per query; load average at start ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}\n`,
    );

    const base = loadConfig({});
    server = await startServer(
      {
        ...base,
        host: '127.0.0.1',
        port: 0,
        databaseUrl: dbUrl.toString(),
        dataDir,
        auth: { secret: SECRET, devSecret: false },
        instanceId: 'bench',
        sweepIntervalMs: 60_000,
        // Measure the audit read side alone: no per-token rate limit (several hundred requests here), no outbox relay polling.
        rateLimitPer10s: 0,
        outboxPollMs: 0,
      },
      { logLevels: false },
    );
    const tokenA = await mintToken(SECRET, { sub: 'auditor-a', roles: ['auditor'], tenant: TENANT_A }, '2h');
    const tokenB = await mintToken(SECRET, { sub: 'auditor-b', roles: ['auditor'], tenant: TENANT_B }, '2h');
    const url = server.url;

    // ------------------------------------------------ load
    // Partitions for the months of the data, as an operator importing history would make them (the service makes
    // this month and the next three by itself; older months would otherwise land in events_default).
    const setup = await connect(dbUrl.toString());
    const [{ partitioned }] = (
      await setup.query(`SELECT to_regproc('tollgate_events_ensure_partitions') IS NOT NULL AS partitioned`)
    ).rows;
    if (partitioned)
      await setup.query(`SELECT tollgate_events_ensure_partitions($1, $2)`, [
        new Date(START),
        new Date(START + SPAN + DAY),
      ]);
    await setup.end();
    log('loading…');
    const loaded = await load(dbUrl.toString(), opts, log);
    client = await connect(dbUrl.toString());
    const tv = performance.now();
    await client.query('VACUUM (ANALYZE) events');
    const vacuumMs = performance.now() - tv;
    const total = loaded.chainA.seq + loaded.chainB.seq;
    // Summed over the partitions when events is partitioned (pg_partition_tree of a plain table is the table).
    const sizes = (
      await client.query(`SELECT c.relname AS name, c.relkind AS kind, (SELECT sum(pg_relation_size(t.relid)) FROM pg_partition_tree(c.oid) t) AS bytes
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND (c.relname = 'events' OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'events'::regclass))
       ORDER BY c.relkind IN ('r', 'p') DESC, c.relname`)
    ).rows;
    const [{ total_bytes: totalBytes }] = (
      await client.query(`SELECT sum(pg_total_relation_size(relid)) AS total_bytes FROM pg_partition_tree('events')`)
    ).rows;
    const layout = await partitionLayout(client);
    const s = loaded.statsA;
    log(`\n## Load\n`);
    log(
      table(
        ['what', 'value'],
        [
          [
            'events loaded',
            `${total.toLocaleString('en-US')} (${TENANT_A}: ${loaded.chainA.seq.toLocaleString('en-US')}, ${TENANT_B}: ${loaded.chainB.seq.toLocaleString('en-US')})`,
          ],
          [
            'load time',
            `${fmtMs(loaded.ms)} = ${fmtRate(total / (loaded.ms / 1000))} rows/s (waiting on PostgreSQL: ${fmtMs(loaded.waitMs)}, the rest generating + hashing)`,
          ],
          ['VACUUM (ANALYZE) events', fmtMs(vacuumMs)],
          [
            `${TENANT_A} conversations / tool calls`,
            `${s.conversations.toLocaleString('en-US')} / ${s.calls.toLocaleString('en-US')}`,
          ],
          [
            `${TENANT_A} time span`,
            `${new Date(loaded.chainA.firstAt).toISOString().slice(0, 10)} .. ${new Date(loaded.chainA.lastAt).toISOString().slice(0, 10)}`,
          ],
          [
            `${TENANT_A} event types`,
            Object.entries(s.types)
              .sort((a, b) => b[1] - a[1])
              .map(([t, n]) => `${t} ${((100 * n) / loaded.chainA.seq).toFixed(1)}%`)
              .join(', '),
          ],
          [
            'events table + indexes',
            `${fmtBytes(Number(totalBytes))} total; ` +
              sizes.map((r) => `${r.name} ${fmtBytes(Number(r.bytes))}`).join(', '),
          ],
          [
            'partitions of events',
            layout.partitions.size === 0
              ? 'none (a plain table)'
              : `${layout.partitions.size} (one per month, and events_default)`,
          ],
        ],
      ),
    );

    // ------------------------------------------------ queries
    const mid = loaded.chainA.firstAt + (loaded.chainA.lastAt - loaded.chainA.firstAt) / 2;
    const midDay = new Date(Math.floor(mid / DAY) * DAY);
    const week = (from) => ({ from, to: new Date(from.getTime() + 7 * DAY) });
    const lastWeek = week(new Date(Math.floor(loaded.chainA.lastAt / DAY) * DAY - 6 * DAY));
    const N = loaded.chainA.seq;
    const queries = [
      { name: 'first page (no filter)', f: {} },
      { name: 'first page, limit 1000', f: {}, limit: 1000 },
      { name: 'conversationId', f: { conversationId: loaded.sample.midConversation } },
      { name: 'toolCallId', f: { toolCallId: loaded.sample.midCall } },
      { name: 'toolName=send_email', f: { toolName: 'send_email' } },
      { name: 'toolName=transfer_funds', f: { toolName: 'transfer_funds' } },
      { name: 'actor=alice (person)', f: { actor: 'alice' } },
      { name: 'actor=agent-devops', f: { actor: 'agent-devops' } },
      { name: 'type=ApprovalRequested', f: { types: ['ApprovalRequested'] } },
      { name: 'type=ToolCallExpired (rare)', f: { types: ['ToolCallExpired'] } },
      { name: 'type=Approved,Rejected', f: { types: ['ToolCallApproved', 'ToolCallRejected'] } },
      { name: 'time: a week mid-range', f: week(midDay) },
      { name: 'time: the last week', f: lastWeek },
      { name: 'toolName + type', f: { toolName: 'transfer_funds', types: ['ToolCallApproved'] } },
      { name: 'actor + week mid-range', f: { actor: 'alice', ...week(midDay) } },
      { name: 'toolName + type + week', f: { toolName: 'send_email', types: ['ToolCallRejected'], ...week(midDay) } },
      { name: 'deep page: cursor at N-500', f: { afterSeq: Math.max(0, N - 500) } },
      { name: 'deep page: cursor at N/2', f: { afterSeq: Math.floor(N / 2) } },
      { name: 'toolName + cursor near end', f: { toolName: 'send_email', afterSeq: Math.max(0, N - 5000) } },
      { name: `other tenant: first page`, f: {}, tenant: TENANT_B },
      { name: `other tenant: toolName`, f: { toolName: 'send_email' }, tenant: TENANT_B },
      {
        name: `other tenant: A's conversation`,
        f: { conversationId: loaded.sample.midConversation },
        tenant: TENANT_B,
      },
    ];
    const results = [];
    for (const q of queries) {
      const tenant = q.tenant ?? TENANT_A;
      const token = tenant === TENANT_A ? tokenA : tokenB;
      const limit = q.limit ?? 100;
      const path = `/v1/audit/events?${queryString(q.f, { limit })}`;
      const sel = selection(tenant, q.f, limit + 1); // the service asks for one more row to know about a next page
      const matching = Number(
        (await client.query(`SELECT count(*) AS n FROM events e WHERE ${sel.where}`, sel.whereParams)).rows[0].n,
      );
      // Correctness first: the service and the baseline return the same rows.
      const firstCall = await httpGet(url, path, token);
      const first = JSON.parse(firstCall.body.toString('utf8'));
      const direct = await client.query(sel.sql, sel.params);
      const expected = direct.rows.slice(0, limit).map((r) => Number(r.seq));
      const got = first.events.map((e) => e.seq);
      if (JSON.stringify(got) !== JSON.stringify(expected) || first.events.some((e) => e.tenant !== tenant)) {
        throw new Error(`${q.name}: the service returned other rows than the same SELECT`);
      }
      // Slow queries get fewer repetitions (at least 5) so the whole run stays short.
      const reps = Math.max(5, Math.min(opts.reps, Math.floor(3000 / firstCall.ms)));
      for (let i = 0; i < (reps < opts.reps ? 1 : 2); i++) {
        await httpGet(url, path, token);
        await client.query(sel.sql, sel.params);
      }
      const http = [];
      const pg = [];
      for (let i = 0; i < reps; i++) {
        http.push((await httpGet(url, path, token)).ms);
        const t = performance.now();
        await client.query(sel.sql, sel.params);
        pg.push(performance.now() - t);
      }
      const plan = await explain(client, sel, layout);
      results.push({ q, rows: got.length, matching, http: stats(http), pg: stats(pg), plan });
    }
    // The floor of any request: no auth, no database.
    const floor = [];
    for (let i = 0; i < 3 + opts.reps; i++) {
      const t = performance.now();
      const res = await fetch(`${url}/health/live`);
      await res.arrayBuffer();
      if (i >= 3) floor.push(performance.now() - t);
    }
    const fl = stats(floor);
    log(
      `\n## GET /v1/audit/events (limit 100 unless said; n reps after 3 warm-ups, alternating; baseline = the same SELECT with pg)\n`,
    );
    log(`floor: GET /health/live (no auth, no database) median ${fmtMs(fl.median)}, p95 ${fmtMs(fl.p95)}\n`);
    log(
      table(
        [
          'query',
          'rows',
          'matching',
          'n',
          'Tollgate median',
          'p95',
          'min..max',
          'pg median',
          'ratio',
          'plan (EXPLAIN)',
        ],
        results.map((r) => [
          r.q.name,
          r.rows,
          r.matching.toLocaleString('en-US'),
          r.http.n,
          fmtMs(r.http.median),
          fmtMs(r.http.p95),
          `${fmtMs(r.http.min)}..${fmtMs(r.http.max)}`,
          fmtMs(r.pg.median),
          ratio(r.http.median, r.pg.median),
          r.plan.shape,
        ]),
      ),
    );

    // What the service itself sends for a time window (sql-audit-log.ts): the seq bounds, then the page.
    if (layout.partitions.size > 0) {
      const rows = [];
      for (const q of queries.filter((x) => x.f.from || x.f.to)) {
        const filter = { tenantId: q.tenant ?? TENANT_A, ...q.f };
        const rq = seqRangeQuery(filter);
        const [{ lo, hi }] = (await client.query(rq.sql, rq.params)).rows;
        const bounds = await explain(client, rq, layout);
        const page = await explain(
          client,
          pageQuery(filter, (q.limit ?? 100) + 1, lo === null ? null : { lo: Number(lo), hi: Number(hi) }),
          layout,
        );
        const parts = (p) => p.relations.filter((r) => layout.partitions.has(r)).join(', ');
        rows.push([
          q.name,
          `${bounds.relations.length}/${layout.partitions.size}: ${parts(bounds)}`,
          `${page.relations.length}/${layout.partitions.size}: ${parts(page)}`,
          page.shape,
        ]);
      }
      log(`\n## Partition pruning: the service's own queries for a time window (EXPLAIN)\n`);
      log(table(['query', 'seq bounds reads', 'page reads', 'page plan'], rows));
    }

    // ------------------------------------------------ exports
    const exports = [
      { name: 'NDJSON, all events', tenant: TENANT_A, token: tokenA, format: 'ndjson', f: {} },
      {
        name: 'CSV, Approved+Rejected over 3 months',
        tenant: TENANT_A,
        token: tokenA,
        format: 'csv',
        f: {
          types: ['ToolCallApproved', 'ToolCallRejected'],
          from: new Date(START + 30 * DAY),
          to: new Date(START + 121 * DAY),
        },
      },
      {
        name: 'CSV, toolName=transfer_funds',
        tenant: TENANT_A,
        token: tokenA,
        format: 'csv',
        f: { toolName: 'transfer_funds' },
      },
      { name: 'NDJSON, other tenant, all', tenant: TENANT_B, token: tokenB, format: 'ndjson', f: {} },
    ];
    const exportResults = [];
    for (const x of exports) {
      const path = `/v1/audit/export?${queryString(x.f, { format: x.format })}`;
      const matching = Number(
        (
          await client.query(
            `SELECT count(*) AS n FROM events e WHERE ${selection(x.tenant, x.f, 1).where}`,
            selection(x.tenant, x.f, 1).whereParams,
          )
        ).rows[0].n,
      );
      const plan = await explain(
        client,
        selection(x.tenant, { ...x.f, afterSeq: Math.floor(N / 2) }, EXPORT_BATCH),
        layout,
      );
      const http = [];
      const pg = [];
      const reps = matching > 100_000 ? opts.heavyReps : Math.max(3, opts.heavyReps);
      for (let i = 0; i < reps; i++) {
        const h = await httpExport(url, path, x.token);
        const expectLines = matching + (x.format === 'csv' ? 1 : 0);
        if (x.format === 'ndjson' && h.lines !== expectLines)
          throw new Error(`${x.name}: ${h.lines} lines, expected ${expectLines}`);
        if (x.format === 'csv' && h.lines < expectLines)
          throw new Error(`${x.name}: ${h.lines} lines, expected at least ${expectLines}`);
        http.push(h);
        pg.push(await pgExport(client, x.tenant, x.f));
      }
      exportResults.push({ x, matching, http, pg, plan });
    }
    log(
      `\n## GET /v1/audit/export (${opts.heavyReps} reps for the full export, ${Math.max(3, opts.heavyReps)} for the others; time to last byte; baseline = pg keyset loop, ${EXPORT_BATCH} rows a batch, JSON.stringify per row)\n`,
    );
    log(
      table(
        [
          'export',
          'rows',
          'bytes',
          'Tollgate median',
          'min..max',
          'rows/s',
          'MB/s',
          'first byte',
          'RSS before → peak',
          'loop delay p99 / max',
          'pg median',
          'pg min..max',
          'pg rows/s',
          'ratio',
          'plan of a batch',
        ],
        exportResults.map(({ x, matching, http, pg, plan }) => {
          const h = stats(http.map((r) => r.ms));
          const b = stats(pg.map((r) => r.ms));
          const peak = Math.max(...http.map((r) => r.peak));
          const before = Math.min(...http.map((r) => r.before));
          return [
            x.name,
            matching.toLocaleString('en-US'),
            fmtBytes(http[0].bytes),
            fmtMs(h.median),
            `${fmtMs(h.min)}..${fmtMs(h.max)}`,
            fmtRate(matching / (h.median / 1000)),
            (http[0].bytes / (1 << 20) / (h.median / 1000)).toFixed(1),
            fmtMs(stats(http.map((r) => r.ttfb)).median),
            `${fmtBytes(before)} → ${fmtBytes(peak)}`,
            `${fmtLoop(Math.max(...http.map((r) => r.loopP99)))} / ${fmtLoop(Math.max(...http.map((r) => r.loopMax)))}`,
            fmtMs(b.median),
            `${fmtMs(b.min)}..${fmtMs(b.max)}`,
            fmtRate(matching / (b.median / 1000)),
            ratio(h.median, b.median),
            plan.shape,
          ];
        }),
      ),
    );
    log(
      `(RSS is the whole process: service, benchmark client and pg baseline; baseline RSS peak ${fmtBytes(Math.max(...exportResults.flatMap((r) => r.pg.map((p) => p.peak))))})`,
    );

    // ------------------------------------------------ verify
    const verifyHttp = [];
    const direct = [];
    let verifyBody;
    for (let i = 0; i < opts.heavyReps; i++) {
      const sampler = new RssSampler();
      sampler.start();
      const h = await httpGet(url, '/v1/audit/verify', tokenA);
      const rss = sampler.stop();
      verifyBody = JSON.parse(h.body.toString('utf8'));
      if (!verifyBody.ok || verifyBody.checked !== N) throw new Error(`verify: ${JSON.stringify(verifyBody)}`);
      verifyHttp.push({ ms: h.ms, ...rss });
    }
    // Once: as slow as verify itself, and it is a breakdown rather than a repeated timing.
    const d = await pgVerify(client, TENANT_A);
    if (!d.ok || d.n !== N) throw new Error('the direct verify disagrees with the loaded chain');
    direct.push(d);
    const vh = stats(verifyHttp.map((r) => r.ms));
    const dv = stats(direct.map((r) => r.ms));
    const d0 = direct[0];
    const share = (ms) => `${((100 * ms) / vh.median).toFixed(0)}% of Tollgate's time`;
    log(
      `\n## GET /v1/audit/verify over ${N.toLocaleString('en-US')} events (${opts.heavyReps} reps; the split baseline once)\n`,
    );
    log(
      table(
        ['what', 'median', 'min..max', 'events/s', 'Tollgate / this'],
        [
          [
            'Tollgate GET /v1/audit/verify',
            fmtMs(vh.median),
            `${fmtMs(vh.min)}..${fmtMs(vh.max)}`,
            fmtRate(N / (vh.median / 1000)),
            '1.00x',
          ],
          [
            'baseline: pg read + canonicalize + sha256',
            fmtMs(dv.median),
            `${fmtMs(dv.min)}..${fmtMs(dv.max)}`,
            fmtRate(N / (dv.median / 1000)),
            ratio(vh.median, dv.median),
          ],
          [
            `  of which sha256 over ${fmtBytes(d0.bytes)}`,
            fmtMs(d0.sha),
            '',
            fmtRate(N / (d0.sha / 1000)),
            share(d0.sha),
          ],
          ['  of which canonicalize (RFC 8785)', fmtMs(d0.canon), '', fmtRate(N / (d0.canon / 1000)), share(d0.canon)],
          [
            `  of which the plain pg read loop (${VERIFY_BATCH} a batch)`,
            fmtMs(d0.read),
            '',
            fmtRate(N / (d0.read / 1000)),
            `${ratio(vh.median, d0.read)} (${share(d0.read)})`,
          ],
          ['  of which rebuilding the JSON', fmtMs(d0.build), '', fmtRate(N / (d0.build / 1000)), share(d0.build)],
        ],
      ),
    );
    log(
      `verify answered ${JSON.stringify(verifyBody)}; RSS during verify ${fmtBytes(Math.min(...verifyHttp.map((r) => r.before)))} → ${fmtBytes(Math.max(...verifyHttp.map((r) => r.peak)))}; ` +
        `event-loop delay during verify p99 ${fmtLoop(Math.max(...verifyHttp.map((r) => r.loopP99)))}, max ${fmtLoop(Math.max(...verifyHttp.map((r) => r.loopMax)))}`,
    );
    log(
      `\ntotal benchmark time ${fmtMs(performance.now() - started)}; load average at the end ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await cleanup();
  }
}

const watchdog = setTimeout(() => {
  console.error('the benchmark ran for 60 minutes: giving up');
  process.kill(process.pid, 'SIGTERM');
}, 60 * 60_000);
watchdog.unref();

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e?.usage ? e.message : e instanceof Error ? e.stack : e);
    process.exit(e?.usage ? 2 : 1);
  },
);
