/**
 * Review mends of issue 28's four eyes (HTTP, real database): revoking a standing deny loosens the tenant, so only
 * its maker or an admin may, and under governance one admin alone may not lift a tenant-wide one; a resume held for
 * one halt never lifts a newer halt; a decision's answer that carries a pending change says so in OpenAPI.
 */
import { client, Reply } from '../support/http';
import { TollgateGrpc } from '../support/grpc';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});

let rpc: TollgateGrpc;

afterAll(async () => {
  rpc?.close();
  await server?.stop();
});

function expectProblem(res: Reply, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

const GOVERNED = { governance: { quorum: 2 }, rules: [{ match: 'shell', level: 'confirm' }] };
const PLAIN = { rules: [{ match: 'shell', level: 'confirm' }] };

async function tenant(name: string, policy: unknown) {
  let n = 0;
  const t = {
    ann: await server.token('ann', ['admin'], { tenant: name, name: 'Ann' }),
    bob: await server.token('bob', ['admin'], { tenant: name, name: 'Bob' }),
    al: await server.token('al', ['approver'], { tenant: name }),
    bea: await server.token('bea', ['approver'], { tenant: name }),
    agent: await server.token('bot', ['agent'], { tenant: name }),
    async propose(cmd = 'rm -rf /', status = 'pending') {
      const conv = `${name}-c${++n}`;
      expect((await http.post('/v1/conversations', t.agent, { id: conv })).status).toBe(201);
      const res = await http.post(`/v1/conversations/${conv}/tool-calls`, t.agent, {
        toolCalls: [{ toolName: 'shell', arguments: { cmd } }],
      });
      expect(res.body.toolCalls[0].status).toBe(status);
      return res.body.toolCalls[0];
    },
    async deny(by: string, scope: 'conversation' | 'tenant', cmd?: string) {
      const call = await t.propose(cmd);
      const res = await http.post(`/v1/tool-calls/${call.id}/decision`, by, { decision: 'always_reject', scope });
      expect(res.status).toBe(200);
      const denies = (await http.get('/v1/grants?effect=deny', t.ann)).body.items;
      return denies.find((g: any) => g.sourceToolCallId === call.id).id as string;
    },
    revoke: (id: string, by: string) =>
      http.call('DELETE', `/v1/grants/${id}`, { token: by, body: { reason: 'lift' } }),
    async status(id: string) {
      return (await http.get('/v1/grants?effect=deny&status=all', t.ann)).body.items.find((g: any) => g.id === id)
        .status as string;
    },
  };
  expect((await http.put('/v1/policy', t.ann, policy)).status).toBe(200);
  return t;
}

describe('revoking a standing deny', () => {
  it("another approver may not lift an approver's or an admin's conversation deny; its maker and admins may", async () => {
    const t = await tenant('mend-deny-conv', PLAIN);
    const als = await t.deny(t.al, 'conversation');
    expectProblem(await t.revoke(als, t.bea), 403, 'forbidden');
    expect(await t.status(als)).toBe('active');
    expect((await t.revoke(als, t.al)).status).toBe(200);
    expect(await t.status(als)).toBe('revoked');

    const anns = await t.deny(t.ann, 'conversation');
    expectProblem(await t.revoke(anns, t.al), 403, 'forbidden');
    expect(await t.status(anns)).toBe('active');
    expect((await t.revoke(anns, t.bob)).status).toBe(200); // any admin
    expect(await t.status(anns)).toBe('revoked');
  });

  it('under governance one admin may not lift a tenant-wide deny (409 deny_revoke_governed), not even its maker', async () => {
    const t = await tenant('mend-deny-gov', GOVERNED);
    // A conversation deny stays its maker's to lift, governance or not.
    const narrow = await t.deny(t.al, 'conversation', 'ls');
    expect((await t.revoke(narrow, t.al)).status).toBe(200);
    const wide = await t.deny(t.ann, 'tenant');
    const refused = await t.revoke(wide, t.ann);
    expectProblem(refused, 409, 'deny_revoke_governed');
    expect(refused.body.detail).toMatch(/governance/);
    expectProblem(await t.revoke(wide, t.bob), 409, 'deny_revoke_governed');
    expectProblem(await t.revoke(wide, t.al), 403, 'forbidden');
    expect(await t.status(wide)).toBe('active');
    await t.propose('rm -rf /', 'rejected'); // still denied
  });

  it('without governance an admin lifts a tenant-wide deny at once', async () => {
    const t = await tenant('mend-deny-plain', PLAIN);
    const wide = await t.deny(t.ann, 'tenant');
    expect((await t.revoke(wide, t.bob)).status).toBe(200);
    expect(await t.status(wide)).toBe('revoked');
  });
});

describe('a resume held for one halt', () => {
  it('is closed as halt_moved_on, not applied, when that halt was lifted and a new one pulled', async () => {
    const t = await tenant('mend-resume', GOVERNED);
    expect((await http.post('/v1/halt', t.ann, { scope: 'tenant', reason: 'first' })).status).toBe(200);
    const stale = await http.post('/v1/resume', t.ann, { scope: 'tenant' });
    expect(stale.status).toBe(202);
    const fresh = await http.post('/v1/resume', t.ann, { scope: 'tenant', reason: 'again' });
    expect(fresh.status).toBe(202);
    expect((await http.post(`/v1/changes/${fresh.body.pendingChange.id}/approve`, t.bob)).body.applied).toBe(true);
    expect((await http.get('/v1/status', t.ann)).body.halted).toBe(false);

    expect((await http.post('/v1/halt', t.ann, { scope: 'tenant', reason: 'second' })).status).toBe(200);
    const res = await http.post(`/v1/changes/${stale.body.pendingChange.id}/approve`, t.bob);
    expectProblem(res, 409, 'halt_moved_on');
    expect((await http.get('/v1/status', t.ann)).body.halted).toBe(true); // the newer halt stands
    const closed = (await http.get(`/v1/changes/${stale.body.pendingChange.id}`, t.ann)).body;
    expect(closed.status).toBe('rejected');

    // A resume proposed for the halt in force is applied as before.
    const current = await http.post('/v1/resume', t.ann, { scope: 'tenant' });
    expect((await http.post(`/v1/changes/${current.body.pendingChange.id}/approve`, t.bob)).body.applied).toBe(true);
    expect((await http.get('/v1/status', t.ann)).body.halted).toBe(false);
  });
});

describe('OpenAPI', () => {
  it("declares a decision's pendingChange on ToolCall, as the held tenant-wide always_allow answers it", async () => {
    const doc = (await http.get('/openapi.json')).body;
    const declared = doc.components.schemas.ToolCall.properties.pendingChange;
    expect(declared.allOf ?? [declared]).toEqual([{ $ref: '#/components/schemas/PendingChange' }]);
    expect(doc.components.schemas.ToolCall.required).not.toContain('pendingChange');
    const t = await tenant('mend-openapi', GOVERNED);
    const call = await t.propose();
    const res = await http.post(`/v1/tool-calls/${call.id}/decision`, t.ann, {
      decision: 'always_allow',
      scope: 'tenant',
    });
    expect(res.status).toBe(200);
    expect(res.body.pendingChange).toMatchObject({ kind: 'tenant_grant', status: 'pending' });
  });

  it('gRPC answers the same decision with its pending change (ToolCall.pending_change, as JSON)', async () => {
    rpc = new TollgateGrpc(server.grpcAddress!);
    const t = await tenant('mend-grpc', GOVERNED);
    const call = await t.propose();
    const decided = await rpc.call(
      'DecideToolCall',
      { id: call.id, decision: 'DECISION_KIND_ALWAYS_ALLOW', scope: 'GRANT_SCOPE_TENANT' },
      t.ann,
    );
    expect(decided.status).toBe('TOOL_CALL_STATUS_APPROVED');
    const held = (await http.get('/v1/changes', t.bob)).body.items[0];
    expect(decided.pendingChange.fields).toMatchObject({
      id: { stringValue: held.id },
      kind: { stringValue: 'tenant_grant' },
      status: { stringValue: 'pending' },
    });
  });
});
