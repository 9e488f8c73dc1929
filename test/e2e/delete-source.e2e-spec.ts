/**
 * ARC-ADR-006, end to end: `delete_source` is destructive, so the conversation's user must hold the
 * admin role (else denied at once, nobody asked) and a person must confirm before it runs.
 * The ADR's four paths — non-admin denied, admin confirmed, admin cancelled, backend error handled —
 * each go through real HTTP against the real service on a real database.
 */
import canonicalize from 'canonicalize';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { createHash } from 'node:crypto';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

const DELETE_SOURCE_RULE = {
  match: 'delete_source',
  level: 'confirm',
  requireRole: 'admin',
  approvers: ['requester', 'admin'],
};
const DENIED = 'Permission denied: admin role required';

let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let rootAdmin: string;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
  agent = await server.token('copilot-agent', ['agent'], { name: 'CopilotKit agent' });
  rootAdmin = await server.token('root', ['admin']);
  const put = await http.put('/v1/policy', rootAdmin, { rules: [DELETE_SOURCE_RULE] });
  expect(put.status).toBe(200);
  const tool = await http.put('/v1/tools/delete_source', rootAdmin, {
    description: 'DELETE /api/v1/sources/{id} on backend-core',
    destructive: true,
  });
  expect(tool.status).toBe(201);
});

afterAll(async () => {
  await server?.stop();
});

/** Starts a conversation for `user` and proposes one delete_source call in it. */
async function askToDelete(
  convId: string,
  user: { id: string; roles: string[]; name?: string },
  sourceId: string,
  display?: unknown,
) {
  const conv = await http.post('/v1/conversations', agent, { id: convId, user, title: `Delete ${sourceId}` });
  expect(conv.status).toBe(201);
  const call = {
    id: `tc_${convId}`,
    toolName: 'delete_source',
    arguments: { id: sourceId },
    reason: 'the user asked to delete it',
    ...(display ? { display } : {}),
  };
  const proposed = await http.post(`/v1/conversations/${convId}/tool-calls`, agent, { toolCalls: [call] });
  expect(proposed.status).toBe(201);
  expect(proposed.body.toolCalls).toHaveLength(1);
  return proposed.body.toolCalls[0];
}

async function pendingIds(token: string): Promise<string[]> {
  const res = await http.get('/v1/approvals', token);
  expect(res.status).toBe(200);
  return res.body.items.map((i: { id: string }) => i.id);
}

function expectProblem(res: { status: number; body: any; headers: Headers }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** `approvedBy` names the person; accept the id as a string or inside an actor object. */
function approverId(v: unknown): unknown {
  return typeof v === 'object' && v !== null ? (v as { id?: unknown }).id : v;
}

describe('delete_source: a non-admin user (ADR path 1)', () => {
  let call: any;
  beforeAll(async () => {
    call = await askToDelete('adr6-reader', { id: 'rita', roles: ['reader'], name: 'Rita' }, 'src_1');
  });

  it('is rejected by policy at once, without asking anyone', () => {
    expect(call.status).toBe('rejected');
    expect(call.policy).toMatchObject({ level: 'deny', rule: 0, reason: DENIED });
    expect(call.decision).toMatchObject({ outcome: 'rejected', reason: DENIED, by: { via: 'policy' } });
    expect(call.approval).toBeUndefined();
  });

  it('leaves the conversation unblocked', async () => {
    const conv = await http.get('/v1/conversations/adr6-reader', agent);
    expect(conv.status).toBe(200);
    expect(conv.body).toMatchObject({ status: 'active', pendingCount: 0 });
    expect(conv.body.toolCalls.map((c: any) => [c.id, c.status])).toEqual([[call.id, 'rejected']]);
  });

  it('never appears in the approvals inbox of an admin or of the requester', async () => {
    expect(await pendingIds(rootAdmin)).not.toContain(call.id);
    expect(await pendingIds(await server.token('rita', []))).not.toContain(call.id);
  });

  it('cannot be claimed for execution: 409 not_approved, and nothing runs', async () => {
    const claim = await http.post(`/v1/tool-calls/${call.id}/execution`, agent);
    expectProblem(claim, 409, 'not_approved');
    const after = await http.get(`/v1/tool-calls/${call.id}`, agent);
    expect(after.body.status).toBe('rejected');
    expect(after.body.execution).toBeUndefined();
  });

  it('is denied as well when the conversation has no user at all', async () => {
    const conv = await http.post('/v1/conversations', agent, { id: 'adr6-nouser' });
    expect(conv.status).toBe(201);
    const res = await http.post('/v1/conversations/adr6-nouser/tool-calls', agent, {
      toolCalls: [{ toolName: 'delete_source', arguments: { id: 'src_9' } }],
    });
    expect(res.status).toBe(201);
    expect(res.body.toolCalls[0]).toMatchObject({ status: 'rejected', policy: { level: 'deny', reason: DENIED } });
  });
});

describe('delete_source: an admin user confirms (ADR path 2)', () => {
  const display = {
    title: 'Delete source',
    summary: "Are you sure you want to delete source 'Old wiki' (src_2)? This action cannot be undone.",
    fields: [
      { label: 'Source', value: 'Old wiki' },
      { label: 'ID', value: 'src_2' },
      { label: 'Objects', value: '1,204' },
    ],
  };
  const ada = { id: 'ada', roles: ['admin'], name: 'Ada' };
  let adaToken: string;
  let call: any;
  let claim: any;

  beforeAll(async () => {
    adaToken = await server.token('ada', ['admin'], { name: 'Ada' });
    call = await askToDelete('adr6-confirm', ada, 'src_2', display);
  });

  it('holds the call pending for the requester or an admin, blocking the conversation', async () => {
    expect(call.status).toBe('pending');
    expect(call.policy).toMatchObject({ level: 'confirm', rule: 0 });
    // A rule decided, but the registry's flags the policy saw are on the call: approvers' UIs ask twice.
    expect(call.policy.toolFlags).toEqual({ isReadOnly: false, requiresApproval: false, destructive: true });
    expect(call.approval.approvers).toEqual(['requester', 'admin']);
    expect(Date.parse(call.approval.expiresAt)).toBeGreaterThan(Date.now());
    const conv = await http.get('/v1/conversations/adr6-confirm', agent);
    expect(conv.body).toMatchObject({ status: 'blocked', pendingCount: 1 });
  });

  it('shows the admin a card with the conversation and the display fields', async () => {
    const res = await http.get('/v1/approvals', adaToken);
    expect(res.status).toBe(200);
    const card = res.body.items.find((i: any) => i.id === call.id);
    expect(card).toBeDefined();
    expect(card).toMatchObject({
      toolName: 'delete_source',
      arguments: { id: 'src_2' },
      status: 'pending',
      display,
      conversation: {
        id: 'adr6-confirm',
        agentId: 'copilot-agent',
        user: { id: 'ada', roles: ['admin'] },
        title: 'Delete src_2',
      },
    });
  });

  it('does not show the card to, nor let it be decided by, an approver who is neither the requester nor an admin', async () => {
    const bob = await server.token('bob', ['approver']);
    expect(await pendingIds(bob)).not.toContain(call.id);
    const res = await http.post(`/v1/tool-calls/${call.id}/decision`, bob, { decision: 'approve' });
    expectProblem(res, 403, 'forbidden');
  });

  it('does not let the agent claim the call before anyone confirms', async () => {
    expectProblem(await http.post(`/v1/tool-calls/${call.id}/execution`, agent), 409, 'not_approved');
  });

  it('is approved when the admin confirms', async () => {
    const res = await http.post(
      `/v1/tool-calls/${call.id}/decision`,
      adaToken,
      { decision: 'approve' },
      { 'X-Tollgate-Channel': 'web' },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: call.id,
      status: 'approved',
      decision: { outcome: 'approved', by: { id: 'ada', via: 'web' } },
    });
    expect(await pendingIds(adaToken)).not.toContain(call.id);
    const conv = await http.get('/v1/conversations/adr6-confirm', agent);
    expect(conv.body).toMatchObject({ status: 'active', pendingCount: 0 });
  });

  it('lets the agent claim the run once, with the arguments and a receipt', async () => {
    claim = await http.post(`/v1/tool-calls/${call.id}/execution`, agent);
    expect(claim.status).toBe(200);
    expect(claim.body.arguments).toEqual({ id: 'src_2' });
    expect(claim.body.toolCall).toMatchObject({ id: call.id, status: 'executed' });
    expect(typeof claim.body.receipt).toBe('string');
    expect(claim.body.receipt.split('.')).toHaveLength(3);
  });

  it('refuses a second claim with 409 already_executed', async () => {
    expectProblem(await http.post(`/v1/tool-calls/${call.id}/execution`, agent), 409, 'already_executed');
  });

  it('issues a receipt that a backend can verify against the published JWKS', async () => {
    const jwks = await http.get('/.well-known/jwks.json');
    expect(jwks.status).toBe(200);
    expect(Array.isArray(jwks.body.keys)).toBe(true);
    const { alg } = decodeProtectedHeader(claim.body.receipt);
    expect(['EdDSA', 'ES256']).toContain(alg);
    const { payload } = await jwtVerify(claim.body.receipt, createLocalJWKSet(jwks.body));
    expect(payload).toMatchObject({ tcid: call.id, conv: 'adr6-confirm', tool: 'delete_source' });
    expect(payload.args).toBe(sha256Hex(canonicalize({ id: 'src_2' })!));
    expect(approverId(payload.approvedBy)).toBe('ada');
    expect(typeof payload.iat).toBe('number');
    expect(typeof payload.exp).toBe('number');
    expect(payload.exp!).toBeGreaterThan(payload.iat!);
    expect(typeof payload.jti).toBe('string');
    expect(payload.jti!.length).toBeGreaterThan(0);
  });

  it('does not verify a receipt whose claims were tampered with', async () => {
    const jwks = await http.get('/.well-known/jwks.json');
    const [h, p, s] = claim.body.receipt.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, args: sha256Hex(canonicalize({ id: 'src_ALL' })!) })).toString('base64url')}.${s}`;
    await expect(jwtVerify(forged, createLocalJWKSet(jwks.body))).rejects.toThrow();
  });

  it('is completed when the agent reports success', async () => {
    const res = await http.post(`/v1/tool-calls/${call.id}/result`, agent, {
      outcome: 'succeeded',
      output: { deleted: 'src_2', objects: 1204 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: call.id,
      status: 'completed',
      result: { outcome: 'succeeded', output: { deleted: 'src_2', objects: 1204 } },
    });
    const read = await http.get(`/v1/tool-calls/${call.id}`, adaToken);
    expect(read.body).toMatchObject({
      status: 'completed',
      decision: { outcome: 'approved', by: { id: 'ada' } },
      execution: { by: { id: 'copilot-agent' } },
    });
  });
});

describe('delete_source: the requester decides through the "requester" approver', () => {
  it('lets the conversation user confirm her own call even when her token holds no role', async () => {
    const call = await askToDelete('adr6-requester', { id: 'carol', roles: ['admin'] }, 'src_5');
    expect(call.status).toBe('pending');
    const carol = await server.token('carol', []);
    expect(await pendingIds(carol)).toContain(call.id);
    const res = await http.post(`/v1/tool-calls/${call.id}/decision`, carol, { decision: 'approve' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'approved', decision: { by: { id: 'carol', via: 'api' } } });
  });
});

describe('delete_source: an admin user cancels (ADR path 3)', () => {
  let adaToken: string;
  let call: any;

  beforeAll(async () => {
    adaToken = await server.token('ada', ['admin'], { name: 'Ada' });
    call = await askToDelete('adr6-cancel', { id: 'ada', roles: ['admin'] }, 'src_3');
    expect(call.status).toBe('pending');
  });

  it('rejects the call with the reason given', async () => {
    const res = await http.post(`/v1/tool-calls/${call.id}/decision`, adaToken, {
      decision: 'reject',
      reason: 'Wrong source, keep it',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'rejected',
      decision: { outcome: 'rejected', reason: 'Wrong source, keep it', by: { id: 'ada', via: 'api' } },
    });
  });

  it('never runs it: the claim answers 409 not_approved', async () => {
    expectProblem(await http.post(`/v1/tool-calls/${call.id}/execution`, agent), 409, 'not_approved');
  });

  it('keeps the call rejected with its reason, and unblocks the conversation', async () => {
    const read = await http.get(`/v1/tool-calls/${call.id}`, agent);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      status: 'rejected',
      decision: { outcome: 'rejected', reason: 'Wrong source, keep it' },
    });
    expect(read.body.execution).toBeUndefined();
    expect(read.body.result).toBeUndefined();
    const conv = await http.get('/v1/conversations/adr6-cancel', agent);
    expect(conv.body).toMatchObject({ status: 'active', pendingCount: 0 });
  });

  it('does not let anyone approve it afterwards', async () => {
    const res = await http.post(`/v1/tool-calls/${call.id}/decision`, rootAdmin, { decision: 'approve' });
    expectProblem(res, 409, 'already_decided');
    expect(res.body.decision).toMatchObject({ outcome: 'rejected', by: { id: 'ada' } });
  });
});

describe('delete_source: the backend fails after confirmation (ADR path 4)', () => {
  let call: any;

  beforeAll(async () => {
    const adaToken = await server.token('ada', ['admin']);
    call = await askToDelete('adr6-fails', { id: 'ada', roles: ['admin'] }, 'src_4');
    expect((await http.post(`/v1/tool-calls/${call.id}/decision`, adaToken, { decision: 'approve' })).status).toBe(200);
    expect((await http.post(`/v1/tool-calls/${call.id}/execution`, agent)).status).toBe(200);
  });

  it('records the failure as the result and completes the call', async () => {
    const res = await http.post(`/v1/tool-calls/${call.id}/result`, agent, {
      outcome: 'failed',
      error: 'backend-core answered 500 Internal Server Error',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'completed',
      result: { outcome: 'failed', error: 'backend-core answered 500 Internal Server Error' },
    });
    expect(typeof res.body.result.at).toBe('string');
    const read = await http.get(`/v1/tool-calls/${call.id}`, rootAdmin);
    expect(read.body).toMatchObject({
      status: 'completed',
      result: { outcome: 'failed', error: 'backend-core answered 500 Internal Server Error' },
    });
  });

  it('refuses a second report with 409 already_completed', async () => {
    expectProblem(
      await http.post(`/v1/tool-calls/${call.id}/result`, agent, { outcome: 'succeeded' }),
      409,
      'already_completed',
    );
  });
});
