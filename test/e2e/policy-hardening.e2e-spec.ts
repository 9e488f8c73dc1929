/**
 * Issue 11, findings 5, 6 and 7, through HTTP on a real database.
 * 5: `approvers` may name only people who decide (approver, admin, requester): auditors change nothing,
 *    agents never decide, and a typo would make calls no one can decide. Such a policy is a 400 naming the path.
 * 6: concurrent PUT /v1/policy of one tenant each get a version, one after another (they answered 500 on a
 *    duplicate key), and the audit chain stays whole.
 * 7: a pattern is bounded in length and wildcards and compiled at PUT; matching is linear, so no accepted
 *    pattern can turn proposals into 500s.
 */
import { client, Reply } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

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

const adminOf = (tenant: string) => server.token('root', ['admin'], { tenant });

describe('who a policy may list among the approvers (finding 5)', () => {
  it.each<[string, unknown, string, RegExp]>([
    [
      'auditors in a rule',
      { rules: [{ match: 'delete_*', level: 'confirm', approvers: ['auditor'] }] },
      'rules[0].approvers[0]',
      /auditors change nothing/,
    ],
    [
      'auditors beside admins in the defaults',
      { defaults: { approvers: ['admin', 'auditor'] } },
      'defaults.approvers[1]',
      /auditors change nothing/,
    ],
    [
      'agents',
      { rules: [{ match: '*', level: 'confirm', approvers: ['requester', 'agent'] }] },
      'rules[0].approvers[1]',
      /agents cannot decide/,
    ],
    [
      'a typo',
      {
        rules: [
          { match: 'x', level: 'deny' },
          { match: '*', level: 'confirm', approvers: ['aprover'] },
        ],
      },
      'rules[1].approvers[0]',
      /is not a role that may decide/,
    ],
  ])(
    'a policy naming %s is refused with 400 validation_failed naming the path, and the old version stays',
    async (_what, doc, path, message) => {
      const admin = await adminOf('approvers-check');
      const before = await http.get('/v1/policy', admin);
      const res = await http.put('/v1/policy', admin, doc);
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.errors).toEqual([{ path, message: expect.stringMatching(message) }]);
      expect(res.body.detail).toContain(path);
      expect((await http.get('/v1/policy', admin)).body.version).toBe(before.body.version);
    },
  );

  it('accepts approver, admin and requester', async () => {
    const admin = await adminOf('approvers-ok');
    const res = await http.put('/v1/policy', admin, {
      defaults: { approvers: ['approver', 'admin'] },
      rules: [{ match: '*', level: 'confirm', approvers: ['requester', 'admin'] }],
    });
    expect(res.status).toBe(200);
  });

  it('an auditor cannot decide a call, whatever the policy', async () => {
    const tenant = 'approvers-auditor';
    const admin = await adminOf(tenant);
    const agent = await server.token('agent-1', ['agent'], { tenant });
    const auditor = await server.token('audrey', ['auditor'], { tenant });
    expect((await http.put('/v1/policy', admin, { rules: [{ match: '*', level: 'confirm' }] })).status).toBe(200);
    expect((await http.post('/v1/conversations', agent, { id: 'c1' })).status).toBe(201);
    const proposed = await http.post('/v1/conversations/c1/tool-calls', agent, {
      toolCalls: [{ toolName: 'deploy', arguments: {} }],
    });
    const id = proposed.body.toolCalls[0].id;
    expectProblem(await http.post(`/v1/tool-calls/${id}/decision`, auditor, { decision: 'approve' }), 403, 'forbidden');
  });
});

describe('concurrent policy updates (finding 6)', () => {
  it('20 concurrent PUTs of one tenant all answer 200 with 20 distinct, consecutive versions, and the audit chain verifies', async () => {
    const tenant = 'policy-race';
    const admin = await adminOf(tenant);
    const auditor = await server.token('audrey', ['auditor'], { tenant });
    const puts = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        http.put('/v1/policy', admin, {
          defaults: { timeoutSeconds: 100 + i },
          rules: [{ match: `tool_${i}`, level: 'confirm' }],
        }),
      ),
    );
    expect(puts.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(puts.map((r) => r.body.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    // each answer is the document it sent, at the version it got
    puts.forEach((r, i) =>
      expect(r.body).toMatchObject({ defaults: { timeoutSeconds: 100 + i }, rules: [{ match: `tool_${i}` }] }),
    );

    const current = await http.get('/v1/policy', admin);
    expect(current.body.version).toBe(20);
    const events = (await http.get('/v1/audit/events?type=PolicyUpdated', auditor)).body.events;
    expect(events.map((e: any) => e.data.version)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(events.map((e: any) => e.data.previousVersion)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect((await http.get('/v1/audit/verify', auditor)).body).toMatchObject({ ok: true, checked: 20 });
  });
});

describe('patterns that could not be matched safely (finding 7)', () => {
  const tenant = 'pattern-bounds';
  let admin: string;
  let agent: string;

  beforeAll(async () => {
    admin = await adminOf(tenant);
    agent = await server.token('agent-1', ['agent'], { tenant });
  });

  it.each<[string, string, RegExp]>([
    ['the 8 KB glob from the review', '*a'.repeat(4000) + '*', /at most 512 characters/],
    ['a glob of 65 wildcards', '*a'.repeat(65), /at most 64 wildcards/],
    ['an argument glob of too many wildcards', `shell(cmd=${'rm *'.repeat(65)})`, /at most 64 wildcards/],
  ])('%s is refused with 400 naming the rule, and the old version stays', async (_what, match, message) => {
    const before = await http.get('/v1/policy', admin);
    const res = await http.put('/v1/policy', admin, {
      rules: [
        { match: 'get_*', level: 'automatic' },
        { match, level: 'confirm' },
      ],
    });
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.errors).toEqual([{ path: 'rules[1].match', message: expect.stringMatching(message) }]);
    // the problem names the fault; it does not echo an 8 KB pattern back
    expect(JSON.stringify(res.body).length).toBeLessThan(1000);
    expect((await http.get('/v1/policy', admin)).body.version).toBe(before.body.version);
  });

  it('patterns at the limits are accepted and decide proposals, tool and argument globs alike', async () => {
    const longGlob = '*a'.repeat(32); // 64 characters, 32 wildcards
    const argGlob = `shell(cmd=rm ${'*x'.repeat(31)}*)`; // 32 wildcards
    const put = await http.put('/v1/policy', admin, {
      rules: [
        { match: longGlob, level: 'deny' },
        { match: argGlob, level: 'deny' },
        { match: '*', level: 'automatic' },
      ],
    });
    expect(put.status).toBe(200);
    expect((await http.post('/v1/conversations', agent, { id: 'bounds' })).status).toBe(201);
    const proposed = await http.post('/v1/conversations/bounds/tool-calls', agent, {
      toolCalls: [
        { id: 'many-a', toolName: 'a'.repeat(100), arguments: {} },
        { id: 'few-a', toolName: 'a'.repeat(31), arguments: {} },
        { id: 'rm-x', toolName: 'shell', arguments: { cmd: 'rm ' + 'x'.repeat(31) } },
        { id: 'rm-long', toolName: 'shell', arguments: { cmd: 'rm ' + 'xa'.repeat(100_000) } },
      ],
    });
    expect(proposed.status).toBe(201);
    expect(proposed.body.toolCalls.map((c: any) => [c.externalId, c.status, c.policy.rule])).toEqual([
      ['many-a', 'rejected', 0],
      ['few-a', 'approved', 2],
      ['rm-x', 'rejected', 1],
      ['rm-long', 'rejected', 1],
    ]);
  });
});
