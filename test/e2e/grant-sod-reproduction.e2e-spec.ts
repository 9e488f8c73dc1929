/**
 * Standing grants and separation of duties, through HTTP on a real database (the review's reproduction): an admin
 * always-allows someone else's call with a tenant-wide grant; her own later call, whose rule has
 * `selfApproval: false`, must still wait for another person, and the verdict's reason says why the grant did not
 * apply. A rule without separation of duties is still covered by the same grant.
 */
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;
let ann: string;
let bob: string;
let agent: string;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
  ann = await server.token('ann', ['admin'], { name: 'Ann' });
  bob = await server.token('bob', ['approver'], { name: 'Bob' });
  agent = await server.token('bot', ['agent']);
  const put = await http.put('/v1/policy', ann, {
    rules: [
      { match: 'wire_money', level: 'confirm', selfApproval: false },
      { match: 'send_email', level: 'confirm' },
    ],
  });
  expect(put.status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
});

let n = 0;
/** An agent's call in a conversation of its own for `user`; answers the call as proposed. */
async function propose(user: string, toolName: string) {
  const conv = `conv-${++n}`;
  expect((await http.post('/v1/conversations', agent, { id: conv, user: { id: user, roles: [] } })).status).toBe(201);
  const res = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ id: `c${n}`, toolName, arguments: { amount: 950000 } }],
  });
  expect(res.status).toBe(201);
  return res.body.toolCalls[0];
}

describe('a standing grant and separation of duties', () => {
  it("never covers a later call whose rule has selfApproval: false: the admin's own call waits for another approver", async () => {
    // Ann always-allows Bob's wire tenant-wide: she is no party to it, so separation of duties lets her approve.
    const bobs = await propose('bob', 'wire_money');
    expect(bobs.status).toBe('pending');
    const granted = await http.post(`/v1/tool-calls/${bobs.id}/decision`, ann, {
      decision: 'always_allow',
      scope: 'tenant',
    });
    expect(granted.status).toBe(200);
    const grants = await http.get('/v1/grants?tool=wire_money', ann);
    const grant = grants.body.items.find((g: { sourceToolCallId: string }) => g.sourceToolCallId === bobs.id);
    expect(grant).toMatchObject({ scope: 'tenant', toolName: 'wire_money' });

    // Ann's own wire: held, not let through by her grant, and the reason says so.
    const anns = await propose('ann', 'wire_money');
    expect(anns.status).toBe('pending');
    expect(anns.policy.reason).toContain(
      `standing grant ${grant.id} not applied: separation of duties (selfApproval: false)`,
    );
    expect(anns.policy).not.toHaveProperty('grantId');
    const self = await http.post(`/v1/tool-calls/${anns.id}/decision`, ann, { decision: 'approve' });
    expect({ status: self.status, code: self.body.code }).toEqual({ status: 403, code: 'self_approval' });
    expect((await http.post(`/v1/tool-calls/${anns.id}/decision`, bob, { decision: 'approve' })).status).toBe(200);
  });

  it('still covers calls whose rule leaves self-approval allowed', async () => {
    const first = await propose('bob', 'send_email');
    expect(
      (await http.post(`/v1/tool-calls/${first.id}/decision`, ann, { decision: 'always_allow', scope: 'tenant' }))
        .status,
    ).toBe(200);
    const later = await propose('ann', 'send_email');
    expect(later.status).toBe('approved');
    expect(later.policy.reason).toMatch(/^Allowed by standing grant \S+ \(scope tenant\)$/);
  });
});
