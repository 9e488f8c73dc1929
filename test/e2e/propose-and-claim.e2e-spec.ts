import canonicalize from 'canonicalize';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { createHash } from 'node:crypto';
import { client } from '../support/http';
import { json, struct, TollgateGrpc } from '../support/grpc';
import { startTestServer, TestServer } from '../support/server';

/**
 * Propose and claim in one request (`"claim": true`): an auto-approved call comes back `executed` with its
 * arguments and receipt, in the proposal's own transaction; held calls are proposed as before; a retried proposal
 * never claims again (one run, whatever the retries); over REST and gRPC.
 */

let server: TestServer;
let rpc: TollgateGrpc;
let http: ReturnType<typeof client>;
let agent: string;
let admin: string;
let auditor: string;
let approver: string;

beforeAll(async () => {
  server = await startTestServer();
  rpc = new TollgateGrpc(server.grpcAddress!);
  http = client(server.url);
  agent = await server.token('bot', ['agent'], { name: 'Support bot' });
  admin = await server.token('root', ['admin']);
  auditor = await server.token('audrey', ['auditor']);
  approver = await server.token('ann', ['approver']);
  expect((await http.put('/v1/tools/get_source', admin, { isReadOnly: true })).status).toBe(201);
});

afterAll(async () => {
  rpc?.close();
  await server?.stop();
});

async function conversation(id: string) {
  expect((await http.post('/v1/conversations', agent, { id })).status).toBe(201);
}

const proposeClaiming = (conv: string, toolCalls: unknown[], claim: unknown = true) =>
  http.post(`/v1/conversations/${conv}/tool-calls`, agent, { toolCalls, claim });

async function eventTypes(toolCallId: string): Promise<string[]> {
  const res = await http.get(`/v1/audit/events?toolCallId=${toolCallId}`, auditor);
  expect(res.status).toBe(200);
  return res.body.events.map((e: { type: string }) => e.type);
}

async function verifyReceipt(receipt: string) {
  const jwks = createLocalJWKSet((await http.get('/.well-known/jwks.json')).body);
  const { payload } = await jwtVerify(receipt, jwks, { issuer: 'tollgate', typ: 'tollgate-receipt+jwt' });
  return payload;
}

const digest = (args: unknown) => createHash('sha256').update(canonicalize(args)!).digest('hex');

describe('REST: POST /v1/conversations/{id}/tool-calls with claim', () => {
  it('answers an auto-approved call executed, with its arguments and a receipt, recorded in one step', async () => {
    await conversation('pc-1');
    const res = await proposeClaiming('pc-1', [
      { id: 'c1', toolName: 'get_source', arguments: { id: 'src_2' } },
      { id: 'c2', toolName: 'archive_source', arguments: { id: 'src_2' } },
    ]);
    expect(res.status).toBe(201);
    const [read, held] = res.body.toolCalls;
    expect(read).toMatchObject({ status: 'executed', execution: { by: { id: 'bot', via: 'api' } } });
    expect(held.status).toBe('pending');
    expect(res.body.claims).toEqual([{ toolCallId: read.id, arguments: { id: 'src_2' }, receipt: expect.any(String) }]);
    expect(await verifyReceipt(res.body.claims[0].receipt)).toMatchObject({
      tcid: read.id,
      conv: 'pc-1',
      tool: 'get_source',
      args: digest({ id: 'src_2' }),
      approvedBy: 'policy',
      tenant: 'default',
    });
    // The claim is the claim: a second one is refused, and the result is taken.
    expect((await http.post(`/v1/tool-calls/${read.id}/execution`, agent)).body.code).toBe('already_executed');
    const done = await http.post(`/v1/tool-calls/${read.id}/result`, agent, { outcome: 'succeeded' });
    expect(done.body.status).toBe('completed');
    expect(await eventTypes(read.id)).toEqual([
      'ToolCallProposed',
      'ToolCallAutoApproved',
      'ToolCallExecuted',
      'ToolCallCompleted',
    ]);
    expect((await http.get('/v1/audit/verify', auditor)).body).toMatchObject({ ok: true });
  });

  it('without claim answers no claims; a held call is not claimed and waits for its own claim', async () => {
    await conversation('pc-2');
    const plain = await http.post('/v1/conversations/pc-2/tool-calls', agent, {
      toolCalls: [{ toolName: 'get_source', arguments: { id: 'a' } }],
    });
    expect(plain.status).toBe(201);
    expect(plain.body.claims).toBeUndefined();
    expect(plain.body.toolCalls[0].status).toBe('approved');
    const held = await proposeClaiming('pc-2', [{ toolName: 'archive_source', arguments: { id: 'a' } }]);
    expect(held.body.claims).toEqual([]);
    expect(held.body.toolCalls[0].status).toBe('pending');
  });

  it('refuses a claim that is not a boolean with 400 validation_failed', async () => {
    await conversation('pc-3');
    const res = await proposeClaiming('pc-3', [{ toolName: 'get_source', arguments: {} }], 'yes');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'validation_failed' });
    expect(JSON.stringify(res.body.errors)).toContain('claim');
  });

  it('retried at once, many times over, the proposal runs once: one claim handed out, one ToolCallExecuted', async () => {
    await conversation('pc-4');
    const step = [{ id: 'retry-1', toolName: 'get_source', arguments: { id: 'r' } }];
    const answers = await Promise.all(Array.from({ length: 8 }, () => proposeClaiming('pc-4', step)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    const ids = new Set(answers.map((a) => a.body.toolCalls[0].id));
    expect(ids.size).toBe(1);
    const [id] = ids;
    for (const a of answers) expect(a.body.toolCalls[0].status).toBe('executed');
    const first = answers.find((a) => a.status === 201)!;
    expect(first.body.claims).toEqual([{ toolCallId: id, arguments: { id: 'r' }, receipt: expect.any(String) }]);
    for (const a of answers.filter((x) => x !== first)) expect(a.body.claims).toEqual([]);
    expect((await eventTypes(id)).filter((t) => t === 'ToolCallExecuted')).toHaveLength(1);
  });

  it('the same request retried with its claimKey, at once and many times, is answered the one claim it made', async () => {
    await conversation('pc-7');
    const body = {
      toolCalls: [{ id: 'k-1', toolName: 'get_source', arguments: { id: 'k' } }],
      claim: true,
      claimKey: 'ck_1',
    };
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => http.post('/v1/conversations/pc-7/tool-calls', agent, body)),
    );
    const id = answers[0].body.toolCalls[0].id;
    for (const a of answers)
      expect(a.body.claims).toEqual([{ toolCallId: id, arguments: { id: 'k' }, receipt: expect.any(String) }]);
    const receipts = new Set(
      await Promise.all(
        answers.map(async (a) => {
          const { jti, iat, exp } = await verifyReceipt(a.body.claims[0].receipt);
          return `${jti} ${iat} ${exp}`;
        }),
      ),
    );
    // One receipt: the same id, issued and expiring once, so a backend that records ids runs the call once.
    expect(receipts.size).toBe(1);
    expect((await eventTypes(id)).filter((t) => t === 'ToolCallExecuted')).toHaveLength(1);
    const other = await http.post('/v1/conversations/pc-7/tool-calls', agent, { ...body, claimKey: 'ck_2' });
    expect(other.body.claims).toEqual([]);
    const bad = await http.post('/v1/conversations/pc-7/tool-calls', agent, { ...body, claimKey: 'not a key!' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
  });

  it('an approved held call raced by its own claim and by proposals asking to claim it is claimed exactly once', async () => {
    await conversation('pc-6');
    const step = [{ id: 'held-1', toolName: 'archive_source', arguments: { id: 'x' } }];
    const [held] = (await proposeClaiming('pc-6', step)).body.toolCalls;
    expect(held.status).toBe('pending');
    expect((await http.post(`/v1/tool-calls/${held.id}/decision`, approver, { decision: 'approve' })).status).toBe(200);
    const [claim, ...replays] = await Promise.all([
      http.post(`/v1/tool-calls/${held.id}/execution`, agent),
      ...Array.from({ length: 5 }, () => proposeClaiming('pc-6', step)),
    ]);
    const handedOut = replays.flatMap((r) => r.body.claims) as Array<{ receipt: string }>;
    const wins = (claim.status === 200 ? 1 : 0) + handedOut.length;
    expect(wins).toBe(1);
    if (claim.status !== 200) expect(claim.body.code).toBe('already_executed');
    const receipt = claim.status === 200 ? claim.body.receipt : handedOut[0].receipt;
    expect(await verifyReceipt(receipt)).toMatchObject({ tcid: held.id, approvedBy: 'ann' });
    expect((await eventTypes(held.id)).filter((t) => t === 'ToolCallExecuted')).toHaveLength(1);
  });

  it('a new call under a halt is refused as before, claim or not', async () => {
    await conversation('pc-5');
    expect((await http.post('/v1/halt', admin, { scope: 'conversation', id: 'pc-5', reason: 'stop' })).status).toBe(
      200,
    );
    const fresh = await proposeClaiming('pc-5', [{ toolName: 'get_source', arguments: { id: 'n' } }]);
    expect(fresh.status).toBe(503);
    expect(fresh.body.code).toBe('halted');
  });
});

describe('gRPC: ProposeToolCalls with claim', () => {
  it('answers the claims beside the calls, the call executed, the receipt vouching for its arguments', async () => {
    await rpc.call('StartConversation', { id: 'pc-grpc' }, agent);
    const answer = await rpc.call(
      'ProposeToolCalls',
      {
        conversationId: 'pc-grpc',
        toolCalls: [{ id: 'g1', toolName: 'get_source', arguments: struct({ id: 'g', n: 1 }) }],
        claim: true,
      },
      agent,
    );
    expect(answer.toolCalls[0].status).toBe('TOOL_CALL_STATUS_EXECUTED');
    expect(answer.claims).toHaveLength(1);
    const [k] = answer.claims;
    expect(k.toolCallId).toBe(answer.toolCalls[0].id);
    expect(json(k.arguments)).toEqual({ id: 'g', n: 1 });
    expect(await verifyReceipt(k.receipt)).toMatchObject({ tcid: k.toolCallId, args: digest({ id: 'g', n: 1 }) });
    const plain = await rpc.call(
      'ProposeToolCalls',
      { conversationId: 'pc-grpc', toolCalls: [{ toolName: 'get_source', arguments: struct({ id: 'h' }) }] },
      agent,
    );
    expect(plain.claims).toEqual([]);
    expect(plain.toolCalls[0].status).toBe('TOOL_CALL_STATUS_APPROVED');
  });
});
