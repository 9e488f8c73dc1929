/**
 * The audit trail through HTTP (CONTRACT §8, §9, §11 "Halt" and "Audit"): a scenario that makes every event
 * type, then what an auditor needs from each event (NIST 800-53 AU-3: what, when, where, who, outcome, plus
 * the AI specifics — arguments, their digest, the policy version and rule that decided, the person who
 * approved and how long it took), the hash chain recomputed from the API's JSON, filters and paging,
 * NDJSON and CSV exports, the signed checkpoint, request correlation, HITL metrics and gap findings, and
 * the kill switch end to end. One server on a fresh database; sections are isolated by tenant.
 */
import canonicalize from 'canonicalize';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader } from 'jose';
import { createHash } from 'node:crypto';
import { recomputedApiHash } from '../support/audit';
import { client, Reply } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

/** The documented event types (CONTRACT §9). */
const CONTRACT_EVENT_TYPES = [
  'ConversationStarted',
  'ToolRegistered',
  'PolicyUpdated',
  'ToolCallProposed',
  'ToolCallAutoApproved',
  'ApprovalRequested',
  'ToolCallApproved',
  'ToolCallRejected',
  'ToolCallExpired',
  'ToolCallCancelled',
  'ToolCallExecuted',
  'ToolCallCompleted',
  'GrantCreated',
  'Halted',
  'Resumed',
] as const;
type EventType = (typeof CONTRACT_EVENT_TYPES)[number];

const CHANNELS = ['policy', 'web', 'cli', 'slack', 'api', 'grpc', 'system'];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
const HEX64 = /^[0-9a-f]{64}$/;
const GENESIS = '0'.repeat(64);

let server: TestServer;
let http: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer({ sweepIntervalMs: 100 });
  http = client(server.url);
});

afterAll(async () => {
  await server?.stop();
});

// ---------------------------------------------------------------------------------------------------------
// helpers

type Json = any;

function expectProblem(res: Reply, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

const digest = (v: unknown) => createHash('sha256').update(canonicalize(v)!).digest('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function ok<T = Json>(res: Promise<Reply<T>>, status: number): Promise<Reply<T>> {
  const r = await res;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`);
  return r;
}

async function startConversation(token: string, id: string, extra: Record<string, unknown> = {}) {
  return (await ok(http.post('/v1/conversations', token, { id, ...extra }), 201)).body;
}

type Proposal = { id?: string; toolName: string; arguments: Record<string, unknown>; [k: string]: unknown };

async function propose(
  token: string,
  convId: string,
  calls: Proposal[],
  headers?: Record<string, string>,
): Promise<Json[]> {
  return (await ok(http.post(`/v1/conversations/${convId}/tool-calls`, token, { toolCalls: calls }, headers), 201)).body
    .toolCalls;
}

const decide = (token: string, id: string, body: Record<string, unknown>, channel?: string) =>
  ok(
    http.post(`/v1/tool-calls/${id}/decision`, token, body, channel ? { 'X-Tollgate-Channel': channel } : undefined),
    200,
  ).then((r) => r.body);
const claim = (token: string, id: string) =>
  ok(http.post(`/v1/tool-calls/${id}/execution`, token), 200).then((r) => r.body);
const report = (token: string, id: string, body: Record<string, unknown>) =>
  ok(http.post(`/v1/tool-calls/${id}/result`, token, body), 200).then((r) => r.body);

/** Long-polls a pending call until it leaves `pending` (the sweeper expires it). */
async function settled(token: string, id: string): Promise<Json> {
  for (let i = 0; i < 4; i++) {
    const r = await ok(http.get(`/v1/tool-calls/${id}?wait=5`, token), 200);
    if (r.body.status !== 'pending') return r.body;
  }
  throw new Error(`tool call ${id} stayed pending`);
}

/** Every event of a selection, following nextCursor. */
async function allEvents(token: string, query = ''): Promise<Json[]> {
  const out: Json[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const sep = query ? '&' : '';
    const res: Reply = await http.get(
      `/v1/audit/events?${query}${sep}limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      token,
    );
    if (res.status !== 200) throw new Error(`audit list answered ${res.status}: ${JSON.stringify(res.body)}`);
    out.push(...res.body.events);
    cursor = res.body.nextCursor;
    if (cursor === null) return out;
  }
  throw new Error('too many pages');
}

/** A raw GET: the export answers NDJSON, which the JSON client cannot parse. */
async function rawGet(path: string, token: string, headers: Record<string, string> = {}) {
  const res = await fetch(server.url + path, { headers: { authorization: `Bearer ${token}`, ...headers } });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** RFC 4180: fields separated by commas, records by CRLF, quoted fields may hold commas, CR/LF and doubled quotes. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  let wasQuoted = false;
  const endCell = () => {
    row.push(cell);
    cell = '';
    wasQuoted = false;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch !== '"') cell += ch;
      else if (text[i + 1] === '"') {
        cell += '"';
        i++;
      } else {
        quoted = false;
        const next = text[i + 1];
        if (next !== undefined && next !== ',' && next !== '\r' && next !== '\n')
          throw new Error(`CSV: text after a closing quote at ${i}`);
      }
      continue;
    }
    if (ch === '"') {
      if (cell !== '' || wasQuoted) throw new Error(`CSV: a quote inside an unquoted field at ${i}`);
      quoted = true;
      wasQuoted = true;
    } else if (ch === ',') endCell();
    else if (ch === '\r' && text[i + 1] === '\n') {
      endCell();
      rows.push(row);
      row = [];
      i++;
    } else if (ch === '\n') throw new Error(`CSV: a bare LF ends a record at ${i} (RFC 4180 wants CRLF)`);
    else cell += ch;
  }
  if (quoted) throw new Error('CSV: unterminated quoted field');
  if (cell !== '' || row.length > 0) {
    endCell();
    rows.push(row);
  }
  return rows;
}

/** PostgreSQL's percentile_cont: linear interpolation between the closest ranks. */
function percentileCont(values: number[], p: number): number {
  const v = [...values].sort((a, b) => a - b);
  const rank = p * (v.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return v[lo] + (v[hi] - v[lo]) * (rank - lo);
}

// ---------------------------------------------------------------------------------------------------------
// the scenario: every event type in tenant "trail"

const TRAIL = 'trail';
const NAMES: Record<string, string> = { 'agent-trail': 'Trail Agent', alice: 'Alice', root: 'Root Admin' };
const ROLES: Record<string, string[]> = { 'agent-trail': ['agent'], alice: ['approver'], root: ['admin'] };

const t: Record<string, string> = {};
/** The scenario's tool calls by name, as proposed: id, conversation, tool, arguments. */
const calls: Record<
  string,
  { id: string; conversationId: string; toolName: string; arguments: Record<string, unknown> }
> = {};
const EMAIL_ARGS = { to: 'bob@example.com', subject: 'Hi, "Bob"', body: 'Hello,\nsee =SUM(A1) and "quotes"' };
const EMAIL_EDIT = { to: 'bob@example.com', subject: 'Hi Bob', body: 'Hello Bob' };
let trail: Json[] = [];

beforeAll(async () => {
  t.agent = await server.token('agent-trail', ['agent'], { tenant: TRAIL, name: 'Trail Agent' });
  t.alice = await server.token('alice', ['approver'], { tenant: TRAIL, name: 'Alice' });
  t.admin = await server.token('root', ['admin'], { tenant: TRAIL, name: 'Root Admin' });
  t.auditor = await server.token('audrey', ['auditor'], { tenant: TRAIL, name: 'Audrey' });
  t.otherAgent = await server.token('agent-trail', ['agent'], { tenant: 'other' });
  t.otherAuditor = await server.token('olga', ['auditor'], { tenant: 'other' });

  const remember = (key: string, call: Json, args: Record<string, unknown>) =>
    (calls[key] = { id: call.id, conversationId: call.conversationId, toolName: call.toolName, arguments: args });

  await ok(http.put('/v1/tools/get_weather', t.admin, { description: 'Weather', isReadOnly: true }), 201);
  await ok(http.put('/v1/tools/send_email', t.agent, { requiresApproval: true }), 201);
  await ok(
    http.put('/v1/policy', t.admin, {
      defaults: { unknownTools: 'confirm', timeoutSeconds: 300 },
      rules: [
        { match: 'rm_*', level: 'deny', reason: 'Never delete files' },
        { match: 'slow_*', level: 'confirm', timeoutSeconds: 1 },
      ],
    }),
    200,
  );
  await startConversation(t.agent, 'trail-1', {
    user: { id: 'u-1', roles: ['user'], name: 'User One' },
    title: 'The trail',
  });
  await startConversation(t.agent, 'trail-2', { title: 'Expiring' });

  // Held with a 1 s timeout: expires while the rest runs.
  const [slow] = await propose(t.agent, 'trail-2', [{ toolName: 'slow_report', arguments: { period: 'q1' } }]);
  expect(slow.status).toBe('pending');
  remember('slow', slow, { period: 'q1' });

  // One step: let through, denied by a rule, and held for a person.
  const step = await propose(t.agent, 'trail-1', [
    { id: 'ext-weather', toolName: 'get_weather', arguments: { city: 'Paris' } },
    { toolName: 'rm_rf', arguments: { path: '/tmp/x' } },
    { toolName: 'send_email', arguments: EMAIL_ARGS, reason: 'user asked', confidence: 0.9 },
  ]);
  expect(step.map((c) => c.status)).toEqual(['approved', 'rejected', 'pending']);
  remember('weather', step[0], { city: 'Paris' });
  remember('rm', step[1], { path: '/tmp/x' });
  remember('email', step[2], EMAIL_ARGS);

  // A person approves with edited arguments, from the web inbox; the agent runs both approved calls.
  await decide(
    t.alice,
    calls.email.id,
    { decision: 'approve', reason: 'fixed the greeting', arguments: EMAIL_EDIT },
    'web',
  );
  const emailRun = await claim(t.agent, calls.email.id);
  expect(emailRun.arguments).toEqual(EMAIL_EDIT);
  await report(t.agent, calls.email.id, { outcome: 'succeeded', output: { messageId: 'm-1' } });
  await claim(t.agent, calls.weather.id);
  await report(t.agent, calls.weather.id, { outcome: 'failed', error: 'upstream timeout' });

  // A person rejects, from the CLI.
  const [deploy] = await propose(t.agent, 'trail-1', [{ toolName: 'deploy', arguments: { env: 'prod' } }]);
  remember('deploy', deploy, { env: 'prod' });
  await decide(t.alice, deploy.id, { decision: 'reject', reason: 'not on a Friday' }, 'cli');

  // always_allow: approved plus a standing grant, which lets the next call of the tool through.
  const [publish] = await propose(t.agent, 'trail-1', [{ toolName: 'publish_post', arguments: { post: 1 } }]);
  remember('publish', publish, { post: 1 });
  await decide(t.alice, publish.id, { decision: 'always_allow' });
  const [publish2] = await propose(t.agent, 'trail-1', [{ toolName: 'publish_post', arguments: { post: 2 } }]);
  expect(publish2.status).toBe('approved');
  remember('publish2', publish2, { post: 2 });

  // A pending call, then the kill switch on the conversation: both open calls are cancelled.
  const [sms] = await propose(t.agent, 'trail-1', [{ toolName: 'send_sms', arguments: { to: '+100' } }]);
  remember('sms', sms, { to: '+100' });
  await ok(http.post('/v1/halt', t.admin, { scope: 'conversation', id: 'trail-1', reason: 'Runaway agent' }), 200);
  await ok(http.post('/v1/resume', t.admin, { scope: 'conversation', id: 'trail-1', reason: 'Fixed' }), 200);

  expect((await settled(t.agent, calls.slow.id)).status).toBe('expired');

  // Another tenant, with a conversation of the same id, for the walls between tenants.
  await startConversation(t.otherAgent, 'trail-1');
  await propose(t.otherAgent, 'trail-1', [{ toolName: 'send_email', arguments: { to: 'eve@example.com' } }]);

  trail = await allEvents(t.auditor);
});

const callById = (id: string) => Object.values(calls).find((c) => c.id === id);
const ofType = (type: string) => trail.filter((e) => e.type === type);
const callOf = (e: Json) => {
  const c = callById(e.toolCallId);
  if (!c) throw new Error(`${e.type} ${e.seq} names an unknown tool call ${e.toolCallId}`);
  return c;
};

/** Tool-call events name their conversation, call and tool, and they agree with the call. */
function expectToolCallRef(e: Json) {
  const c = callOf(e);
  expect({ conversationId: e.conversationId, toolCallId: e.toolCallId, toolName: e.toolName }).toEqual({
    conversationId: c.conversationId,
    toolCallId: c.id,
    toolName: c.toolName,
  });
}

/** `outcome`, `level`, `rule`, `policyVersion` of the policy that judged the call. */
function expectDecisionRef(e: Json, outcome: string) {
  expect(e.data).toMatchObject({ outcome, level: expect.any(String), policyVersion: expect.any(Number) });
  expect(e.data).toHaveProperty('rule');
  expect(e.data.rule === null || Number.isInteger(e.data.rule)).toBe(true);
}

/** The actor as the contract and AU-3 want it: who, what kind, through which channel, with which roles and name. */
function expectActor(e: Json) {
  const a = e.actor;
  expect(typeof a.id).toBe('string');
  expect(a.id.length).toBeGreaterThan(0);
  expect(['person', 'agent', 'system']).toContain(a.kind);
  expect(CHANNELS).toContain(a.via);
  if (a.kind === 'person' || a.kind === 'agent') {
    expect(a.roles).toEqual(expect.arrayContaining(ROLES[a.id] ?? ['__unknown_actor__']));
    expect({ event: `${e.type} #${e.seq}`, name: a.name }).toEqual({ event: `${e.type} #${e.seq}`, name: NAMES[a.id] });
  }
}

const PEOPLE = ['alice', 'root'];

/** Per event type: what its record must hold beyond the common fields. A new type without a row fails below. */
const ROWS: Record<EventType, (e: Json) => void> = {
  ConversationStarted: (e) => {
    expect(e.actor).toMatchObject({ id: 'agent-trail', kind: 'agent' });
    expect(['trail-1', 'trail-2']).toContain(e.conversationId);
    expect(e.data).toMatchObject({ agentId: 'agent-trail' });
    if (e.conversationId === 'trail-1')
      expect(e.data).toMatchObject({ user: { id: 'u-1', roles: ['user'], name: 'User One' }, title: 'The trail' });
  },
  ToolRegistered: (e) => {
    expect(['get_weather', 'send_email']).toContain(e.toolName);
    expect(e.data).toMatchObject({
      isReadOnly: expect.any(Boolean),
      requiresApproval: expect.any(Boolean),
      destructive: expect.any(Boolean),
    });
    if (e.toolName === 'get_weather') expect(e.actor).toMatchObject({ id: 'root', kind: 'person' });
    else expect(e.actor).toMatchObject({ id: 'agent-trail', kind: 'agent' });
  },
  PolicyUpdated: (e) => {
    expect(e.actor).toMatchObject({ id: 'root', kind: 'person' });
    expect(e.data).toMatchObject({
      version: 1,
      document: { rules: [expect.objectContaining({ match: 'rm_*' }), expect.objectContaining({ match: 'slow_*' })] },
    });
  },
  ToolCallProposed: (e) => {
    expectToolCallRef(e);
    expect(e.actor).toMatchObject({ id: 'agent-trail', kind: 'agent' });
    expect(e.data.arguments).toEqual(callOf(e).arguments);
    expect(e.data.argumentsDigest).toBe(digest(callOf(e).arguments));
    expect(e.data.policy).toEqual({
      level: expect.any(String),
      rule: e.data.policy.rule === null ? null : expect.any(Number),
      policyVersion: 1,
      reason: expect.any(String),
    });
    if (e.toolCallId === calls.email.id) expect(e.data).toMatchObject({ reason: 'user asked', confidence: 0.9 });
    if (e.toolCallId === calls.weather.id) expect(e.data).toMatchObject({ externalId: 'ext-weather' });
  },
  ToolCallAutoApproved: (e) => {
    expectToolCallRef(e);
    expectDecisionRef(e, 'approved');
    expect(e.actor).toMatchObject({ id: 'policy', kind: 'system', via: 'policy' });
    expect(e.data).toMatchObject({ level: 'automatic', latencyMs: 0, reason: expect.any(String) });
    if (e.toolCallId === calls.publish2.id) {
      // Let through by the grant from always_allow: the reason names it.
      const grant = ofType('GrantCreated')[0];
      expect(e.data.grantId).toBe(grant.data.grantId);
      expect(e.data.reason).toContain(grant.data.grantId);
    }
  },
  ApprovalRequested: (e) => {
    expectToolCallRef(e);
    expect(e.actor).toMatchObject({ id: 'policy', kind: 'system' });
    expect(e.data).toMatchObject({
      level: 'confirm',
      policyVersion: 1,
      reason: expect.any(String),
      approvers: expect.any(Array),
    });
    expect(e.data).toHaveProperty('rule');
    expect(e.data.expiresAt).toMatch(ISO);
    if (e.toolCallId === calls.slow.id) expect(e.data.rule).toBe(1);
  },
  ToolCallApproved: (e) => {
    expectToolCallRef(e);
    expectDecisionRef(e, 'approved');
    expect(e.actor).toMatchObject({ id: 'alice', kind: 'person' });
    expect(e.data).toMatchObject({ approvedBy: 'alice', via: e.actor.via });
    expect(e.data.latencyMs).toBeGreaterThanOrEqual(0);
    if (e.toolCallId === calls.email.id) {
      expect(e.data).toMatchObject({
        via: 'web',
        reason: 'fixed the greeting',
        editedArguments: EMAIL_EDIT,
        editedArgumentsDigest: digest(EMAIL_EDIT),
      });
    }
  },
  ToolCallRejected: (e) => {
    expectToolCallRef(e);
    expectDecisionRef(e, 'rejected');
    expect(e.data.latencyMs).toBeGreaterThanOrEqual(0);
    if (e.toolCallId === calls.rm.id) {
      expect(e.actor).toMatchObject({ id: 'policy', kind: 'system', via: 'policy' });
      expect(e.data).toMatchObject({
        rejectedBy: 'policy',
        via: 'policy',
        level: 'deny',
        rule: 0,
        reason: 'Never delete files',
      });
    } else {
      expect(e.toolCallId).toBe(calls.deploy.id);
      expect(e.actor).toMatchObject({ id: 'alice', kind: 'person', via: 'cli' });
      expect(e.data).toMatchObject({ rejectedBy: 'alice', via: 'cli', reason: 'not on a Friday' });
    }
  },
  ToolCallExpired: (e) => {
    expectToolCallRef(e);
    expectDecisionRef(e, 'expired');
    expect(e.toolCallId).toBe(calls.slow.id);
    expect(e.actor).toMatchObject({ kind: 'system' });
    expect(e.data).toMatchObject({ level: 'confirm', rule: 1, reason: expect.any(String) });
    expect(e.data.latencyMs).toBeGreaterThanOrEqual(1000);
  },
  ToolCallCancelled: (e) => {
    expectToolCallRef(e);
    expectDecisionRef(e, 'cancelled');
    // The halt caught the always_allow'd call and the grant's call (approved, unclaimed) and the pending SMS.
    const open = [calls.publish.id, calls.publish2.id, calls.sms.id];
    expect(open).toContain(e.toolCallId);
    expect(e.actor).toMatchObject({ id: 'root', kind: 'person' });
    expect(e.data).toMatchObject({ reason: 'Runaway agent' });
    expect(
      ofType('ToolCallCancelled')
        .map((x) => x.toolCallId)
        .sort(),
    ).toEqual([...open].sort());
  },
  ToolCallExecuted: (e) => {
    expectToolCallRef(e);
    expect(e.actor).toMatchObject({ id: 'agent-trail', kind: 'agent' });
    const edited = e.toolCallId === calls.email.id;
    const ran = edited ? EMAIL_EDIT : callOf(e).arguments;
    expect(e.data).toMatchObject({
      arguments: ran,
      argumentsDigest: digest(ran),
      approvedBy: edited ? 'alice' : 'policy',
    });
    expect(typeof e.data.policyVersion).toBe('number');
  },
  ToolCallCompleted: (e) => {
    expectToolCallRef(e);
    expect(e.actor).toMatchObject({ id: 'agent-trail', kind: 'agent' });
    expect(e.data).toMatchObject(
      e.toolCallId === calls.email.id ? { outcome: 'succeeded' } : { outcome: 'failed', error: 'upstream timeout' },
    );
  },
  GrantCreated: (e) => {
    expect(e.actor).toMatchObject({ id: 'alice', kind: 'person' });
    expect(e).toMatchObject({ conversationId: 'trail-1', toolCallId: calls.publish.id, toolName: 'publish_post' });
    expect(e.data).toMatchObject({ grantId: expect.any(String), scope: 'conversation', createdBy: 'alice' });
  },
  Halted: (e) => {
    expect(e.actor).toMatchObject({ id: 'root', kind: 'person' });
    expect(e.data).toMatchObject({ scope: 'conversation', id: 'trail-1', reason: 'Runaway agent' });
  },
  Resumed: (e) => {
    expect(e.actor).toMatchObject({ id: 'root', kind: 'person' });
    expect(e.data).toMatchObject({ scope: 'conversation', id: 'trail-1' });
  },
};

describe('the audit record of every event type', () => {
  it('has a row for every documented type, and the scenario made no type without one', () => {
    expect(Object.keys(ROWS).sort()).toEqual([...CONTRACT_EVENT_TYPES].sort());
    const made = [...new Set(trail.map((e) => e.type))];
    expect(Object.keys(ROWS)).toEqual(expect.arrayContaining(made));
  });

  it.each(Object.keys(ROWS) as EventType[])('%s carries what an auditor needs', (type) => {
    const events = ofType(type);
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) {
      // what, when, where
      expect(e.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(e.type).toBe(type);
      expect(e.at).toMatch(ISO);
      expect(e.recordedAt).toMatch(ISO);
      expect(Date.parse(e.recordedAt)).toBeGreaterThanOrEqual(Date.parse(e.at));
      expect(e.tenant).toBe(TRAIL);
      expect(e.instanceId).toBe('test');
      // who
      expectActor(e);
      // which request: every event a request caused names it; the sweeper's own events have no request
      if (e.actor.via !== 'system')
        expect({ event: `${e.type} #${e.seq}`, correlationId: e.correlationId }).toEqual({
          event: `${e.type} #${e.seq}`,
          correlationId: expect.stringMatching(/^[A-Za-z0-9_.:-]{1,128}$/),
        });
      ROWS[type](e);
    }
  });

  it('names people by their token: only people decided, approved, halted or granted', () => {
    for (const e of trail.filter((x) => x.actor.kind === 'person')) expect(PEOPLE).toContain(e.actor.id);
  });

  it('gives every event its own id', () => {
    expect(new Set(trail.map((e) => e.id)).size).toBe(trail.length);
  });
});

describe('the hash chain as the API shows it', () => {
  it('recomputes every hash from the event JSON: sha256(prevHash + JCS(event without hash))', () => {
    for (const e of trail) {
      expect(e.hash).toMatch(HEX64);
      expect({ seq: e.seq, hash: recomputedApiHash(e) }).toEqual({ seq: e.seq, hash: e.hash });
    }
  });

  it('numbers events 1..N without gaps, links each to the one before, and starts from 64 zeros', () => {
    expect(trail.map((e) => e.seq)).toEqual(trail.map((_, i) => i + 1));
    expect(trail[0].prevHash).toBe(GENESIS);
    for (let i = 1; i < trail.length; i++) expect(trail[i].prevHash).toBe(trail[i - 1].hash);
  });

  it('verifies: {ok: true, checked: N}', async () => {
    const res = await http.get('/v1/audit/verify', t.auditor);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, checked: trail.length });
    expect(res.body.firstBadSeq).toBeUndefined();
  });
});

describe('filters on GET /v1/audit/events', () => {
  const ids = (list: Json[]) => list.map((e) => `${e.seq}:${e.type}`);

  async function expectSelection(query: string, keep: (e: Json) => boolean) {
    const expected = trail.filter(keep);
    expect(expected.length).toBeGreaterThan(0);
    const got = await allEvents(t.auditor, query);
    expect(ids(got)).toEqual(ids(expected));
    expect(got).toEqual(expected);
  }

  it('conversationId', () => expectSelection('conversationId=trail-1', (e) => e.conversationId === 'trail-1'));
  it('toolCallId', () => expectSelection(`toolCallId=${calls.email.id}`, (e) => e.toolCallId === calls.email.id));
  it('toolName', () => expectSelection('toolName=send_email', (e) => e.toolName === 'send_email'));
  it('actor', () => expectSelection('actor=alice', (e) => e.actor.id === 'alice'));
  it('type, one', () => expectSelection('type=ToolCallApproved', (e) => e.type === 'ToolCallApproved'));
  it('type, a comma list', () =>
    expectSelection('type=ToolCallApproved,ToolCallRejected', (e) =>
      ['ToolCallApproved', 'ToolCallRejected'].includes(e.type),
    ));
  it('type, a repeated parameter', () =>
    expectSelection('type=ToolCallApproved&type=ToolCallRejected&type=Halted', (e) =>
      ['ToolCallApproved', 'ToolCallRejected', 'Halted'].includes(e.type),
    ));

  it('from and to (ISO), at boundaries between events', async () => {
    // Boundaries strictly between two events' times, so inclusive or exclusive makes no difference.
    const times = [...new Set(trail.map((e) => Date.parse(e.at)))].sort((a, b) => a - b);
    const between = (i: number) => {
      for (let k = i; k < times.length - 1; k++) if (times[k + 1] - times[k] >= 2) return times[k] + 1;
      throw new Error('no gap between event times');
    };
    const from = between(Math.floor(times.length / 4));
    const to = between(Math.floor((times.length * 3) / 4));
    expect(from).toBeLessThan(to);
    const iso = (ms: number) => new Date(ms).toISOString();
    await expectSelection(`from=${iso(from)}`, (e) => Date.parse(e.at) >= from);
    await expectSelection(`to=${iso(to)}`, (e) => Date.parse(e.at) < to);
    await expectSelection(`from=${iso(from)}&to=${iso(to)}`, (e) => Date.parse(e.at) >= from && Date.parse(e.at) < to);
  });

  it('combined filters narrow together', () =>
    expectSelection(
      'conversationId=trail-1&toolName=send_email&type=ToolCallProposed,ToolCallExecuted,ToolCallApproved',
      (e) =>
        e.conversationId === 'trail-1' &&
        e.toolName === 'send_email' &&
        ['ToolCallProposed', 'ToolCallExecuted', 'ToolCallApproved'].includes(e.type),
    ));

  it('answers an empty page for a selection with no events', async () => {
    const res = await http.get('/v1/audit/events?conversationId=no-such-conversation', t.auditor);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ events: [], nextCursor: null });
  });

  it('pages with limit=3 and nextCursor over the same events as one big page', async () => {
    for (const query of ['', 'conversationId=trail-1&']) {
      const pages: Json[][] = [];
      let cursor: string | null = null;
      do {
        const res: Reply = await http.get(
          `/v1/audit/events?${query}limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          t.auditor,
        );
        expect(res.status).toBe(200);
        expect(res.body.events.length).toBeLessThanOrEqual(3);
        pages.push(res.body.events);
        cursor = res.body.nextCursor;
        expect(pages.length).toBeLessThan(200);
      } while (cursor !== null);
      const big = await allEvents(t.auditor, query.replace(/&$/, ''));
      expect(pages.slice(0, -1).every((p) => p.length === 3)).toBe(true);
      expect(ids(pages.flat())).toEqual(ids(big));
    }
  });

  it.each([
    ['type=Bogus', 'type'],
    ['type=ToolCallApproved,Bogus', 'type'],
    ['from=yesterday', 'from'],
    ['to=not-a-date', 'to'],
    ['limit=0', 'limit'],
    ['limit=ten', 'limit'],
    ['cursor=garbage', 'cursor'],
  ])('refuses %s with a 400 problem', async (query) => {
    expectProblem(await http.get(`/v1/audit/events?${query}`, t.auditor), 400, 'validation_failed');
  });
});

describe('walls between tenants', () => {
  it("never shows another tenant's events, even for the same conversation id", async () => {
    expect(trail.every((e) => e.tenant === TRAIL)).toBe(true);
    const other = await allEvents(t.otherAuditor);
    expect(other.length).toBeGreaterThan(0);
    expect(other.every((e) => e.tenant === 'other')).toBe(true);
    const trailIds = new Set(trail.map((e) => e.id));
    expect(other.some((e) => trailIds.has(e.id))).toBe(false);
    // Its own chain, from seq 1.
    expect(other.map((e) => e.seq)).toEqual(other.map((_, i) => i + 1));
    expect(other[0].prevHash).toBe(GENESIS);
    const sameConv = await allEvents(t.otherAuditor, 'conversationId=trail-1');
    expect(sameConv.every((e) => e.tenant === 'other')).toBe(true);
    expect(await allEvents(t.otherAuditor, `toolCallId=${calls.email.id}`)).toEqual([]);
  });

  it("keeps another tenant's events out of exports and checkpoints", async () => {
    const nd = await rawGet('/v1/audit/export?format=ndjson', t.otherAuditor);
    expect(nd.status).toBe(200);
    const lines = nd.text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines.every((e) => e.tenant === 'other')).toBe(true);
    const cp = await http.get('/v1/audit/checkpoint', t.otherAuditor, { accept: 'application/json' });
    expect(cp.body).toMatchObject({ tenant: 'other', seq: lines.length });
  });
});

describe('who may read the audit trail', () => {
  const endpoints = [
    '/v1/audit/events',
    '/v1/audit/export?format=ndjson',
    '/v1/audit/verify',
    '/v1/audit/checkpoint',
    '/v1/audit/metrics',
    '/v1/audit/gaps',
  ];

  it.each(endpoints)('%s: agents and approvers get 403', async (path) => {
    for (const token of [t.agent, t.alice]) {
      const res = await rawGet(path, token);
      expect(res.status).toBe(403);
      expect(JSON.parse(res.text)).toMatchObject({ code: 'forbidden' });
    }
  });

  it.each(endpoints)('%s: auditors and admins get 200', async (path) => {
    for (const token of [t.auditor, t.admin]) expect((await rawGet(path, token)).status).toBe(200);
  });

  it('needs a token: 401 without one', async () => {
    const res = await fetch(server.url + '/v1/audit/events');
    expect(res.status).toBe(401);
  });
});

describe('exports', () => {
  const FILTERS = ['', 'conversationId=trail-1', 'type=ToolCallProposed,ToolCallExecuted&toolName=send_email'];

  it.each(FILTERS)('NDJSON agrees with the list endpoint (filter: %p)', async (query) => {
    const res = await rawGet(`/v1/audit/export?format=ndjson&${query}`, t.auditor);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(res.text.endsWith('\n')).toBe(true);
    const lines = res.text
      .split('\n')
      .slice(0, -1)
      .map((l) => JSON.parse(l));
    expect(lines).toEqual(await allEvents(t.auditor, query));
  });

  it('NDJSON is the default format', async () => {
    const res = await rawGet('/v1/audit/export?conversationId=trail-2', t.auditor);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(
      res.text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    ).toEqual(await allEvents(t.auditor, 'conversationId=trail-2'));
  });

  it.each(FILTERS)('CSV (RFC 4180) agrees with the list endpoint row by row (filter: %p)', async (query) => {
    const res = await rawGet(`/v1/audit/export?format=csv&${query}`, t.auditor);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const [header, ...rows] = parseCsv(res.text);
    expect(header).toEqual(expect.arrayContaining(['seq', 'id', 'type', 'hash', 'data']));
    const col = (name: string) => header.indexOf(name);
    const expected = await allEvents(t.auditor, query);
    expect(rows).toHaveLength(expected.length);
    rows.forEach((row, i) => {
      const e = expected[i];
      expect(row).toHaveLength(header.length);
      expect({ seq: row[col('seq')], id: row[col('id')], type: row[col('type')], hash: row[col('hash')] }).toEqual({
        seq: String(e.seq),
        id: e.id,
        type: e.type,
        hash: e.hash,
      });
      expect(JSON.parse(row[col('data')])).toEqual(e.data);
      if (col('prevHash') >= 0) expect(row[col('prevHash')]).toBe(e.prevHash);
      if (col('actor') >= 0) expect(JSON.parse(row[col('actor')])).toEqual(e.actor);
    });
  });

  it('CSV quotes a cell holding commas, quotes and line breaks, and the cell reads back the same', async () => {
    // The proposed email's subject and body hold `,` `"` and a line break (inside the JSON as \n).
    const res = await rawGet(
      `/v1/audit/export?format=csv&toolCallId=${calls.email.id}&type=ToolCallProposed`,
      t.auditor,
    );
    expect(res.text).toContain('""');
    const [header, row] = parseCsv(res.text);
    expect(JSON.parse(row[header.indexOf('data')]).arguments).toEqual(EMAIL_ARGS);
  });

  it('refuses format=xml with a 400 problem', async () => {
    expectProblem(await http.get('/v1/audit/export?format=xml', t.auditor), 400, 'validation_failed');
  });

  it('refuses a bad filter before it starts the file', async () => {
    expectProblem(await http.get('/v1/audit/export?format=csv&type=Bogus', t.auditor), 400, 'validation_failed');
  });

  it('exports a selection with no events as an empty NDJSON file, or a CSV with its header only', async () => {
    const nd = await rawGet('/v1/audit/export?format=ndjson&conversationId=no-such-conversation', t.auditor);
    expect(nd.status).toBe(200);
    expect(nd.text).toBe('');
    const csv = await rawGet('/v1/audit/export?format=csv&conversationId=no-such-conversation', t.auditor);
    expect(csv.status).toBe(200);
    const rows = parseCsv(csv.text);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toEqual(expect.arrayContaining(['seq', 'id', 'type', 'hash', 'data']));
  });
});

describe('the signed checkpoint', () => {
  it('is a compact JWS (application/jose) over {tenant, seq, hash, at} that verifies with the published keys', async () => {
    const res = await rawGet('/v1/audit/checkpoint', t.auditor);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/jose/);
    const jws = res.text.trim();
    expect(jws).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(['EdDSA', 'ES256']).toContain(decodeProtectedHeader(jws).alg);

    const jwks = await http.get('/.well-known/jwks.json');
    expect(jwks.status).toBe(200);
    const { payload } = await compactVerify(jws, createLocalJWKSet(jwks.body));
    const claims = JSON.parse(new TextDecoder().decode(payload));
    const head = trail[trail.length - 1];
    expect(claims).toMatchObject({ tenant: TRAIL, seq: head.seq, hash: head.hash });
    expect(claims.at).toMatch(ISO);
  });

  it('answers {jws, tenant, seq, hash, at} with Accept: application/json', async () => {
    const res = await http.get('/v1/audit/checkpoint', t.admin, { accept: 'application/json' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const head = trail[trail.length - 1];
    expect(res.body).toMatchObject({
      jws: expect.any(String),
      tenant: TRAIL,
      seq: head.seq,
      hash: head.hash,
      at: expect.stringMatching(ISO),
    });
    const jwks = await http.get('/.well-known/jwks.json');
    const { payload } = await compactVerify(res.body.jws, createLocalJWKSet(jwks.body));
    expect(JSON.parse(new TextDecoder().decode(payload))).toMatchObject({
      tenant: TRAIL,
      seq: head.seq,
      hash: head.hash,
      at: res.body.at,
    });
  });

  it('does not verify once a byte of its payload changes', async () => {
    const res = await http.get('/v1/audit/checkpoint', t.auditor, { accept: 'application/json' });
    const [h, p, s] = res.body.jws.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), seq: 1 }),
    ).toString('base64url');
    const jwks = await http.get('/.well-known/jwks.json');
    await expect(compactVerify(`${h}.${forged}.${s}`, createLocalJWKSet(jwks.body))).rejects.toThrow();
  });
});

describe('X-Request-Id', () => {
  const TENANT = 'reqid';
  let agent: string;
  let auditor: string;

  beforeAll(async () => {
    agent = await server.token('agent-r', ['agent'], { tenant: TENANT });
    auditor = await server.token('aud-r', ['auditor'], { tenant: TENANT });
    await ok(
      http.put('/v1/tools/get_time', await server.token('adm-r', ['admin'], { tenant: TENANT }), { isReadOnly: true }),
      201,
    );
  });

  it('is echoed, and every event of that request carries it as correlationId', async () => {
    const started = await http.post('/v1/conversations', agent, { id: 'req-1' });
    expect(started.status).toBe(201);
    const res = await http.post(
      '/v1/conversations/req-1/tool-calls',
      agent,
      {
        toolCalls: [
          { toolName: 'get_time', arguments: {} },
          { toolName: 'ask_me', arguments: {} },
        ],
      },
      { 'X-Request-Id': 'audit-test-123' },
    );
    expect(res.status).toBe(201);
    expect(res.headers.get('x-request-id')).toBe('audit-test-123');
    const events = await allEvents(auditor, 'conversationId=req-1');
    const tagged = events.filter((e) => e.correlationId === 'audit-test-123');
    expect(tagged.map((e) => e.type).sort()).toEqual([
      'ApprovalRequested',
      'ToolCallAutoApproved',
      'ToolCallProposed',
      'ToolCallProposed',
    ]);
    // The conversation was started by another request: its event carries that request's generated id.
    const generated = started.headers.get('x-request-id');
    expect(generated).toMatch(/^[A-Za-z0-9_.:-]{8,128}$/);
    expect(generated).not.toBe('audit-test-123');
    expect(events.find((e) => e.type === 'ConversationStarted').correlationId).toBe(generated);
  });

  it('is generated and echoed when the request has none, also on reads and errors', async () => {
    const a = await http.get('/v1/audit/verify', auditor);
    const b = await http.get('/v1/audit/verify', auditor);
    expect(a.headers.get('x-request-id')).toBeTruthy();
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
    const bad = await http.get('/v1/audit/events?type=Bogus', auditor, { 'X-Request-Id': 'audit-test-err' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('x-request-id')).toBe('audit-test-err');
  });
});

// ---------------------------------------------------------------------------------------------------------
// metrics

describe('GET /v1/audit/metrics', () => {
  const TENANT = 'metrics';
  const m: Record<string, string> = {};
  let boundary: string;
  let pendingIds: string[] = [];

  async function held(convId: string, toolName: string) {
    await startConversation(m.agent, convId);
    const [c] = await propose(m.agent, convId, [{ toolName, arguments: { conv: convId } }]);
    expect(c.status).toBe('pending');
    return c;
  }

  beforeAll(async () => {
    m.agent = await server.token('agent-m', ['agent'], { tenant: TENANT });
    m.alice = await server.token('alice', ['approver'], { tenant: TENANT });
    m.admin = await server.token('root', ['admin'], { tenant: TENANT });
    m.auditor = await server.token('audrey', ['auditor'], { tenant: TENANT });
    await ok(
      http.put('/v1/policy', m.admin, {
        defaults: { unknownTools: 'confirm', timeoutSeconds: 600 },
        rules: [
          { match: 'auto_*', level: 'automatic' },
          { match: 'deny_*', level: 'deny' },
          { match: 'slow_*', level: 'confirm', timeoutSeconds: 1 },
        ],
      }),
      200,
    );

    // Phase 1: two approvals and one rejection by people, with different waits.
    const a1 = await held('m-a1', 'ask_a');
    await sleep(40);
    await decide(m.alice, a1.id, { decision: 'approve' });
    const a2 = await held('m-a2', 'ask_b');
    await decide(m.alice, a2.id, { decision: 'approve' });
    const r1 = await held('m-r1', 'ask_c');
    await sleep(80);
    await decide(m.alice, r1.id, { decision: 'reject', reason: 'no' });

    await sleep(15);
    boundary = new Date().toISOString();
    await sleep(15);

    // Phase 2: one approval and one rejection by people, three auto-approvals, two denials, an expiry, a cancellation.
    const slow = await held('m-slow', 'slow_job');
    const a3 = await held('m-a3', 'ask_d');
    await sleep(120);
    await decide(m.alice, a3.id, { decision: 'always_allow' });
    const r2 = await held('m-r2', 'ask_e');
    await decide(m.alice, r2.id, { decision: 'reject' });
    await startConversation(m.agent, 'm-policy');
    const judged = await propose(
      m.agent,
      'm-policy',
      ['auto_1', 'auto_2', 'auto_3', 'deny_1', 'deny_2'].map((toolName) => ({ toolName, arguments: {} })),
    );
    expect(judged.map((c) => c.status)).toEqual(['approved', 'approved', 'approved', 'rejected', 'rejected']);
    await held('m-cancel', 'ask_f');
    await ok(http.post('/v1/halt', m.admin, { scope: 'conversation', id: 'm-cancel', reason: 'stop' }), 200);
    await ok(http.post('/v1/resume', m.admin, { scope: 'conversation', id: 'm-cancel' }), 200);
    // Still pending when we read the metrics.
    pendingIds = [(await held('m-p1', 'ask_g')).id, (await held('m-p2', 'ask_h')).id];
    expect((await settled(m.agent, slow.id)).status).toBe('expired');
  });

  const metrics = async (query = '') => {
    const res = await http.get(`/v1/audit/metrics${query}`, m.auditor);
    expect(res.status).toBe(200);
    return res.body;
  };

  it('counts people’s approvals and rejections, the policy’s auto-approvals and denials, expiries, cancellations and pending approvals', async () => {
    expect(pendingIds).toHaveLength(2);
    expect(await metrics()).toMatchObject({
      pendingApprovals: 2,
      approvedCount: 3,
      rejectedCount: 2,
      deniedCount: 2,
      autoApprovedCount: 3,
      timeoutCount: 1,
      cancelledCount: 1,
    });
  });

  it('averages the latency of people’s decisions as the events record it, with p95 between the extremes', async () => {
    const decided = (await allEvents(m.auditor, 'type=ToolCallApproved,ToolCallRejected')).filter(
      (e) => e.data.via !== 'policy',
    );
    expect(decided).toHaveLength(5);
    const latencies = decided.map((e) => e.data.latencyMs as number);
    const avg = latencies.reduce((a, b) => a + b, 0) / latencies.length;
    const body = await metrics();
    expect(Math.abs(body.avgApprovalLatencyMs - avg)).toBeLessThanOrEqual(1);
    expect(Math.abs(body.p95ApprovalLatencyMs - percentileCont(latencies, 0.95))).toBeLessThanOrEqual(1);
    expect(body.avgApprovalLatencyMs).toBeGreaterThanOrEqual(0);
    expect(body.p95ApprovalLatencyMs).toBeGreaterThanOrEqual(body.avgApprovalLatencyMs - 1);
    expect(body.p95ApprovalLatencyMs).toBeLessThanOrEqual(Math.max(...latencies) + 1);
  });

  it('restricts counts to the window; pendingApprovals is now, whatever the window', async () => {
    expect(await metrics(`?to=${boundary}`)).toMatchObject({
      pendingApprovals: 2,
      approvedCount: 2,
      rejectedCount: 1,
      deniedCount: 0,
      autoApprovedCount: 0,
      timeoutCount: 0,
      cancelledCount: 0,
    });
    expect(await metrics(`?from=${boundary}`)).toMatchObject({
      pendingApprovals: 2,
      approvedCount: 1,
      rejectedCount: 1,
      deniedCount: 2,
      autoApprovedCount: 3,
      timeoutCount: 1,
      cancelledCount: 1,
    });
  });

  it('answers zeros and null averages for a window in the past', async () => {
    expect(await metrics('?to=2000-01-01T00:00:00Z')).toEqual({
      pendingApprovals: 2,
      approvedCount: 0,
      rejectedCount: 0,
      deniedCount: 0,
      autoApprovedCount: 0,
      timeoutCount: 0,
      cancelledCount: 0,
      avgApprovalLatencyMs: null,
      p95ApprovalLatencyMs: null,
    });
  });

  it('answers null averages in a tenant where no person decided', async () => {
    const tenant = 'metrics-none';
    const agent = await server.token('agent-n', ['agent'], { tenant });
    await ok(http.put('/v1/tools/get_x', await server.token('root', ['admin'], { tenant }), { isReadOnly: true }), 201);
    await startConversation(agent, 'n-1');
    await propose(agent, 'n-1', [{ toolName: 'get_x', arguments: {} }]);
    const res = await http.get('/v1/audit/metrics', await server.token('audrey', ['auditor'], { tenant }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      approvedCount: 0,
      rejectedCount: 0,
      autoApprovedCount: 1,
      avgApprovalLatencyMs: null,
      p95ApprovalLatencyMs: null,
      pendingApprovals: 0,
    });
  });

  it('refuses a bad window with a 400 problem', async () => {
    expectProblem(await http.get('/v1/audit/metrics?from=yesterday', m.auditor), 400, 'validation_failed');
  });
});

// ---------------------------------------------------------------------------------------------------------
// gaps

describe('GET /v1/audit/gaps', () => {
  const findings = async (token: string, query = '') => {
    const res = await http.get(`/v1/audit/gaps${query}`, token);
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body.findings)).toBe(true);
    return res.body.findings as Json[];
  };

  describe('in a tenant whose policy lets a destructive tool run unattended', () => {
    const TENANT = 'gaps-a';
    const g: Record<string, string> = {};
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      g.agent = await server.token('agent-g', ['agent'], { tenant: TENANT });
      g.alice = await server.token('alice', ['approver'], { tenant: TENANT });
      g.admin = await server.token('root', ['admin'], { tenant: TENANT });
      g.auditor = await server.token('audrey', ['auditor'], { tenant: TENANT });
      for (const name of ['drop_db', 'wipe_disk', 'purge_cache'])
        await ok(http.put(`/v1/tools/${name}`, g.admin, { destructive: true }), 201);
      await ok(http.put('/v1/policy', g.admin, { rules: [{ match: 'drop_*', level: 'automatic' }] }), 200);

      // Let through by the rule and run: nobody looked.
      await startConversation(g.agent, 'g-1');
      const [drop] = await propose(g.agent, 'g-1', [{ toolName: 'drop_db', arguments: { db: 'prod' } }]);
      expect(drop.status).toBe('approved');
      await claim(g.agent, drop.id);
      ids.drop = drop.id;

      // Approved by a person, then run.
      await startConversation(g.agent, 'g-2');
      const [wipe] = await propose(g.agent, 'g-2', [{ toolName: 'wipe_disk', arguments: {} }]);
      expect(wipe.status).toBe('pending');
      await decide(g.alice, wipe.id, { decision: 'approve' });
      await claim(g.agent, wipe.id);
      ids.wipe = wipe.id;

      // always_allow, then a call let through by the standing grant: both ran with a person's consent.
      await startConversation(g.agent, 'g-3');
      const [purge] = await propose(g.agent, 'g-3', [{ toolName: 'purge_cache', arguments: { n: 1 } }]);
      await decide(g.alice, purge.id, { decision: 'always_allow' });
      await claim(g.agent, purge.id);
      const [purge2] = await propose(g.agent, 'g-3', [{ toolName: 'purge_cache', arguments: { n: 2 } }]);
      expect(purge2.status).toBe('approved');
      await claim(g.agent, purge2.id);
      ids.purge = purge.id;
      ids.purge2 = purge2.id;
    });

    it('reports HITL-01 (high) for the destructive tool the policy lets run automatically', async () => {
      const list = await findings(g.auditor);
      const hitl01 = list.filter((f) => f.code === 'HITL-01');
      expect(hitl01).toEqual([
        expect.objectContaining({ code: 'HITL-01', severity: 'high', toolName: 'drop_db', detail: expect.any(String) }),
      ]);
    });

    it('reports HITL-EXEC (critical) for the destructive call that ran without a person’s approval', async () => {
      const list = await findings(g.auditor);
      expect(list.filter((f) => f.code === 'HITL-EXEC')).toEqual([
        expect.objectContaining({
          code: 'HITL-EXEC',
          severity: 'critical',
          toolName: 'drop_db',
          toolCallId: ids.drop,
          detail: expect.any(String),
        }),
      ]);
    });

    it('reports no HITL-EXEC for calls a person approved, nor for calls let through by a standing grant', async () => {
      const flagged = (await findings(g.auditor)).filter((f) => f.code === 'HITL-EXEC').map((f) => f.toolCallId);
      for (const id of [ids.wipe, ids.purge, ids.purge2]) expect(flagged).not.toContain(id);
    });

    it('reports no HITL-02: approvals were requested', async () => {
      expect((await findings(g.auditor)).filter((f) => f.code === 'HITL-02')).toEqual([]);
    });

    it('takes HITL-EXEC from the window but HITL-01 from the current policy', async () => {
      const past = await findings(g.auditor, '?to=2000-01-01T00:00:00Z');
      expect(past.map((f) => f.code)).toEqual(['HITL-01']);
    });

    it('is open to admins and closed to approvers and agents', async () => {
      expect((await http.get('/v1/audit/gaps', g.admin)).status).toBe(200);
      expect((await http.get('/v1/audit/gaps', g.alice)).status).toBe(403);
      expect((await http.get('/v1/audit/gaps', g.agent)).status).toBe(403);
    });
  });

  describe('in a tenant whose policy can ask people but never did', () => {
    const TENANT = 'gaps-b';
    let auditor: string;

    beforeAll(async () => {
      const agent = await server.token('agent-g', ['agent'], { tenant: TENANT });
      auditor = await server.token('audrey', ['auditor'], { tenant: TENANT });
      await ok(
        http.put('/v1/tools/get_x', await server.token('root', ['admin'], { tenant: TENANT }), { isReadOnly: true }),
        201,
      );
      // defaults.unknownTools = confirm: the policy can ask people.
      await startConversation(agent, 'b-1');
      const [c] = await propose(agent, 'b-1', [{ toolName: 'get_x', arguments: {} }]);
      expect(c.status).toBe('approved');
    });

    it('reports HITL-02 (high) for a window with proposals and no approval requested', async () => {
      const list = await findings(auditor);
      expect(list).toEqual([
        expect.objectContaining({ code: 'HITL-02', severity: 'high', detail: expect.any(String) }),
      ]);
    });

    it('reports nothing for a window without proposals', async () => {
      expect(await findings(auditor, '?to=2000-01-01T00:00:00Z')).toEqual([]);
    });
  });

  it('reports no finding in a clean tenant', async () => {
    const tenant = 'gaps-clean';
    const agent = await server.token('agent-c', ['agent'], { tenant });
    const approver = await server.token('alice', ['approver'], { tenant });
    const admin = await server.token('root', ['admin'], { tenant });
    await ok(http.put('/v1/tools/delete_row', admin, { destructive: true }), 201);
    await ok(http.put('/v1/tools/get_row', admin, { isReadOnly: true }), 201);
    await startConversation(agent, 'c-1');
    const [del, get] = await propose(agent, 'c-1', [
      { toolName: 'delete_row', arguments: { id: 7 } },
      { toolName: 'get_row', arguments: { id: 7 } },
    ]);
    expect([del.status, get.status]).toEqual(['pending', 'approved']);
    await decide(approver, del.id, { decision: 'approve' });
    for (const id of [del.id, get.id]) {
      await claim(agent, id);
      await report(agent, id, { outcome: 'succeeded' });
    }
    expect(await findings(await server.token('audrey', ['auditor'], { tenant }))).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------
// halt and resume

describe('halt and resume', () => {
  const call = async (token: string, id: string) => (await ok(http.get(`/v1/tool-calls/${id}`, token), 200)).body;
  const proposeRaw = (token: string, convId: string, toolName: string, extra: Record<string, unknown> = {}) =>
    http.post(`/v1/conversations/${convId}/tool-calls`, token, { toolCalls: [{ toolName, arguments: {}, ...extra }] });

  describe('of a tenant', () => {
    const TENANT = 'halt-tenant';
    const h: Record<string, string> = {};
    const ids: Record<string, string> = {};
    let haltRes: Reply;

    beforeAll(async () => {
      h.agent = await server.token('agent-h', ['agent'], { tenant: TENANT });
      h.alice = await server.token('alice', ['approver'], { tenant: TENANT });
      h.admin = await server.token('root', ['admin'], { tenant: TENANT, name: 'Root Admin' });
      h.auditor = await server.token('audrey', ['auditor'], { tenant: TENANT });
      await ok(http.put('/v1/tools/get_x', h.admin, { isReadOnly: true }), 201);

      for (const c of ['h-pending', 'h-auto', 'h-approved', 'h-claimed', 'h-new']) await startConversation(h.agent, c);
      ids.pending = (await propose(h.agent, 'h-pending', [{ toolName: 'send_x', arguments: {} }]))[0].id;
      ids.auto = (await propose(h.agent, 'h-auto', [{ toolName: 'get_x', arguments: {} }]))[0].id;
      ids.approved = (await propose(h.agent, 'h-approved', [{ toolName: 'send_x', arguments: {} }]))[0].id;
      await decide(h.alice, ids.approved, { decision: 'approve', reason: 'fine' });
      ids.claimed = (await propose(h.agent, 'h-claimed', [{ toolName: 'get_x', arguments: {} }]))[0].id;
      await claim(h.agent, ids.claimed);

      haltRes = await http.post('/v1/halt', h.admin, { scope: 'tenant', reason: 'incident 42' });
    });

    it('answers 200', () => {
      expect(haltRes.status).toBe(200);
    });

    it('cancels pending calls, with cancellation {by, at, reason}', async () => {
      const c = await call(h.auditor, ids.pending);
      expect(c.status).toBe('cancelled');
      expect(c.cancellation).toMatchObject({ by: { id: 'root' }, reason: 'incident 42' });
      expect(c.cancellation.at).toMatch(ISO);
      expect(c.decision).toMatchObject({ outcome: 'cancelled' });
    });

    it('cancels approved-but-unclaimed calls and keeps the approval given in decision', async () => {
      const auto = await call(h.auditor, ids.auto);
      expect(auto.status).toBe('cancelled');
      expect(auto.decision).toMatchObject({ outcome: 'approved', by: { id: 'policy', via: 'policy' } });
      expect(auto.cancellation).toMatchObject({ by: { id: 'root' }, reason: 'incident 42' });
      const approved = await call(h.auditor, ids.approved);
      expect(approved.status).toBe('cancelled');
      expect(approved.decision).toMatchObject({ outcome: 'approved', by: { id: 'alice' }, reason: 'fine' });
      expect(approved.cancellation).toMatchObject({ by: { id: 'root' }, reason: 'incident 42' });
    });

    it('leaves claimed calls alone', async () => {
      expect((await call(h.auditor, ids.claimed)).status).toBe('executed');
    });

    it('refuses new proposals and claims with 503 halted', async () => {
      expectProblem(await proposeRaw(h.agent, 'h-new', 'get_x'), 503, 'halted');
      expectProblem(await http.post(`/v1/tool-calls/${ids.auto}/execution`, h.agent), 503, 'halted');
    });

    it('still accepts the result of a call claimed before the halt', async () => {
      const res = await http.post(`/v1/tool-calls/${ids.claimed}/result`, h.agent, { outcome: 'succeeded' });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('completed');
    });

    it('shows in GET /v1/status to admins, approvers and auditors; agents get 403', async () => {
      for (const token of [h.admin, h.alice, h.auditor]) {
        const res = await http.get('/v1/status', token);
        expect(res.status).toBe(200);
        expect(res.body.halts).toEqual([expect.objectContaining({ scope: 'tenant', reason: 'incident 42' })]);
      }
      expectProblem(await http.get('/v1/status', h.agent), 403, 'forbidden');
    });

    it('halting again answers 200 and changes nothing', async () => {
      const before = await allEvents(h.auditor);
      const again = await http.post('/v1/halt', h.admin, { scope: 'tenant', reason: 'another reason' });
      expect(again.status).toBe(200);
      expect((await http.get('/v1/status', h.admin)).body.halts).toEqual([
        expect.objectContaining({ scope: 'tenant', reason: 'incident 42' }),
      ]);
      expect(await allEvents(h.auditor)).toEqual(before);
    });

    it('records Halted and the cancellations in the trail', async () => {
      const events = await allEvents(h.auditor, 'type=Halted,ToolCallCancelled');
      const halted = events.filter((e) => e.type === 'Halted');
      expect(halted).toHaveLength(1);
      expect(halted[0]).toMatchObject({
        actor: { id: 'root', kind: 'person', name: 'Root Admin' },
        data: { scope: 'tenant', reason: 'incident 42' },
      });
      expect(
        events
          .filter((e) => e.type === 'ToolCallCancelled')
          .map((e) => e.toolCallId)
          .sort(),
      ).toEqual([ids.pending, ids.auto, ids.approved].sort());
    });

    it('resume lifts it: status is clear, proposals pass, and resuming again changes nothing', async () => {
      const res = await http.post('/v1/resume', h.admin, { scope: 'tenant' });
      expect(res.status).toBe(200);
      expect((await http.get('/v1/status', h.auditor)).body.halts).toEqual([]);
      expect((await proposeRaw(h.agent, 'h-new', 'get_x')).status).toBe(201);
      const before = await allEvents(h.auditor, 'type=Resumed');
      expect(before).toHaveLength(1);
      expect(before[0]).toMatchObject({ actor: { id: 'root', kind: 'person' }, data: { scope: 'tenant' } });
      expect((await http.post('/v1/resume', h.admin, { scope: 'tenant' })).status).toBe(200);
      expect(await allEvents(h.auditor, 'type=Resumed')).toEqual(before);
    });
  });

  describe('of an agent', () => {
    const TENANT = 'halt-agent';
    const h: Record<string, string> = {};
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      h.ag1 = await server.token('ag-1', ['agent'], { tenant: TENANT });
      h.ag2 = await server.token('ag-2', ['agent'], { tenant: TENANT });
      h.admin = await server.token('root', ['admin'], { tenant: TENANT });
      h.auditor = await server.token('audrey', ['auditor'], { tenant: TENANT });
      for (const [token, conv] of [
        [h.ag1, 'a1-1'],
        [h.ag1, 'a1-2'],
        [h.ag2, 'a2-1'],
        [h.ag2, 'a2-2'],
      ])
        await startConversation(token, conv);
      ids.ag1 = (await propose(h.ag1, 'a1-1', [{ toolName: 'send_x', arguments: {} }]))[0].id;
      ids.ag2 = (await propose(h.ag2, 'a2-1', [{ toolName: 'send_x', arguments: {} }]))[0].id;
      await ok(http.post('/v1/halt', h.admin, { scope: 'agent', id: 'ag-1', reason: 'loops' }), 200);
    });

    it("cancels that agent's open calls only", async () => {
      expect((await call(h.auditor, ids.ag1)).status).toBe('cancelled');
      expect((await call(h.auditor, ids.ag2)).status).toBe('pending');
    });

    it('refuses that agent’s proposals in any of its conversations, not the others’', async () => {
      expectProblem(await proposeRaw(h.ag1, 'a1-2', 'get_x'), 503, 'halted');
      expect((await proposeRaw(h.ag2, 'a2-2', 'send_y')).status).toBe(201);
    });

    it('lists the halt with its id, and resume lifts it', async () => {
      expect((await http.get('/v1/status', h.auditor)).body.halts).toEqual([
        expect.objectContaining({ scope: 'agent', id: 'ag-1', reason: 'loops' }),
      ]);
      expect((await http.post('/v1/resume', h.admin, { scope: 'agent', id: 'ag-1' })).status).toBe(200);
      expect((await proposeRaw(h.ag1, 'a1-2', 'get_x')).status).toBe(201);
      expect((await allEvents(h.auditor, 'type=Halted,Resumed')).map((e) => [e.type, e.data.scope, e.data.id])).toEqual(
        [
          ['Halted', 'agent', 'ag-1'],
          ['Resumed', 'agent', 'ag-1'],
        ],
      );
    });
  });

  describe('of a conversation', () => {
    const TENANT = 'halt-conv';
    const h: Record<string, string> = {};
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      h.agent = await server.token('agent-c', ['agent'], { tenant: TENANT });
      h.admin = await server.token('root', ['admin'], { tenant: TENANT });
      h.auditor = await server.token('audrey', ['auditor'], { tenant: TENANT });
      for (const c of ['c-1', 'c-2', 'c-3']) await startConversation(h.agent, c);
      ids.c1 = (await propose(h.agent, 'c-1', [{ id: 'ext-1', toolName: 'send_x', arguments: { a: 1 } }]))[0].id;
      ids.c2 = (await propose(h.agent, 'c-2', [{ toolName: 'send_x', arguments: {} }]))[0].id;
      await ok(http.post('/v1/halt', h.admin, { scope: 'conversation', id: 'c-1', reason: 'odd' }), 200);
    });

    it('cancels its open calls only, and shows it halted', async () => {
      expect((await call(h.auditor, ids.c1)).status).toBe('cancelled');
      expect((await call(h.auditor, ids.c2)).status).toBe('pending');
      expect((await ok(http.get('/v1/conversations/c-1', h.agent), 200)).body.status).toBe('halted');
    });

    it('refuses new proposals there with 503, but answers a repeat of earlier calls with 200', async () => {
      expectProblem(await proposeRaw(h.agent, 'c-1', 'get_x'), 503, 'halted');
      const repeat = await http.post('/v1/conversations/c-1/tool-calls', h.agent, {
        toolCalls: [{ id: 'ext-1', toolName: 'send_x', arguments: { a: 1 } }],
      });
      expect(repeat.status).toBe(200);
      expect(repeat.body.toolCalls[0]).toMatchObject({ id: ids.c1, status: 'cancelled' });
      expect((await proposeRaw(h.agent, 'c-3', 'get_x')).status).toBe(201);
    });

    it('resume lifts it', async () => {
      expect((await http.post('/v1/resume', h.admin, { scope: 'conversation', id: 'c-1' })).status).toBe(200);
      expect((await ok(http.get('/v1/conversations/c-1', h.agent), 200)).body.status).toBe('active');
      expect((await proposeRaw(h.agent, 'c-1', 'get_x')).status).toBe(201);
    });

    it('answers 404 for a conversation that does not exist', async () => {
      expectProblem(
        await http.post('/v1/halt', h.admin, { scope: 'conversation', id: 'no-such-conv', reason: 'x' }),
        404,
        'not_found',
      );
    });
  });

  describe('requests', () => {
    let admin: string;
    let approver: string;
    beforeAll(async () => {
      admin = await server.token('root', ['admin'], { tenant: 'halt-bad' });
      approver = await server.token('alice', ['approver'], { tenant: 'halt-bad' });
    });

    it.each([
      ['scope agent without id', { scope: 'agent', reason: 'x' }],
      ['scope conversation without id', { scope: 'conversation', reason: 'x' }],
      ['scope tenant with an id', { scope: 'tenant', id: 'halt-bad', reason: 'x' }],
      ['no reason', { scope: 'tenant' }],
      ['an empty reason', { scope: 'tenant', reason: '' }],
      ['an unknown scope', { scope: 'planet', reason: 'x' }],
      ['an unknown field', { scope: 'tenant', reason: 'x', force: true }],
    ])('refuses %s with 400', async (_name, body) => {
      expectProblem(await http.post('/v1/halt', admin, body), 400, 'validation_failed');
      expect((await http.get('/v1/status', admin)).body.halts).toEqual([]);
    });

    it('refuses resume with scope agent but no id', async () => {
      expectProblem(await http.post('/v1/resume', admin, { scope: 'agent' }), 400, 'validation_failed');
    });

    it('is for admins: an approver gets 403', async () => {
      expectProblem(await http.post('/v1/halt', approver, { scope: 'tenant', reason: 'x' }), 403, 'forbidden');
      expectProblem(await http.post('/v1/resume', approver, { scope: 'tenant' }), 403, 'forbidden');
    });
  });
});
