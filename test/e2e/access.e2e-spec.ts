/**
 * Identity and walls (CONTRACT §2, §11): who may do what, tenants that hide each other (404, never
 * 403), agents that never decide, and the order of checks 401 → 404 → 403 → 400 → 409.
 */
import { SignJWT } from 'jose';
import { client, Reply } from '../support/http';
import { startTestServer, TEST_SECRET, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;

// Tenant "default"
let agent: string; // agent-1 owns every conversation below
let otherAgent: string;
let dualAgent: string; // an agent token that also carries approver and admin
let approver: string;
let admin: string;
let auditor: string;
// Tenant "t2"
let t2Admin: string;
let t2Approver: string;
let t2Agent: string;

let pending: any; // a pending call in conversation acc-main
let deployCall: any; // a pending call only admins may decide
let approvedCall: any; // an approved call, not yet claimed
let dualCall: any; // a pending call in the dual agent's own conversation

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
  agent = await server.token('agent-1', ['agent']);
  otherAgent = await server.token('agent-2', ['agent']);
  dualAgent = await server.token('agent-dual', ['agent', 'approver', 'admin']);
  approver = await server.token('alice', ['approver']);
  admin = await server.token('root', ['admin']);
  auditor = await server.token('audrey', ['auditor']);
  t2Admin = await server.token('root', ['admin'], { tenant: 't2' });
  t2Approver = await server.token('alice', ['approver'], { tenant: 't2' });
  t2Agent = await server.token('agent-1', ['agent'], { tenant: 't2' });

  expect(
    (await http.put('/v1/policy', admin, { rules: [{ match: 'deploy', level: 'confirm', approvers: ['admin'] }] }))
      .status,
  ).toBe(200);
  expect((await http.put('/v1/tools/get_status', admin, { isReadOnly: true })).status).toBe(201);

  expect(
    (await http.post('/v1/conversations', agent, { id: 'acc-main', user: { id: 'uma', roles: [] }, title: 'Main' }))
      .status,
  ).toBe(201);
  [pending] = (
    await http.post('/v1/conversations/acc-main/tool-calls', agent, {
      toolCalls: [{ toolName: 'send_email', arguments: { to: 'x@example.com' } }],
    })
  ).body.toolCalls;
  expect(pending.status).toBe('pending');

  expect((await http.post('/v1/conversations', agent, { id: 'acc-deploy' })).status).toBe(201);
  [deployCall] = (
    await http.post('/v1/conversations/acc-deploy/tool-calls', agent, {
      toolCalls: [{ toolName: 'deploy', arguments: { env: 'prod' } }],
    })
  ).body.toolCalls;
  expect(deployCall.status).toBe('pending');

  expect((await http.post('/v1/conversations', agent, { id: 'acc-approved' })).status).toBe(201);
  [approvedCall] = (
    await http.post('/v1/conversations/acc-approved/tool-calls', agent, {
      toolCalls: [{ toolName: 'get_status', arguments: {} }],
    })
  ).body.toolCalls;
  expect(approvedCall.status).toBe('approved');

  expect((await http.post('/v1/conversations', dualAgent, { id: 'acc-dual' })).status).toBe(201);
  [dualCall] = (
    await http.post('/v1/conversations/acc-dual/tool-calls', dualAgent, {
      toolCalls: [{ toolName: 'send_email', arguments: {} }],
    })
  ).body.toolCalls;
  expect(dualCall.status).toBe('pending');
});

afterAll(async () => {
  await server?.stop();
});

function expectProblem(res: Reply, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({
    status,
    code,
    type: expect.any(String),
    title: expect.any(String),
    detail: expect.any(String),
  });
}

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);
const claims = { sub: 'alice', roles: ['approver'], tenant: 'default' };

function sign(payload: Record<string, unknown>, secret = TEST_SECRET) {
  return new SignJWT(payload).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(secret));
}

describe('authentication', () => {
  const paths = ['/v1/conversations', '/v1/approvals', '/v1/policy'];

  it('refuses a request without a token with 401 unauthenticated', async () => {
    for (const path of paths) expectProblem(await http.get(path), 401, 'unauthenticated');
    expectProblem(await http.post('/v1/conversations', undefined, {}), 401, 'unauthenticated');
  });

  it('refuses malformed authorization headers with 401', async () => {
    for (const value of [
      'Bearer',
      'Bearer ',
      'Bearer not-a-jwt',
      'Bearer a.b.c',
      'Basic YWxpY2U6c2VjcmV0',
      'alice',
      `Token ${await sign({ ...claims, exp: now() + 600 })}`,
    ]) {
      expectProblem(await http.get('/v1/conversations', undefined, { authorization: value }), 401, 'unauthenticated');
    }
  });

  it('refuses an expired token with 401', async () => {
    expectProblem(
      await http.get('/v1/conversations', await sign({ ...claims, iat: now() - 7200, exp: now() - 3600 })),
      401,
      'unauthenticated',
    );
  });

  it('refuses a token signed with another key with 401', async () => {
    const forged = await sign({ ...claims, exp: now() + 600 }, 'another-secret-that-is-long-enough-for-hs256-000000');
    expectProblem(await http.get('/v1/conversations', forged), 401, 'unauthenticated');
  });

  it('refuses an unsigned token (alg none) with 401', async () => {
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claims, exp: now() + 600 })}.`;
    expectProblem(await http.get('/v1/conversations', none), 401, 'unauthenticated');
    // The same with a leftover signature from a genuine token.
    const real = (await sign({ ...claims, exp: now() + 600 })).split('.')[2];
    expectProblem(
      await http.get(
        '/v1/conversations',
        `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claims, exp: now() + 600 })}.${real}`,
      ),
      401,
      'unauthenticated',
    );
  });

  it('refuses a token without exp with 401', async () => {
    expectProblem(await http.get('/v1/conversations', await sign({ ...claims })), 401, 'unauthenticated');
  });

  it('refuses a token without sub with 401', async () => {
    expectProblem(
      await http.get('/v1/conversations', await sign({ roles: ['approver'], exp: now() + 600 })),
      401,
      'unauthenticated',
    );
  });

  it('accepts a well-formed token it signed', async () => {
    expect((await http.get('/v1/conversations', await sign({ ...claims, exp: now() + 600 }))).status).toBe(200);
  });

  it('checks the token before anything else: 401 even for a missing resource or a bad body', async () => {
    expectProblem(await http.get('/v1/tool-calls/no-such-call'), 401, 'unauthenticated');
    expectProblem(
      await http.post('/v1/tool-calls/no-such-call/decision', undefined, { nonsense: true }),
      401,
      'unauthenticated',
    );
  });
});

describe('people decide, agents never do', () => {
  it('refuses the owning agent deciding its own call with 403', async () => {
    expectProblem(
      await http.post(`/v1/tool-calls/${pending.id}/decision`, agent, { decision: 'approve' }),
      403,
      'forbidden',
    );
  });

  it('refuses an agent token that also carries approver and admin with 403', async () => {
    expectProblem(
      await http.post(`/v1/tool-calls/${dualCall.id}/decision`, dualAgent, { decision: 'approve' }),
      403,
      'forbidden',
    );
    expectProblem(
      await http.post(`/v1/tool-calls/${dualCall.id}/decision`, dualAgent, { decision: 'reject' }),
      403,
      'forbidden',
    );
    expect((await http.get(`/v1/tool-calls/${dualCall.id}`, dualAgent)).body.status).toBe('pending');
  });

  it('refuses an agent the approvals inbox with 403, whatever its other roles', async () => {
    expectProblem(await http.get('/v1/approvals', agent), 403, 'forbidden');
    expectProblem(await http.get('/v1/approvals', dualAgent), 403, 'forbidden');
  });

  it("refuses an approver whose roles are not among the rule's approvers with 403, and lets an admin decide", async () => {
    expectProblem(
      await http.post(`/v1/tool-calls/${deployCall.id}/decision`, approver, { decision: 'approve' }),
      403,
      'forbidden',
    );
    const inbox = await http.get('/v1/approvals', approver);
    expect(inbox.body.items.map((i: any) => i.id)).not.toContain(deployCall.id);
    expect((await http.get('/v1/approvals', admin)).body.items.map((i: any) => i.id)).toContain(deployCall.id);
    expect((await http.get(`/v1/tool-calls/${deployCall.id}`, approver)).status).toBe(200); // may read, not decide
  });

  it('refuses an auditor deciding with 403 but lets it read', async () => {
    expectProblem(
      await http.post(`/v1/tool-calls/${pending.id}/decision`, auditor, { decision: 'reject' }),
      403,
      'forbidden',
    );
    expect((await http.get(`/v1/tool-calls/${pending.id}`, auditor)).status).toBe(200);
    const conv = await http.get('/v1/conversations/acc-main', auditor);
    expect(conv.status).toBe(200);
    expect(conv.body.toolCalls.map((c: any) => c.id)).toContain(pending.id);
    expect((await http.get('/v1/conversations', auditor)).body.items.map((c: any) => c.id)).toContain('acc-main');
    expect((await http.get('/v1/policy', auditor)).status).toBe(200);
  });

  it('refuses an auditor changing anything with 403', async () => {
    expectProblem(await http.put('/v1/policy', auditor, { rules: [] }), 403, 'forbidden');
    expectProblem(await http.put('/v1/tools/anything', auditor, {}), 403, 'forbidden');
    expectProblem(await http.post('/v1/conversations', auditor, {}), 403, 'forbidden');
  });
});

describe('agents act only in their own conversations', () => {
  it('refuses an approver claiming or reporting with 403', async () => {
    expectProblem(await http.post(`/v1/tool-calls/${approvedCall.id}/execution`, approver), 403, 'forbidden');
    expectProblem(await http.post(`/v1/tool-calls/${approvedCall.id}/execution`, admin), 403, 'forbidden');
    expectProblem(
      await http.post(`/v1/tool-calls/${approvedCall.id}/result`, approver, { outcome: 'succeeded' }),
      403,
      'forbidden',
    );
    expect((await http.get(`/v1/tool-calls/${approvedCall.id}`, agent)).body.status).toBe('approved');
  });

  it('refuses a person starting a conversation or proposing in one with 403', async () => {
    expectProblem(await http.post('/v1/conversations', approver, { id: 'acc-by-person' }), 403, 'forbidden');
    expectProblem(
      await http.post('/v1/conversations/acc-approved/tool-calls', admin, {
        toolCalls: [{ toolName: 'get_status', arguments: {} }],
      }),
      403,
      'forbidden',
    );
  });

  it("hides another agent's conversation and calls: 404 for every read and action", async () => {
    expectProblem(await http.get('/v1/conversations/acc-approved', otherAgent), 404, 'not_found');
    expectProblem(
      await http.post('/v1/conversations/acc-approved/tool-calls', otherAgent, {
        toolCalls: [{ toolName: 'get_status', arguments: {} }],
      }),
      404,
      'not_found',
    );
    expectProblem(await http.get(`/v1/tool-calls/${approvedCall.id}`, otherAgent), 404, 'not_found');
    expectProblem(await http.post(`/v1/tool-calls/${approvedCall.id}/execution`, otherAgent), 404, 'not_found');
    expectProblem(
      await http.post(`/v1/tool-calls/${approvedCall.id}/result`, otherAgent, { outcome: 'succeeded' }),
      404,
      'not_found',
    );
    expectProblem(
      await http.post(`/v1/tool-calls/${pending.id}/decision`, otherAgent, { decision: 'approve' }),
      404,
      'not_found',
    );
    const list = await http.get('/v1/conversations', otherAgent);
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([]);
    expect((await http.get(`/v1/tool-calls/${approvedCall.id}`, agent)).body.status).toBe('approved');
  });

  it("lists an agent's own conversations only", async () => {
    const ids = (await http.get('/v1/conversations', agent)).body.items.map((c: any) => c.id);
    expect(ids).toEqual(expect.arrayContaining(['acc-main', 'acc-deploy', 'acc-approved']));
    expect(ids).not.toContain('acc-dual');
  });

  it('lets the requester read her conversation, and hides it from a person who is neither requester nor approver', async () => {
    const uma = await server.token('uma', []);
    expect((await http.get('/v1/conversations/acc-main', uma)).status).toBe(200);
    expect((await http.get(`/v1/tool-calls/${pending.id}`, uma)).status).toBe(200);
    expect((await http.get('/v1/conversations', uma)).body.items.map((c: any) => c.id)).toEqual(['acc-main']);
    const stranger = await server.token('stan', []);
    expectProblem(await http.get('/v1/conversations/acc-main', stranger), 404, 'not_found');
    expectProblem(await http.get(`/v1/tool-calls/${pending.id}`, stranger), 404, 'not_found');
    expect((await http.get('/v1/conversations', stranger)).body.items).toEqual([]);
  });

  it('lets every role of the tenant read the policy and tools, and a token with no known role neither', async () => {
    for (const token of [agent, approver, admin, auditor]) {
      expect((await http.get('/v1/policy', token)).status).toBe(200);
      expect((await http.get('/v1/tools', token)).status).toBe(200);
    }
    for (const roles of [[], ['aprover'], ['requester']]) {
      const nobody = await server.token('uma', roles);
      expectProblem(await http.get('/v1/policy', nobody), 403, 'forbidden');
      expectProblem(await http.get('/v1/tools', nobody), 403, 'forbidden');
      expectProblem(await http.get('/v1/tools/anything', nobody), 403, 'forbidden');
    }
  });
});

describe('tenants are walls', () => {
  it("answers 404 (never 403) for another tenant's conversation and tool call, whatever the roles", async () => {
    expectProblem(await http.get('/v1/conversations/acc-main', t2Admin), 404, 'not_found');
    expectProblem(await http.get(`/v1/tool-calls/${pending.id}`, t2Admin), 404, 'not_found');
    expectProblem(await http.get(`/v1/tool-calls/${pending.id}?wait=1`, t2Approver), 404, 'not_found');
    expectProblem(
      await http.post(`/v1/tool-calls/${pending.id}/decision`, t2Admin, { decision: 'approve' }),
      404,
      'not_found',
    );
    expectProblem(
      await http.post(`/v1/tool-calls/${pending.id}/decision`, t2Approver, { decision: 'approve' }),
      404,
      'not_found',
    );
    // Same agent id in another tenant is another agent.
    expectProblem(await http.get('/v1/conversations/acc-approved', t2Agent), 404, 'not_found');
    expectProblem(
      await http.post('/v1/conversations/acc-approved/tool-calls', t2Agent, {
        toolCalls: [{ toolName: 'get_status', arguments: {} }],
      }),
      404,
      'not_found',
    );
    expectProblem(await http.post(`/v1/tool-calls/${approvedCall.id}/execution`, t2Agent), 404, 'not_found');
    expectProblem(
      await http.post(`/v1/tool-calls/${approvedCall.id}/result`, t2Agent, { outcome: 'succeeded' }),
      404,
      'not_found',
    );
    // A person of the other tenant without the needed role still learns nothing: 404, not 403.
    expectProblem(
      await http.post('/v1/conversations/acc-approved/tool-calls', t2Approver, {
        toolCalls: [{ toolName: 'get_status', arguments: {} }],
      }),
      404,
      'not_found',
    );
    expectProblem(await http.post(`/v1/tool-calls/${approvedCall.id}/execution`, t2Approver), 404, 'not_found');
    expect((await http.get(`/v1/tool-calls/${pending.id}`, approver)).body.status).toBe('pending');
  });

  it("never lists another tenant's conversations or approvals", async () => {
    const convs = await http.get('/v1/conversations', t2Admin);
    expect(convs.status).toBe(200);
    expect(convs.body.items).toEqual([]);
    const inbox = await http.get('/v1/approvals', t2Admin);
    expect(inbox.status).toBe(200);
    expect(inbox.body.items).toEqual([]);
    expect((await http.get('/v1/approvals', admin)).body.items.map((i: any) => i.id)).toEqual(
      expect.arrayContaining([pending.id, deployCall.id]),
    );
  });

  it('lets the same conversation id live separately in another tenant', async () => {
    const res = await http.post('/v1/conversations', t2Agent, { id: 'acc-main' });
    expect(res.status).toBe(201);
    expect(res.body.toolCalls ?? []).toEqual([]);
  });

  it("keeps each tenant's policy and tools to itself", async () => {
    expect((await http.get('/v1/policy', t2Admin)).body.version).toBe(0);
    expectProblem(await http.get('/v1/tools/get_status', t2Agent), 404, 'not_found');
  });
});

describe('the order of checks: 404 before 403 before 400', () => {
  it('answers 404 to an agent deciding a tool call that does not exist', async () => {
    expectProblem(
      await http.post('/v1/tool-calls/tc_does_not_exist/decision', agent, { decision: 'approve' }),
      404,
      'not_found',
    );
    expectProblem(
      await http.post('/v1/tool-calls/tc_does_not_exist/decision', agent, { decision: 'maybe', extra: 1 }),
      404,
      'not_found',
    );
  });

  it('answers 403, not 400, to an agent sending an invalid decision on an existing call', async () => {
    expectProblem(
      await http.post(`/v1/tool-calls/${pending.id}/decision`, agent, { decision: 'maybe', extra: 1 }),
      403,
      'forbidden',
    );
  });

  it('answers 403, not 400, to a person proposing an invalid step in an existing conversation', async () => {
    expectProblem(
      await http.post('/v1/conversations/acc-main/tool-calls', approver, { toolCalls: 'nope' }),
      403,
      'forbidden',
    );
  });

  it('answers 404, not 400, for an invalid body sent to a missing or hidden resource', async () => {
    expectProblem(
      await http.post('/v1/tool-calls/tc_does_not_exist/decision', approver, { decision: 'maybe' }),
      404,
      'not_found',
    );
    expectProblem(
      await http.post('/v1/conversations/acc-main/tool-calls', otherAgent, { toolCalls: 'nope' }),
      404,
      'not_found',
    );
    expectProblem(
      await http.post(`/v1/tool-calls/${approvedCall.id}/result`, t2Agent, { outcome: 'maybe' }),
      404,
      'not_found',
    );
  });

  it('answers 400 to a permitted caller with an invalid body, before any 409', async () => {
    expectProblem(
      await http.post(`/v1/tool-calls/${pending.id}/decision`, approver, { decision: 'maybe' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await http.post(`/v1/tool-calls/${approvedCall.id}/result`, agent, { outcome: 'maybe' }),
      400,
      'validation_failed',
    ); // not yet claimed: 409 would come after
  });
});
