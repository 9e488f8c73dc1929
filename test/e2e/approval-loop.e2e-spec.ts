/**
 * The approval loop of CONTRACT §4–6 through real HTTP: tools, conversations, proposals judged by
 * policy, blocking, idempotency, long-polling, decisions (edits, grants, first one wins), channels
 * and the policy document itself. One server; tests are isolated by conversation ids and tenants.
 */
import { client, Reply } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let otherAgent: string;
let approver: string;
let admin: string;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
  agent = await server.token('agent-a', ['agent'], { name: 'Agent A' });
  otherAgent = await server.token('agent-b', ['agent']);
  approver = await server.token('alice', ['approver'], { name: 'Alice' });
  admin = await server.token('root', ['admin']);
  // A read-only tool runs at once; unknown tools ask (defaults.unknownTools = confirm).
  expect((await http.put('/v1/tools/get_weather', admin, { isReadOnly: true })).status).toBe(201);
});

afterAll(async () => {
  await server?.stop();
});

function expectProblem(res: Reply, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

async function startConversation(id: string, token = agent, extra: Record<string, unknown> = {}) {
  const res = await http.post('/v1/conversations', token, { id, ...extra });
  expect(res.status).toBe(201);
  return res.body;
}

type Call = { id?: string; toolName: string; arguments: Record<string, unknown>; [k: string]: unknown };

async function propose(convId: string, calls: Call[], token = agent) {
  const res = await http.post(`/v1/conversations/${convId}/tool-calls`, token, { toolCalls: calls });
  expect(res.status).toBe(201);
  return res.body.toolCalls as any[];
}

/** One pending call in a fresh conversation (unknown tools ask by default). */
async function pendingCall(
  convId: string,
  toolName = 'send_email',
  args: Record<string, unknown> = { to: 'bob@example.com' },
  token = agent,
) {
  await startConversation(convId, token);
  const [call] = await propose(convId, [{ toolName, arguments: args }], token);
  expect(call.status).toBe('pending');
  return call;
}

const decide = (id: string, body: unknown, token = approver, headers?: Record<string, string>) =>
  http.post(`/v1/tool-calls/${id}/decision`, token, body, headers);

/** Resolves to 'timer' if `p` has not settled within `ms`. */
function within<T>(p: Promise<T>, ms: number): Promise<T | 'timer'> {
  let t: NodeJS.Timeout;
  return Promise.race([p, new Promise<'timer'>((r) => (t = setTimeout(() => r('timer'), ms)))]).finally(() =>
    clearTimeout(t),
  );
}

describe('tools', () => {
  it('registers a tool with 201 and updates it with 200', async () => {
    const created = await http.put('/v1/tools/search_docs', agent, { description: 'Search', isReadOnly: true });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'search_docs',
      description: 'Search',
      isReadOnly: true,
      requiresApproval: false,
      destructive: false,
    });
    const updated = await http.put('/v1/tools/search_docs', agent, {
      description: 'Search the docs',
      isReadOnly: true,
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: 'search_docs', description: 'Search the docs' });
    const read = await http.get('/v1/tools/search_docs', approver);
    expect(read.status).toBe(200);
    expect(read.body.description).toBe('Search the docs');
    const list = await http.get('/v1/tools', agent);
    expect(list.status).toBe(200);
    expect(list.body.items.map((t: any) => t.name)).toEqual(expect.arrayContaining(['get_weather', 'search_docs']));
  });

  it('does not let an agent change a tool an admin registered', async () => {
    expect((await http.put('/v1/tools/drop_table', admin, { destructive: true })).status).toBe(201);
    expectProblem(
      await http.put('/v1/tools/drop_table', agent, { destructive: false, isReadOnly: true }),
      403,
      'forbidden',
    );
    expect((await http.get('/v1/tools/drop_table', agent)).body).toMatchObject({
      destructive: true,
      isReadOnly: false,
    });
  });

  it('answers 404 for a tool never registered', async () => {
    expectProblem(await http.get('/v1/tools/never_registered', agent), 404, 'not_found');
  });
});

describe('conversations', () => {
  it('starts a conversation with 201, and the same id by the same agent answers 200 with the same conversation', async () => {
    const body = {
      id: 'loop-start',
      user: { id: 'uma', roles: ['member'], name: 'Uma' },
      title: 'Trip planning',
      metadata: { thread: 42 },
    };
    const first = await http.post('/v1/conversations', agent, body);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      id: 'loop-start',
      agentId: 'agent-a',
      user: { id: 'uma', roles: ['member'] },
      title: 'Trip planning',
      metadata: { thread: 42 },
      status: 'active',
      pendingCount: 0,
    });
    const again = await http.post('/v1/conversations', agent, body);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: 'loop-start', agentId: 'agent-a', createdAt: first.body.createdAt });
  });

  it('refuses another agent reusing the id with 409 idempotency_mismatch', async () => {
    await startConversation('loop-taken');
    expectProblem(await http.post('/v1/conversations', otherAgent, { id: 'loop-taken' }), 409, 'idempotency_mismatch');
  });

  it('gives a conversation without an id one of its own', async () => {
    const res = await http.post('/v1/conversations', agent, {});
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(/^[A-Za-z0-9_.:-]{1,128}$/);
  });
});

describe('proposals', () => {
  let auto: any;
  let pending: any;

  beforeAll(async () => {
    await startConversation('loop-step');
    [auto, pending] = await propose('loop-step', [
      { id: 'fw_1', toolName: 'get_weather', arguments: { city: 'Oslo' } },
      { id: 'fw_2', toolName: 'send_email', arguments: { to: 'bob@example.com' } },
    ]);
  });

  it('judges a step together: one pending call does not stop a sibling the policy lets through', async () => {
    expect(auto).toMatchObject({
      externalId: 'fw_1',
      conversationId: 'loop-step',
      status: 'approved',
      policy: { level: 'automatic' },
      decision: { outcome: 'approved', by: { via: 'policy' } },
    });
    expect(pending).toMatchObject({ externalId: 'fw_2', status: 'pending', policy: { level: 'confirm', rule: null } });
    expect(pending.approval.approvers).toEqual(['approver', 'admin']);
    expect(auto.id).not.toBe(pending.id);
    const claim = await http.post(`/v1/tool-calls/${auto.id}/execution`, agent);
    expect(claim.status).toBe(200);
    expect(claim.body.arguments).toEqual({ city: 'Oslo' });
  });

  it('blocks the conversation while a call is pending: 409 conversation_blocked listing the pending ids', async () => {
    const conv = await http.get('/v1/conversations/loop-step', agent);
    expect(conv.body).toMatchObject({ status: 'blocked', pendingCount: 1 });
    const res = await http.post('/v1/conversations/loop-step/tool-calls', agent, {
      toolCalls: [{ toolName: 'get_weather', arguments: { city: 'Bergen' } }],
    });
    expectProblem(res, 409, 'conversation_blocked');
    expect(JSON.stringify(res.body)).toContain(pending.id);
  });

  it('answers a proposal whose calls all repeat earlier ones with 200 and the existing calls, even while blocked', async () => {
    const before = await http.get('/v1/conversations/loop-step', agent);
    const res = await http.post('/v1/conversations/loop-step/tool-calls', agent, {
      toolCalls: [
        { id: 'fw_1', toolName: 'get_weather', arguments: { city: 'Oslo' } },
        { id: 'fw_2', toolName: 'send_email', arguments: { to: 'bob@example.com' } },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.toolCalls.map((c: any) => c.id)).toEqual([auto.id, pending.id]);
    expect(res.body.conversation.id).toBe('loop-step');
    const after = await http.get('/v1/conversations/loop-step', agent);
    expect(after.body.toolCalls).toHaveLength(before.body.toolCalls.length);
    expect(after.body.toolCalls).toHaveLength(2);
  });

  it('unblocks the conversation once the pending call is decided', async () => {
    expect((await decide(pending.id, { decision: 'reject', reason: 'not now' })).status).toBe(200);
    const conv = await http.get('/v1/conversations/loop-step', agent);
    expect(conv.body).toMatchObject({ status: 'active', pendingCount: 0 });
    const [next] = await propose('loop-step', [{ toolName: 'get_weather', arguments: { city: 'Bergen' } }]);
    expect(next.status).toBe('approved');
  });

  it('answers a repeated tool-call id with the same content with 200 and no new call', async () => {
    await startConversation('loop-idem');
    const [first] = await propose('loop-idem', [
      { id: 'call_x', toolName: 'get_weather', arguments: { city: 'Rome', units: 'metric' } },
    ]);
    // Same content, keys in another order: still the same arguments.
    const again = await http.post('/v1/conversations/loop-idem/tool-calls', agent, {
      toolCalls: [{ id: 'call_x', toolName: 'get_weather', arguments: { units: 'metric', city: 'Rome' } }],
    });
    expect(again.status).toBe(200);
    expect(again.body.toolCalls).toEqual([first]);
    const conv = await http.get('/v1/conversations/loop-idem', agent);
    expect(conv.body.toolCalls.map((c: any) => c.id)).toEqual([first.id]);
  });

  it('refuses a repeated tool-call id with different arguments or tool with 409 idempotency_mismatch', async () => {
    expectProblem(
      await http.post('/v1/conversations/loop-idem/tool-calls', agent, {
        toolCalls: [{ id: 'call_x', toolName: 'get_weather', arguments: { city: 'Paris' } }],
      }),
      409,
      'idempotency_mismatch',
    );
    expectProblem(
      await http.post('/v1/conversations/loop-idem/tool-calls', agent, {
        toolCalls: [{ id: 'call_x', toolName: 'search_docs', arguments: { city: 'Rome', units: 'metric' } }],
      }),
      409,
      'idempotency_mismatch',
    );
    const conv = await http.get('/v1/conversations/loop-idem', agent);
    expect(conv.body.toolCalls).toHaveLength(1);
  });

  it('gives every call a server id unique across conversations, even for the same framework id', async () => {
    await startConversation('loop-idem-2');
    const [call] = await propose('loop-idem-2', [
      { id: 'call_x', toolName: 'get_weather', arguments: { city: 'Rome', units: 'metric' } },
    ]);
    const [firstCall] = (await http.get('/v1/conversations/loop-idem', agent)).body.toolCalls;
    expect(call.externalId).toBe('call_x');
    expect(call.id).not.toBe(firstCall.id);
  });
});

describe('long-poll', () => {
  it('wakes a waiter as soon as a decision is made from another request', async () => {
    const call = await pendingCall('loop-wait');
    const waiting = http.get(`/v1/tool-calls/${call.id}?wait=10`, agent);
    // Still waiting after a moment: the call is pending, so the long-poll must not answer at once.
    expect(await within(waiting, 300)).toBe('timer');
    expect((await decide(call.id, { decision: 'approve' })).status).toBe(200);
    const answer = await within(waiting, 5000);
    expect(answer).not.toBe('timer');
    expect((answer as Reply).status).toBe(200);
    expect((answer as Reply).body).toMatchObject({ id: call.id, status: 'approved' });
  });

  it('answers wait=0 at once, still pending', async () => {
    const call = await pendingCall('loop-wait0');
    const answer = await within(http.get(`/v1/tool-calls/${call.id}?wait=0`, agent), 2000);
    expect(answer).not.toBe('timer');
    expect((answer as Reply).body.status).toBe('pending');
  });

  it('answers at once for a call that is not pending, whatever the wait', async () => {
    await startConversation('loop-wait-done');
    const [call] = await propose('loop-wait-done', [{ toolName: 'get_weather', arguments: {} }]);
    const answer = await within(http.get(`/v1/tool-calls/${call.id}?wait=60`, agent), 2000);
    expect(answer).not.toBe('timer');
    expect((answer as Reply).body.status).toBe('approved');
  });
});

describe('decisions', () => {
  it('runs edited arguments when an approver edits them, keeping the original in the record', async () => {
    const call = await pendingCall('loop-edit', 'send_email', { to: 'everyone@example.com', body: 'hi' });
    const res = await decide(call.id, {
      decision: 'approve',
      arguments: { to: 'bob@example.com', body: 'hi' },
      reason: 'narrowed the audience',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'approved',
      arguments: { to: 'everyone@example.com', body: 'hi' },
      decision: {
        outcome: 'approved',
        reason: 'narrowed the audience',
        editedArguments: { to: 'bob@example.com', body: 'hi' },
      },
    });
    const claim = await http.post(`/v1/tool-calls/${call.id}/execution`, agent);
    expect(claim.status).toBe(200);
    expect(claim.body.arguments).toEqual({ to: 'bob@example.com', body: 'hi' });
    expect(claim.body.toolCall.arguments).toEqual({ to: 'everyone@example.com', body: 'hi' });
  });

  it('records who decided, through the channel in X-Tollgate-Channel (default api)', async () => {
    const cases: [Record<string, string> | undefined, string][] = [
      [{ 'X-Tollgate-Channel': 'web' }, 'web'],
      [{ 'X-Tollgate-Channel': 'cli' }, 'cli'],
      [{ 'X-Tollgate-Channel': 'api' }, 'api'],
      [undefined, 'api'],
    ];
    for (const [i, [headers, via]] of cases.entries()) {
      const call = await pendingCall(`loop-via-${i}`);
      const res = await decide(call.id, { decision: 'approve' }, approver, headers);
      expect(res.status).toBe(200);
      expect(res.body.decision).toMatchObject({ outcome: 'approved', by: { id: 'alice', name: 'Alice', via } });
    }
  });

  describe('first decision wins', () => {
    let call: any;
    beforeAll(async () => {
      call = await pendingCall('loop-first');
      expect((await decide(call.id, { decision: 'approve', reason: 'fine' })).status).toBe(200);
    });

    it('refuses a second person with 409 already_decided carrying the standing decision', async () => {
      const bob = await server.token('bob', ['approver']);
      const res = await decide(call.id, { decision: 'reject', reason: 'too late' }, bob);
      expectProblem(res, 409, 'already_decided');
      expect(res.body.decision).toMatchObject({ outcome: 'approved', by: { id: 'alice' }, reason: 'fine' });
    });

    it('answers the same decision by the same person with 200, unchanged', async () => {
      const before = (await http.get(`/v1/tool-calls/${call.id}`, approver)).body;
      const res = await decide(call.id, { decision: 'approve' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(before);
    });

    it('treats approve and always_allow by the same person as different decisions: 409', async () => {
      const res = await decide(call.id, { decision: 'always_allow' });
      expectProblem(res, 409, 'already_decided');
      expect(res.body.decision).toMatchObject({ outcome: 'approved', by: { id: 'alice' } });
    });

    it('refuses the same person changing their mind to reject: 409', async () => {
      expectProblem(await decide(call.id, { decision: 'reject' }), 409, 'already_decided');
    });
  });
});

describe('always_allow and standing grants', () => {
  it('with scope conversation lets the next call of the tool in that conversation through, and only there', async () => {
    const call = await pendingCall('loop-grant-c', 'post_tweet', { text: 'one' });
    const res = await decide(call.id, { decision: 'always_allow' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'approved', decision: { outcome: 'approved', by: { id: 'alice' } } });

    const [next] = await propose('loop-grant-c', [{ toolName: 'post_tweet', arguments: { text: 'two' } }]);
    expect(next).toMatchObject({ status: 'approved', decision: { outcome: 'approved', by: { via: 'policy' } } });
    expect(next.policy.reason).toMatch(/grant/i);

    const [elsewhere] = await propose('loop-grant-c', [{ toolName: 'post_toot', arguments: {} }]);
    expect(elsewhere.status).toBe('pending'); // another tool is not covered
    await decide(elsewhere.id, { decision: 'reject' });

    const other = await pendingCall('loop-grant-c-other', 'post_tweet', { text: 'three' });
    expect(other.status).toBe('pending');
  });

  it('with scope agent covers the same agent in every conversation, but not another agent', async () => {
    const call = await pendingCall('loop-grant-a', 'book_flight', {});
    expect((await decide(call.id, { decision: 'always_allow', scope: 'agent' }, admin)).status).toBe(200); // only admins grant beyond a conversation
    await startConversation('loop-grant-a-2');
    const [same] = await propose('loop-grant-a-2', [{ toolName: 'book_flight', arguments: { to: 'OSL' } }]);
    expect(same).toMatchObject({ status: 'approved', decision: { by: { via: 'policy' } } });
    expect(same.policy.reason).toMatch(/grant/i);
    const other = await pendingCall('loop-grant-a-3', 'book_flight', {}, otherAgent);
    expect(other.status).toBe('pending');
  });

  it('with scope tenant covers every agent of the tenant, but not another tenant', async () => {
    const call = await pendingCall('loop-grant-t', 'book_hotel', {});
    expect((await decide(call.id, { decision: 'always_allow', scope: 'tenant' }, admin)).status).toBe(200);
    await startConversation('loop-grant-t-2', otherAgent);
    const [same] = await propose('loop-grant-t-2', [{ toolName: 'book_hotel', arguments: {} }], otherAgent);
    expect(same).toMatchObject({ status: 'approved', decision: { by: { via: 'policy' } } });
    expect(same.policy.reason).toMatch(/grant/i);
    const foreign = await server.token('agent-a', ['agent'], { tenant: 'loop-other-tenant' });
    const stranger = await pendingCall('loop-grant-t-3', 'book_hotel', {}, foreign);
    expect(stranger.status).toBe('pending');
  });

  it('on a manual call approves that call and makes no grant', async () => {
    const tenant = 'loop-manual';
    const tAdmin = await server.token('root', ['admin'], { tenant });
    const tAgent = await server.token('agent-m', ['agent'], { tenant });
    const tApprover = await server.token('alice', ['approver'], { tenant });
    expect((await http.put('/v1/policy', tAdmin, { rules: [{ match: 'wire_money', level: 'manual' }] })).status).toBe(
      200,
    );

    const call = await pendingCall('loop-manual-1', 'wire_money', { amount: 10 }, tAgent);
    expect(call.policy.level).toBe('manual');
    const res = await decide(call.id, { decision: 'always_allow' }, tApprover);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('approved');

    // Had a grant been made, it would let a confirm-level call through: it must not.
    expect((await http.put('/v1/policy', tAdmin, { rules: [{ match: 'wire_money', level: 'confirm' }] })).status).toBe(
      200,
    );
    const [next] = await propose('loop-manual-1', [{ toolName: 'wire_money', arguments: { amount: 20 } }], tAgent);
    expect(next).toMatchObject({ status: 'pending', policy: { level: 'confirm' } });
  });

  it('never turns a manual call into an automatic one, even with a grant for the tool', async () => {
    const tenant = 'loop-manual-2';
    const tAdmin = await server.token('root', ['admin'], { tenant });
    const tAgent = await server.token('agent-m', ['agent'], { tenant });
    const call = await pendingCall('loop-manual-2', 'wire_money', {}, tAgent);
    expect((await decide(call.id, { decision: 'always_allow', scope: 'tenant' }, tAdmin)).status).toBe(200);
    expect((await http.put('/v1/policy', tAdmin, { rules: [{ match: 'wire_money', level: 'manual' }] })).status).toBe(
      200,
    );
    const [next] = await propose('loop-manual-2', [{ toolName: 'wire_money', arguments: {} }], tAgent);
    expect(next).toMatchObject({ status: 'pending', policy: { level: 'manual' } });
  });
});

describe('policy', () => {
  it('answers version 0 with the built-in defaults and no rules for a tenant without a policy', async () => {
    const res = await http.get('/v1/policy', await server.token('carl', ['auditor'], { tenant: 'loop-empty' }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      version: 0,
      defaults: { unknownTools: 'confirm', timeoutSeconds: 300, approvers: ['approver', 'admin'] },
      rules: [],
    });
  });

  it('makes a new version for each accepted PUT, JSON or YAML', async () => {
    const tAdmin = await server.token('root', ['admin'], { tenant: 'loop-policy' });
    const json = await http.put('/v1/policy', tAdmin, {
      defaults: { timeoutSeconds: 60 },
      rules: [{ match: 'get_*', level: 'automatic' }],
    });
    expect(json.status).toBe(200);
    expect(json.body).toMatchObject({
      version: 1,
      defaults: { timeoutSeconds: 60, unknownTools: 'confirm' },
      rules: [{ match: 'get_*', level: 'automatic' }],
      updatedBy: expect.anything(),
    });
    expect(typeof json.body.updatedAt).toBe('string');

    const yaml = [
      'defaults:',
      '  unknownTools: deny',
      'rules:',
      '  - match: "shell(cmd=rm *)"',
      '    level: deny',
      '  - match: "*"',
      '    when: { confidenceBelow: 0.6 }',
      '    level: confirm',
      '',
    ].join('\n');
    const y = await http.call('PUT', '/v1/policy', {
      token: tAdmin,
      raw: yaml,
      headers: { 'content-type': 'application/yaml' },
    });
    expect(y.status).toBe(200);
    expect(y.body).toMatchObject({
      version: 2,
      defaults: { unknownTools: 'deny', timeoutSeconds: 300 },
      rules: [
        { match: 'shell(cmd=rm *)', level: 'deny' },
        { match: '*', level: 'confirm', when: { confidenceBelow: 0.6 } },
      ],
    });

    const same = await http.call('PUT', '/v1/policy', {
      token: tAdmin,
      raw: yaml,
      headers: { 'content-type': 'application/yaml' },
    });
    expect(same.status).toBe(200);
    expect(same.body.version).toBe(3);

    const read = await http.get('/v1/policy', await server.token('agent-p', ['agent'], { tenant: 'loop-policy' }));
    expect(read.status).toBe(200);
    expect(read.body.version).toBe(3);
  });

  it('refuses an invalid document with 400 naming the path, and keeps the old version', async () => {
    const tAdmin = await server.token('root', ['admin'], { tenant: 'loop-policy-bad' });
    expect((await http.put('/v1/policy', tAdmin, { rules: [{ match: 'a', level: 'confirm' }] })).status).toBe(200);
    const bad = await http.put('/v1/policy', tAdmin, {
      rules: [
        { match: 'a', level: 'confirm' },
        { match: 'b', level: 'sometimes' },
      ],
    });
    expectProblem(bad, 400, 'validation_failed');
    expect(JSON.stringify(bad.body)).toContain('rules[1].level');

    const badYaml = await http.call('PUT', '/v1/policy', {
      token: tAdmin,
      raw: 'defaults:\n  timeoutSeconds: soon\n',
      headers: { 'content-type': 'application/yaml' },
    });
    expectProblem(badYaml, 400, 'validation_failed');
    expect(JSON.stringify(badYaml.body)).toContain('defaults.timeoutSeconds');

    const read = await http.get('/v1/policy', tAdmin);
    expect(read.body).toMatchObject({ version: 1, rules: [{ match: 'a', level: 'confirm' }] });
  });

  it('lets only admins change the policy', async () => {
    const res = await http.put('/v1/policy', approver, { rules: [] });
    expectProblem(res, 403, 'forbidden');
  });
});
