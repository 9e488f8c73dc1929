/**
 * The policy's life through HTTP: its versions, rollback, simulation of a candidate document, and the policy
 * file reloading on change (one version between instances, an invalid file keeping the version in force).
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandBus } from '@nestjs/cqrs';
import fc from 'fast-check';
import { PolicyFileWatcher } from '../../src/adapters/policy-file/policy-file';
import { client, Reply } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { until } from '../support/wait';

let server: TestServer;
let http: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});

afterAll(async () => {
  await server?.stop();
});

function expectProblem(res: Reply, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

/** The tokens of one tenant, so that each test starts from version 0. */
async function tenant(name: string) {
  const as = (sub: string, role: string) => server.token(sub, [role], { tenant: name });
  return {
    admin: await as('root', 'admin'),
    agent: await as('bot', 'agent'),
    approver: await as('bob', 'approver'),
    auditor: await as('audrey', 'auditor'),
  };
}

const STRICT = {
  rules: [
    { match: 'get_*', level: 'automatic' },
    { match: 'delete_*', level: 'deny', reason: 'no deleting' },
  ],
};
const LAX = { rules: [{ match: '*', level: 'automatic' }] };
const EMPTY = { rules: [] };

async function putAll(admin: string, ...docs: unknown[]) {
  for (const doc of docs) expect((await http.put('/v1/policy', admin, doc)).status).toBe(200);
}

let conversations = 0;
/** Proposes one call in a new conversation of a user with `roles`; answers the call. */
async function propose(agent: string, toolName: string, args: Record<string, unknown> = {}, roles = ['admin']) {
  const id = `conv-${++conversations}`;
  expect((await http.post('/v1/conversations', agent, { id, user: { id: 'carol', roles } })).status).toBe(201);
  const r = await http.post(`/v1/conversations/${id}/tool-calls`, agent, {
    toolCalls: [{ toolName, arguments: args }],
  });
  expect(r.status).toBe(201);
  return r.body.toolCalls[0];
}

async function eventCount(auditor: string): Promise<number> {
  let n = 0;
  let cursor: string | null = null;
  do {
    const r: Reply = await http.get(`/v1/audit/events?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, auditor);
    expect(r.status).toBe(200);
    n += r.body.events.length;
    cursor = r.body.nextCursor;
  } while (cursor);
  return n;
}

describe('GET /v1/policy/versions', () => {
  it('lists versions newest first, in pages, with who made each and its number of rules, to every role of the tenant', async () => {
    const t = await tenant('versions-list');
    await putAll(t.admin, STRICT, LAX, EMPTY);
    const first = await http.get('/v1/policy/versions?limit=2', t.approver);
    expect(first.status).toBe(200);
    expect(first.body.items).toEqual([
      { version: 3, createdAt: expect.any(String), createdBy: 'root', rules: 0 },
      { version: 2, createdAt: expect.any(String), createdBy: 'root', rules: 1 },
    ]);
    const rest = await http.get(`/v1/policy/versions?limit=2&cursor=${first.body.nextCursor}`, t.agent);
    expect(rest.body).toEqual({
      items: [{ version: 1, createdAt: expect.any(String), createdBy: 'root', rules: 2 }],
      nextCursor: null,
    });
    for (const token of [t.admin, t.auditor])
      expect(
        (await http.get('/v1/policy/versions', token)).body.items.map((v: { version: number }) => v.version),
      ).toEqual([3, 2, 1]);
  });

  it('answers an empty list before the first PUT, hides other tenants, and refuses a cursor it did not issue', async () => {
    const t = await tenant('versions-empty');
    expect((await http.get('/v1/policy/versions', t.auditor)).body).toEqual({ items: [], nextCursor: null });
    expectProblem(await http.get('/v1/policy/versions?cursor=bm9wZQ', t.admin), 400, 'validation_failed');
    expectProblem(await http.get('/v1/policy/versions?limit=0', t.admin), 400, 'validation_failed');
    expectProblem(await http.get('/v1/policy/versions'), 401, 'unauthenticated');
  });
});

describe('GET /v1/policy/versions/{version}', () => {
  it('answers one version with its whole document; 404 for one that does not exist or belongs to another tenant; 400 for a non-integer', async () => {
    const t = await tenant('versions-get');
    await putAll(t.admin, STRICT, LAX);
    const v1 = await http.get('/v1/policy/versions/1', t.agent);
    expect(v1.status).toBe(200);
    expect(v1.body).toEqual({
      version: 1,
      defaults: (await http.get('/v1/policy', t.admin)).body.defaults,
      rules: STRICT.rules,
      createdAt: expect.any(String),
      createdBy: 'root',
    });
    expectProblem(await http.get('/v1/policy/versions/3', t.admin), 404, 'not_found');
    expectProblem(await http.get('/v1/policy/versions/0', t.admin), 404, 'not_found');
    expectProblem(
      await http.get('/v1/policy/versions/2', (await tenant('versions-get-other')).admin),
      404,
      'not_found',
    );
    for (const bad of ['abc', '1.5', '-1', '1e3'])
      expectProblem(await http.get(`/v1/policy/versions/${bad}`, t.admin), 400, 'validation_failed');
  });
});

describe('POST /v1/policy/rollback', () => {
  it('makes a new version with the old document, keeps the history, records rolledBackFrom, and the old decisions return', async () => {
    const t = await tenant('rollback');
    await putAll(t.admin, STRICT, LAX);
    expect((await propose(t.agent, 'delete_source')).status).toBe('approved'); // LAX lets it run

    const r = await http.post('/v1/policy/rollback', t.admin, { version: 1, reason: 'LAX was a mistake' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ version: 3, rules: STRICT.rules, updatedBy: 'root' });
    expect((await http.get('/v1/policy', t.approver)).body.version).toBe(3);
    expect(
      (await http.get('/v1/policy/versions', t.admin)).body.items.map((v: { version: number }) => v.version),
    ).toEqual([3, 2, 1]);
    expect((await http.get('/v1/policy/versions/2', t.admin)).body.rules).toEqual(LAX.rules); // history is never rewritten

    const denied = await propose(t.agent, 'delete_source');
    expect(denied).toMatchObject({
      status: 'rejected',
      policy: { level: 'deny', rule: 1, policyVersion: 3, reason: 'no deleting' },
    });

    const events = (await http.get('/v1/audit/events?type=PolicyUpdated', t.auditor)).body.events;
    expect(events.map((e: { data: { version: number } }) => e.data.version)).toEqual([1, 2, 3]);
    expect(events[2]).toMatchObject({
      actor: { id: 'root' },
      data: {
        version: 3,
        previousVersion: 2,
        source: 'rollback',
        rolledBackFrom: 1,
        reason: 'LAX was a mistake',
        document: { rules: STRICT.rules },
      },
    });
    expect(events[1].data.rolledBackFrom).toBeUndefined();
  });

  it('refuses the version in force (409 already_in_force), an unknown version (404), bad bodies (400) and non-admins (403), changing nothing', async () => {
    const t = await tenant('rollback-refusals');
    await putAll(t.admin, STRICT, LAX);
    const before = await eventCount(t.auditor);
    const current = await http.post('/v1/policy/rollback', t.admin, { version: 2 });
    expectProblem(current, 409, 'already_in_force');
    expect(current.body.detail).toMatch(/version 2 is the version in force/);
    expectProblem(await http.post('/v1/policy/rollback', t.admin, { version: 7 }), 404, 'not_found');
    const paths: string[] = [];
    for (const body of [
      {},
      { version: 0 },
      { version: 1.5 },
      { version: '1' },
      { version: 1, reason: 7 },
      { version: 1, extra: true },
    ]) {
      const r = await http.post('/v1/policy/rollback', t.admin, body);
      expectProblem(r, 400, 'validation_failed');
      paths.push(r.body.errors[0].path);
    }
    expect(paths).toEqual(['version', 'version', 'version', 'version', 'reason', 'extra']);
    for (const token of [t.approver, t.auditor, t.agent])
      expectProblem(await http.post('/v1/policy/rollback', token, { version: 1 }), 403, 'forbidden');
    expect((await http.get('/v1/policy', t.admin)).body.version).toBe(2);
    expect(await eventCount(t.auditor)).toBe(before);
  });
});

describe('POST /v1/policy/simulate', () => {
  it('judges given calls by the policy in force and by the candidate, and changes nothing', async () => {
    const t = await tenant('simulate-given');
    await putAll(t.admin, STRICT);
    expect(
      (await http.post('/v1/conversations', t.agent, { id: 'sim-conv', user: { id: 'dan', roles: ['support'] } }))
        .status,
    ).toBe(201);
    const before = {
      events: await eventCount(t.auditor),
      version: (await http.get('/v1/policy', t.admin)).body.version,
    };

    const candidate = {
      rules: [
        { match: 'delete_*', level: 'confirm', requireRole: 'admin' },
        { match: 'get_*', level: 'automatic' },
      ],
    };
    const r = await http.post('/v1/policy/simulate', t.auditor, {
      document: candidate,
      calls: [
        { toolName: 'delete_source', arguments: { id: 1 } },
        { toolName: 'get_source', arguments: {} },
        { toolName: 'delete_source', arguments: {}, conversationId: 'sim-conv' },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ policyVersion: 1, over: 'calls', since: null, truncated: false });
    expect(r.body.results).toEqual([
      {
        index: 0,
        conversationId: null,
        toolName: 'delete_source',
        changed: false,
        then: { level: 'deny', rule: 1, policyVersion: 1, reason: 'no deleting', source: 'current' },
        now: { level: 'deny', rule: 0, reason: 'Permission denied: admin role required' },
      },
      {
        index: 1,
        conversationId: null,
        toolName: 'get_source',
        changed: false,
        then: { level: 'automatic', rule: 0, policyVersion: 1, reason: expect.any(String), source: 'current' },
        now: { level: 'automatic', rule: 1, reason: expect.any(String) },
      },
      {
        index: 2,
        conversationId: 'sim-conv',
        toolName: 'delete_source',
        changed: false,
        then: expect.objectContaining({ level: 'deny' }),
        now: { level: 'deny', rule: 0, reason: 'Permission denied: admin role required' },
      },
    ]);
    expect(r.body.summary).toEqual({
      total: 3,
      changed: 0,
      transitions: [
        { then: 'deny', now: 'deny', count: 2 },
        { then: 'automatic', now: 'automatic', count: 1 },
      ],
    });

    const lax = await http.post('/v1/policy/simulate', t.admin, {
      document: LAX,
      calls: [{ toolName: 'delete_source', arguments: {} }],
    });
    expect(lax.body.results[0]).toMatchObject({ then: { level: 'deny' }, now: { level: 'automatic' }, changed: true });
    expect(lax.body.summary).toEqual({
      total: 1,
      changed: 1,
      transitions: [{ then: 'deny', now: 'automatic', count: 1 }],
    });

    expect(await eventCount(t.auditor)).toBe(before.events);
    expect((await http.get('/v1/policy', t.admin)).body.version).toBe(before.version);
    expect((await http.get('/v1/policy/versions', t.admin)).body.items).toHaveLength(1);
  });

  it('judges the recorded calls: then as they were judged when proposed, now by the candidate; newest first, truncated at the limit', async () => {
    const t = await tenant('simulate-recorded');
    await putAll(t.admin, LAX);
    const ran = await propose(t.agent, 'delete_source', { id: 'a' });
    const read = await propose(t.agent, 'get_source', { id: 'b' });
    await putAll(t.admin, STRICT); // in force now; the recorded calls keep what version 1 gave them
    const before = { events: await eventCount(t.auditor), version: 2 };

    const r = await http.post('/v1/policy/simulate', t.admin, { document: STRICT, days: 1 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ policyVersion: 2, over: 'recorded', since: expect.any(String), truncated: false });
    expect(r.body.results).toEqual([
      {
        toolCallId: read.id,
        proposedAt: read.createdAt,
        conversationId: read.conversationId,
        toolName: 'get_source',
        changed: false,
        then: { level: 'automatic', rule: 0, policyVersion: 1, reason: expect.any(String), source: 'recorded' },
        now: { level: 'automatic', rule: 0, reason: expect.any(String) },
      },
      {
        toolCallId: ran.id,
        proposedAt: ran.createdAt,
        conversationId: ran.conversationId,
        toolName: 'delete_source',
        changed: true,
        then: { level: 'automatic', rule: 0, policyVersion: 1, reason: expect.any(String), source: 'recorded' },
        now: { level: 'deny', rule: 1, reason: 'no deleting' },
      },
    ]);
    expect(r.body.summary).toEqual({
      total: 2,
      changed: 1,
      transitions: [
        { then: 'automatic', now: 'deny', count: 1 },
        { then: 'automatic', now: 'automatic', count: 1 },
      ],
    });

    const newest = await http.post('/v1/policy/simulate', t.admin, { document: STRICT, limit: 1 });
    expect(newest.body).toMatchObject({ truncated: true, results: [{ toolCallId: read.id }], summary: { total: 1 } });
    const later = await http.post('/v1/policy/simulate', t.admin, {
      document: STRICT,
      since: new Date(Date.now() + 60_000).toISOString(),
    });
    expect(later.body).toMatchObject({
      truncated: false,
      results: [],
      summary: { total: 0, changed: 0, transitions: [] },
    });

    expect(await eventCount(t.auditor)).toBe(before.events);
    expect((await http.get('/v1/policy', t.admin)).body.version).toBe(before.version);
  });

  it('is for admins and auditors: agents and approvers get 403', async () => {
    const t = await tenant('simulate-roles');
    for (const token of [t.agent, t.approver])
      expectProblem(await http.post('/v1/policy/simulate', token, { document: EMPTY }), 403, 'forbidden');
    expectProblem(await http.post('/v1/policy/simulate', undefined, { document: EMPTY }), 401, 'unauthenticated');
  });

  it('refuses an invalid candidate as PUT does, and bodies that break their shape', async () => {
    const t = await tenant('simulate-bad');
    const bad = { rules: [{ match: 'x', level: 'sometimes' }] };
    const put = await http.put('/v1/policy', t.admin, bad);
    const sim = await http.post('/v1/policy/simulate', t.admin, { document: bad });
    expectProblem(sim, 400, 'validation_failed');
    expect(sim.body.errors).toEqual(put.body.errors);
    const paths: string[] = [];
    for (const body of [
      {},
      { document: 'rules: []' },
      { document: EMPTY, calls: [] },
      { document: EMPTY, calls: [{ toolName: 'x' }] },
      { document: EMPTY, calls: [{ toolName: 'x', arguments: {}, conversationId: 'no-such-conversation' }] },
      { document: EMPTY, calls: [{ toolName: 'x', arguments: {} }], days: 3 },
      { document: EMPTY, since: '2026-01-01', days: 3 },
      { document: EMPTY, since: 'yesterday' },
      { document: EMPTY, days: 0 },
      { document: EMPTY, limit: 1001 },
      { document: EMPTY, extra: 1 },
    ]) {
      const r = await http.post('/v1/policy/simulate', t.admin, body);
      expectProblem(r, 400, 'validation_failed');
      paths.push(r.body.errors[0].path);
    }
    expect(paths).toEqual([
      'document',
      'document',
      'calls',
      'calls[0].arguments',
      'calls[0].conversationId',
      'calls',
      'days',
      'since',
      'days',
      'limit',
      'extra',
    ]);
  });
});

describe('bad input never answers 500', () => {
  it('random bodies to rollback and simulate, and random versions, answer a 2xx or a 4xx problem', async () => {
    const t = await tenant('fuzz');
    await putAll(t.admin, STRICT, LAX);
    const json = fc.jsonValue({ maxDepth: 3 });
    const call = fc.record(
      {
        toolName: fc.oneof(fc.constantFrom('get_x', 'delete_x'), fc.string()),
        arguments: fc.oneof(fc.dictionary(fc.string(), json), json),
        conversationId: fc.string(),
      },
      { requiredKeys: ['toolName'] },
    );
    const rule = fc.record(
      {
        match: fc.oneof(fc.constantFrom('*', 'delete_*', 'shell(cmd=rm *)'), fc.string()),
        level: fc.oneof(fc.constantFrom('deny', 'confirm', 'automatic'), json),
        requireRole: fc.string(),
      },
      { requiredKeys: ['match'] },
    );
    const simulate = fc.record(
      {
        document: fc.oneof(fc.record({ rules: fc.array(rule, { maxLength: 3 }) }), json),
        calls: fc.oneof(fc.array(call, { maxLength: 3 }), json),
        since: fc.oneof(
          fc.date().map((d) => (Number.isNaN(d.getTime()) ? 'x' : d.toISOString())),
          json,
        ),
        days: json,
        limit: json,
      },
      { requiredKeys: [] },
    );
    const rollback = fc.oneof(
      fc.record({ version: fc.oneof(fc.integer({ min: -2, max: 4 }), json), reason: json }, { requiredKeys: [] }),
      json,
    );
    const expectAnswered = (r: Reply, what: unknown) => {
      expect({ what, status: r.status < 500 }).toEqual({ what, status: true });
      if (r.status >= 400)
        expect({ what, type: r.headers.get('content-type') }).toEqual({
          what,
          type: expect.stringMatching(/^application\/problem\+json/),
        });
    };
    await fc.assert(
      fc.asyncProperty(simulate, async (body) =>
        expectAnswered(await http.post('/v1/policy/simulate', t.auditor, body), body),
      ),
      { numRuns: 60 },
    );
    await fc.assert(
      fc.asyncProperty(rollback, async (body) =>
        expectAnswered(await http.post('/v1/policy/rollback', t.admin, body), body),
      ),
      { numRuns: 40 },
    );
    await fc.assert(
      fc.asyncProperty(fc.string(), async (v) =>
        expectAnswered(await http.get(`/v1/policy/versions/${encodeURIComponent(v)}`, t.agent), v),
      ),
      { numRuns: 40 },
    );
  }, 60_000);
});

describe('TOLLGATE_POLICY_FILE reloads on change', () => {
  let scratch: string;
  let file: string;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'tollgate-policy-file-'));
    file = join(scratch, 'policy.yaml');
    writeFileSync(file, 'rules:\n  - match: "get_*"\n    level: automatic\n');
    a = await startTestServer({ policyFile: file });
    b = await startTestServer({ policyFile: file }, { db: a.db }); // a second instance on the same database
  });

  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('applies a changed file as one new version between the two instances, and takes a file replaced by rename', async () => {
    const admin = await a.token('root', ['admin']);
    const api = client(a.url);
    const version = async () => (await api.get('/v1/policy', admin)).body.version as number;
    expect(await version()).toBe(1);

    writeFileSync(file, 'rules:\n  - match: "get_*"\n    level: automatic\n  - match: "delete_*"\n    level: deny\n');
    await until(async () => (await version()) === 2, 20_000, 'version 2 from the changed file');

    // An editor's save: a new file renamed over the old one (a new inode).
    const replacement = join(scratch, 'policy.yaml.tmp');
    writeFileSync(replacement, 'rules:\n  - match: "*"\n    level: confirm\n');
    renameSync(replacement, file);
    await until(async () => (await version()) === 3, 20_000, 'version 3 from the replaced file');

    const versions = (await api.get('/v1/policy/versions', admin)).body.items;
    expect(versions.map((v: { version: number; createdBy: string }) => [v.version, v.createdBy])).toEqual([
      [3, 'policy-file'],
      [2, 'policy-file'],
      [1, 'policy-file'],
    ]);
    expect((await api.get('/v1/policy', admin)).body.rules).toEqual([{ match: '*', level: 'confirm' }]);
    const events = (await api.get('/v1/audit/events?type=PolicyUpdated', await a.token('audrey', ['auditor']))).body
      .events;
    expect(events.map((e: { data: { source: string } }) => e.data.source)).toEqual(['file', 'file', 'file']);
  }, 60_000);

  it('logs one error line for an invalid or vanished file and keeps the version in force; a valid file after it applies', async () => {
    const other = join(scratch, 'other.yaml');
    writeFileSync(other, 'rules: []\n');
    const lines: string[] = [];
    const log = { log: (m: string) => lines.push(`log ${m}`), error: (m: string) => lines.push(`error ${m}`) };
    const watcher = new PolicyFileWatcher(a.app.get(CommandBus), other, log, {
      intervalMs: 50,
      debounceMs: 20,
    }).start();
    try {
      const admin = await a.token('root', ['admin']);
      const api = client(a.url);
      const before = (await api.get('/v1/policy', admin)).body.version;

      writeFileSync(other, 'rules:\n  - match: delete_*\n    level: sometimes\n');
      await until(() => lines.length === 1, 10_000, 'the error line');
      expect(lines).toEqual([
        expect.stringMatching(
          /^error TOLLGATE_POLICY_FILE .*other\.yaml is not a valid policy: rules\[0\]\.level: .*; the policy in force stays$/,
        ),
      ]);
      expect((await api.get('/v1/policy', admin)).body.version).toBe(before);

      rmSync(other);
      await until(() => lines.length === 2, 10_000, 'the line for the vanished file');
      expect(lines[1]).toMatch(/^error TOLLGATE_POLICY_FILE .*other\.yaml is gone; the policy in force stays$/);

      writeFileSync(other, 'rules:\n  - match: "*"\n    level: deny\n');
      await until(() => lines.length === 3, 10_000, 'the line for the valid file');
      expect(lines[2]).toBe(`log Reloaded ${other} as policy version ${before + 1}`);
      expect((await api.get('/v1/policy', admin)).body.rules).toEqual([{ match: '*', level: 'deny' }]);
    } finally {
      await watcher.stop();
    }
  }, 60_000);
});
