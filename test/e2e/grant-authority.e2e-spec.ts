/**
 * Issue 11, findings 2 and 14, through HTTP on a real database.
 * 2: a standing grant beyond one conversation lets other agents' calls for other users through, so only an
 *    admin may make one; a requester or approver grants at most for the conversation, and the policy's
 *    `grants` may narrow further. A refusal is 403, recorded in the audit trail (GrantRefused), and
 *    changes nothing else: the call stays pending.
 * 14: a second decision by the same person that asks for something else (other edited arguments, another
 *    grant scope) is 409 already_decided, not a silent 200.
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

/** A tenant of its own with `policy`, and what a test needs to act in it. */
async function tenantWith(tenant: string, policy: unknown) {
  const t = {
    admin: await server.token(`${tenant}-root`, ['admin'], { tenant }),
    approver: await server.token('alice', ['approver'], { tenant }),
    auditor: await server.token('audrey', ['auditor'], { tenant }),
    agentA: await server.token('agent-a', ['agent'], { tenant }),
    agentB: await server.token('agent-b', ['agent'], { tenant }),
    /** An end user's token: no role at all. */
    user: (id: string) => server.token(id, [], { tenant }),
    /** Starts a conversation for `userId` and proposes one call; answers the call as proposed. */
    async propose(
      agent: string,
      convId: string,
      userId: string,
      toolName: string,
      args: Record<string, unknown> = { id: 'src_1' },
    ) {
      const conv = await http.post('/v1/conversations', agent, { id: convId, user: { id: userId, roles: ['admin'] } });
      expect(conv.status).toBe(201);
      const res = await http.post(`/v1/conversations/${convId}/tool-calls`, agent, {
        toolCalls: [{ toolName, arguments: args }],
      });
      expect(res.status).toBe(201);
      return res.body.toolCalls[0];
    },
    decide: (token: string, id: string, body: Record<string, unknown>) =>
      http.post(`/v1/tool-calls/${id}/decision`, token, body),
    status: async (id: string) => (await http.get(`/v1/tool-calls/${id}`, t.admin)).body.status,
    auditOf: async (type: string) => (await http.get(`/v1/audit/events?type=${type}`, t.auditor)).body.events,
  };
  expect((await http.put('/v1/policy', t.admin, policy)).status).toBe(200);
  return t;
}

describe('the attack from the review: a roleless requester makes a tenant-wide grant', () => {
  let t: Awaited<ReturnType<typeof tenantWith>>;
  let call: any;
  let rita: string;

  beforeAll(async () => {
    t = await tenantWith('grants-attack', {
      rules: [{ match: 'delete_source', level: 'confirm', approvers: ['requester'] }],
    });
    rita = await t.user('rita');
    call = await t.propose(t.agentA, 'rita-chat', 'rita', 'delete_source');
    expect(call).toMatchObject({ status: 'pending', approval: { approvers: ['requester'] } });
  });

  it('always_allow in scope tenant is refused with 403 forbidden, saying who may', async () => {
    const res = await t.decide(rita, call.id, { decision: 'always_allow', scope: 'tenant' });
    expectProblem(res, 403, 'forbidden');
    expect(res.body).toMatchObject({
      detail: 'Only an admin may make a standing grant in scope tenant; you may grant at most scope conversation',
      requestedScope: 'tenant',
      allowedScope: 'conversation',
    });
  });

  it('in scope agent too', async () => {
    expectProblem(await t.decide(rita, call.id, { decision: 'always_allow', scope: 'agent' }), 403, 'forbidden');
  });

  it('leaves the call pending and makes no grant: another agent’s delete_source for another user still waits for a person', async () => {
    expect(await t.status(call.id)).toBe('pending');
    const other = await t.propose(t.agentB, 'sam-chat', 'sam', 'delete_source', { id: 'src_2' });
    expect(other).toMatchObject({ status: 'pending', policy: { level: 'confirm', rule: 0 } });
  });

  it('records each refusal in the audit trail as GrantRefused, by the person, with the scope asked and allowed', async () => {
    const refused = await t.auditOf('GrantRefused');
    expect(refused).toHaveLength(2);
    expect(refused[0]).toMatchObject({
      type: 'GrantRefused',
      conversationId: 'rita-chat',
      toolCallId: call.id,
      toolName: 'delete_source',
      actor: { id: 'rita', kind: 'person', via: 'api' },
      data: {
        decision: 'always_allow',
        requestedScope: 'tenant',
        allowedScope: 'conversation',
        refusedBy: 'rita',
        rule: 0,
        level: 'confirm',
      },
    });
    expect(refused[1].data).toMatchObject({ requestedScope: 'agent' });
    expect(await t.auditOf('GrantCreated')).toEqual([]);
    expect((await http.get('/v1/audit/verify', t.auditor)).body).toMatchObject({ ok: true });
  });

  it('the requester may still always_allow for the conversation, which reaches no other conversation', async () => {
    const res = await t.decide(rita, call.id, { decision: 'always_allow' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'approved', decision: { outcome: 'approved', by: { id: 'rita' } } });
    const grants = await t.auditOf('GrantCreated');
    expect(grants).toEqual([
      expect.objectContaining({
        data: expect.objectContaining({ scope: 'conversation', scopeId: 'rita-chat', createdBy: 'rita' }),
      }),
    ]);
    const elsewhere = await t.propose(t.agentB, 'rita-chat-2', 'rita', 'delete_source', { id: 'src_3' });
    expect(elsewhere.status).toBe('pending');
  });
});

describe('who may grant how far', () => {
  let t: Awaited<ReturnType<typeof tenantWith>>;

  beforeAll(async () => {
    t = await tenantWith('grants-roles', {
      rules: [
        { match: 'deploy_*', level: 'confirm' },
        { match: 'pay_*', level: 'confirm', grants: 'agent' },
        { match: 'wire_*', level: 'confirm', grants: 'none' },
      ],
    });
  });

  it('an approver may grant for the conversation', async () => {
    const call = await t.propose(t.agentA, 'approver-conv', 'u1', 'deploy_web');
    const res = await t.decide(t.approver, call.id, { decision: 'always_allow', scope: 'conversation' });
    expect(res.status).toBe(200);
  });

  it('an approver asking for scope tenant is refused with 403 and the call stays pending', async () => {
    const call = await t.propose(t.agentA, 'approver-tenant', 'u2', 'deploy_api');
    expectProblem(await t.decide(t.approver, call.id, { decision: 'always_allow', scope: 'tenant' }), 403, 'forbidden');
    expect(await t.status(call.id)).toBe('pending');
  });

  it('an admin may grant for the whole tenant, and the grant lets another agent’s call through', async () => {
    const call = await t.propose(t.agentA, 'admin-tenant', 'u3', 'deploy_db');
    const res = await t.decide(t.admin, call.id, { decision: 'always_allow', scope: 'tenant' });
    expect(res.status).toBe(200);
    const other = await t.propose(t.agentB, 'admin-tenant-other', 'u4', 'deploy_db');
    expect(other).toMatchObject({ status: 'approved', decision: { by: { via: 'policy' } } });
    expect(other.policy.reason).toMatch(/standing grant .* \(scope tenant\)/);
  });

  it('a rule’s grants narrows what an admin may grant, and says so', async () => {
    const call = await t.propose(t.agentA, 'narrow-pay', 'u5', 'pay_invoice');
    const res = await t.decide(t.admin, call.id, { decision: 'always_allow', scope: 'tenant' });
    expectProblem(res, 403, 'forbidden');
    expect(res.body).toMatchObject({
      detail: 'A standing grant for this call may cover at most scope agent (policy rule 1), not tenant',
      allowedScope: 'agent',
    });
    expect((await t.decide(t.admin, call.id, { decision: 'always_allow', scope: 'agent' })).status).toBe(200);
  });

  it('grants: none refuses every always_allow; approving still works', async () => {
    const call = await t.propose(t.agentA, 'narrow-wire', 'u6', 'wire_money');
    expectProblem(await t.decide(t.admin, call.id, { decision: 'always_allow' }), 403, 'forbidden');
    expect((await t.decide(t.admin, call.id, { decision: 'approve' })).status).toBe(200);
  });
});

describe('repeating a decision (finding 14)', () => {
  let t: Awaited<ReturnType<typeof tenantWith>>;

  beforeAll(async () => {
    t = await tenantWith('repeat-decisions', { rules: [{ match: 'deploy_*', level: 'confirm' }] });
  });

  it('a second approve by the same person with other arguments is 409 already_decided, and the first arguments run', async () => {
    const call = await t.propose(t.agentA, 'repeat-args', 'u1', 'deploy_web', { v: 1 });
    expect((await t.decide(t.approver, call.id, { decision: 'approve', arguments: { v: 2 } })).status).toBe(200);
    const again = await t.decide(t.approver, call.id, { decision: 'approve', arguments: { v: 3 } });
    expectProblem(again, 409, 'already_decided');
    expect(again.body.decision).toMatchObject({ outcome: 'approved', by: { id: 'alice' }, editedArguments: { v: 2 } });
    expectProblem(await t.decide(t.approver, call.id, { decision: 'approve' }), 409, 'already_decided');
    const claim = await http.post(`/v1/tool-calls/${call.id}/execution`, t.agentA);
    expect(claim.status).toBe(200);
    expect(claim.body.arguments).toEqual({ v: 2 });
  });

  it('the same approve with the same arguments again is 200, unchanged', async () => {
    const call = await t.propose(t.agentA, 'repeat-same', 'u2', 'deploy_web', { v: 1 });
    const first = await t.decide(t.approver, call.id, { decision: 'approve', arguments: { v: 2, env: 'prod' } });
    const again = await t.decide(t.approver, call.id, { decision: 'approve', arguments: { env: 'prod', v: 2 } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
  });

  it('an always_allow repeated in another scope is 409; in the same scope 200', async () => {
    const call = await t.propose(t.agentA, 'repeat-scope', 'u3', 'deploy_api');
    expect((await t.decide(t.admin, call.id, { decision: 'always_allow', scope: 'agent' })).status).toBe(200);
    expectProblem(
      await t.decide(t.admin, call.id, { decision: 'always_allow', scope: 'tenant' }),
      409,
      'already_decided',
    );
    expect((await t.decide(t.admin, call.id, { decision: 'always_allow', scope: 'agent' })).status).toBe(200);
  });
});
