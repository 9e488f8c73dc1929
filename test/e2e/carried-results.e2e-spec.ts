import * as grpc from '@grpc/grpc-js';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { client } from '../support/http';
import { fromValue, struct, TollgateGrpc, value } from '../support/grpc';
import { startTestServer, TestServer } from '../support/server';

/**
 * Results carried by a proposal (`results`) over real HTTP and gRPC, on the database the suite runs against
 * (PostgreSQL with DATABASE_URL, else embedded PGlite): the result of the last call rides with the next step and
 * is recorded first, in the same commit; a refused result refuses the request and writes nothing; the same
 * request retried at once, many times over, records one result and hands out one claim; a call of another
 * tenant cannot be completed this way.
 */

let server: TestServer;
let rpc: TollgateGrpc;
let http: ReturnType<typeof client>;
let agent: string;
let admin: string;
let auditor: string;
let outsiderAgent: string;
let outsiderAuditor: string;

beforeAll(async () => {
  server = await startTestServer();
  rpc = new TollgateGrpc(server.grpcAddress!);
  http = client(server.url);
  agent = await server.token('bot', ['agent'], { name: 'Support bot' });
  admin = await server.token('root', ['admin']);
  auditor = await server.token('audrey', ['auditor']);
  outsiderAgent = await server.token('bot', ['agent'], { tenant: 'elsewhere' });
  outsiderAuditor = await server.token('audrey', ['auditor'], { tenant: 'elsewhere' });
  expect((await http.put('/v1/tools/get_source', admin, { isReadOnly: true })).status).toBe(201);
});

afterAll(async () => {
  rpc?.close();
  await server?.stop();
});

type Result = { toolCallId: string; outcome: string; output?: unknown; error?: string; [k: string]: unknown };

async function conversation(id: string, token = agent) {
  expect((await http.post('/v1/conversations', token, { id })).status).toBe(201);
}

const propose = (conv: string, body: Record<string, unknown>, token = agent) =>
  http.post(`/v1/conversations/${conv}/tool-calls`, token, { claim: true, ...body });

/** One auto-approved read proposed and claimed in one step: its server id, the call `executed`. */
async function executedCall(conv: string, id: string, token = agent): Promise<string> {
  const res = await propose(conv, { toolCalls: [{ id, toolName: 'get_source', arguments: { id } }] }, token);
  expect(res.status).toBe(201);
  expect(res.body.toolCalls[0].status).toBe('executed');
  return res.body.toolCalls[0].id;
}

async function trail(
  conv: string,
  token = auditor,
): Promise<Array<{ type: string; toolCallId?: string; seq: number }>> {
  const res = await http.get(`/v1/audit/events?conversationId=${conv}`, token);
  expect(res.status).toBe(200);
  return res.body.events;
}

const completions = async (conv: string, token = auditor) =>
  (await trail(conv, token)).filter((e) => e.type === 'ToolCallCompleted');

async function receiptId(receipt: string) {
  const jwks = createLocalJWKSet((await http.get('/.well-known/jwks.json')).body);
  const { payload } = await jwtVerify(receipt, jwks, { issuer: 'tollgate', typ: 'tollgate-receipt+jwt' });
  return `${payload.jti} ${payload.iat} ${payload.exp}`;
}

describe('REST: POST /v1/conversations/{id}/tool-calls with results', () => {
  it('completes the earlier call, then proposes: ToolCallCompleted first in the trail, the chain intact', async () => {
    await conversation('cr-1');
    const first = await executedCall('cr-1', 'c1');
    const before = (await trail('cr-1')).length;
    const res = await propose('cr-1', {
      toolCalls: [{ id: 'c2', toolName: 'get_source', arguments: { id: 'c2' } }],
      results: [{ toolCallId: first, outcome: 'succeeded', output: { rows: 3, names: ['a', 'b'] } }],
    });
    expect(res.status).toBe(201);
    const next = res.body.toolCalls[0];
    expect(next.status).toBe('executed');
    expect(res.body.claims).toEqual([{ toolCallId: next.id, arguments: { id: 'c2' }, receipt: expect.any(String) }]);
    const done = await http.get(`/v1/tool-calls/${first}`, agent);
    expect(done.body).toMatchObject({
      status: 'completed',
      result: { outcome: 'succeeded', output: { rows: 3, names: ['a', 'b'] } },
    });
    const added = (await trail('cr-1')).slice(before);
    expect(added.map((e) => [e.type, e.toolCallId])).toEqual([
      ['ToolCallCompleted', first],
      ['ToolCallProposed', next.id],
      ['ToolCallAutoApproved', next.id],
      ['ToolCallExecuted', next.id],
    ]);
    // One commit: the events are consecutive in the tenant's chain, nothing between them.
    expect(added.map((e) => e.seq - added[0].seq)).toEqual([0, 1, 2, 3]);
    expect((await http.get('/v1/audit/verify', auditor)).body).toMatchObject({ ok: true });
  });

  it('refuses an output over 64 KiB with 413 payload_too_large naming results[i].output, writing nothing', async () => {
    await conversation('cr-2');
    const first = await executedCall('cr-2', 'c1');
    const res = await propose('cr-2', {
      toolCalls: [{ id: 'c2', toolName: 'get_source', arguments: { id: 'c2' } }],
      results: [{ toolCallId: first, outcome: 'succeeded', output: { blob: 'x'.repeat(70_000) } }],
    });
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 413, code: 'payload_too_large' });
    expect(res.body.detail).toContain('results[0].output');
    expect((await http.get(`/v1/tool-calls/${first}`, agent)).body.status).toBe('executed');
    expect((await trail('cr-2')).map((e) => e.type)).not.toContain('ToolCallCompleted');
  });

  it.each<[string, string, (id: string) => unknown, string]>([
    [
      'an outcome that is not succeeded or failed',
      'results[0].outcome',
      (id) => [{ toolCallId: id, outcome: 'done' }],
      'cr-bad-outcome',
    ],
    [
      'a member a result does not have',
      'results[0].extra',
      (id) => [{ toolCallId: id, outcome: 'succeeded', extra: 1 }],
      'cr-unknown-member',
    ],
    [
      'a tool-call id that is not one',
      'results[0].toolCallId',
      (id) => [{ toolCallId: `${id} !`, outcome: 'succeeded' }],
      'cr-bad-id',
    ],
    ['a result that is not an object', 'results[0]', () => ['succeeded'], 'cr-not-object'],
    ['results that are not a list', 'results', (id) => ({ toolCallId: id, outcome: 'succeeded' }), 'cr-not-list'],
    [
      'more than 64 results',
      'results',
      (id) => Array.from({ length: 65 }, () => ({ toolCallId: id, outcome: 'succeeded' })),
      'cr-too-many',
    ],
  ])('refuses %s with 400 validation_failed at %s, writing nothing', async (_, path, results, conv) => {
    await conversation(conv);
    const first = await executedCall(conv, 'c1');
    const res = await propose(conv, {
      toolCalls: [{ id: 'c2', toolName: 'get_source', arguments: { id: 'c2' } }],
      results: results(first),
    });
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 400, code: 'validation_failed' });
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect((await http.get(`/v1/tool-calls/${first}`, agent)).body.status).toBe('executed');
    expect(await completions(conv)).toEqual([]);
  });

  it('refuses a result for a call still pending with 409 not_executed; the proposal is not written', async () => {
    await conversation('cr-3');
    const done = await executedCall('cr-3', 'c1');
    const held = await propose('cr-3', { toolCalls: [{ id: 'h1', toolName: 'archive_source', arguments: {} }] });
    expect(held.body.toolCalls[0].status).toBe('pending');
    const before = await trail('cr-3');
    const res = await propose('cr-3', {
      toolCalls: [{ id: 'h1', toolName: 'archive_source', arguments: {} }],
      results: [
        { toolCallId: done, outcome: 'succeeded' },
        { toolCallId: held.body.toolCalls[0].id, outcome: 'succeeded' },
      ],
    });
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 409, code: 'not_executed' });
    expect(await trail('cr-3')).toEqual(before);
    expect((await http.get(`/v1/tool-calls/${done}`, agent)).body.status).toBe('executed');
  });

  it('refuses a result other than the one recorded with 409 already_completed; the same one again is taken', async () => {
    await conversation('cr-4');
    const done = await executedCall('cr-4', 'c1');
    const reported = await http.post(`/v1/tool-calls/${done}/result`, agent, {
      outcome: 'succeeded',
      output: { a: 1, b: { c: 2, d: 3 } },
    });
    expect(reported.status).toBe(200);
    const step = { toolCalls: [{ id: 'c2', toolName: 'get_source', arguments: { id: 'c2' } }] };
    const other = await propose('cr-4', {
      ...step,
      results: [{ toolCallId: done, outcome: 'succeeded', output: { a: 1, b: { c: 2, d: 4 } } }],
    });
    expect({ status: other.status, code: other.body.code }).toEqual({ status: 409, code: 'already_completed' });
    // Keys in another order (JSONB stores them its own way): the same result.
    const same = await propose('cr-4', {
      ...step,
      results: [{ toolCallId: done, outcome: 'succeeded', output: { b: { d: 3, c: 2 }, a: 1 } }],
    });
    expect(same.status).toBe(201);
    expect(same.body.toolCalls[0].status).toBe('executed');
    expect(await completions('cr-4')).toHaveLength(1);
  });

  it('the same request sent 8 times at once records one result and hands out one claim, the same to all', async () => {
    await conversation('cr-5');
    const done = await executedCall('cr-5', 'c1');
    const body = {
      toolCalls: [{ id: 'race-1', toolName: 'get_source', arguments: { id: 'race' } }],
      claimKey: 'ck-race',
      results: [{ toolCallId: done, outcome: 'failed', error: 'upstream 502', output: { tried: 3 } }],
    };
    const answers = await Promise.all(Array.from({ length: 8 }, () => propose('cr-5', body)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    const id = answers[0].body.toolCalls[0].id;
    for (const a of answers)
      expect(a.body.claims).toEqual([{ toolCallId: id, arguments: { id: 'race' }, receipt: expect.any(String) }]);
    const receipts = new Set(await Promise.all(answers.map((a) => receiptId(a.body.claims[0].receipt))));
    expect(receipts.size).toBe(1);
    const events = await trail('cr-5');
    expect(events.filter((e) => e.type === 'ToolCallCompleted').map((e) => e.toolCallId)).toEqual([done]);
    expect(events.filter((e) => e.type === 'ToolCallExecuted').map((e) => e.toolCallId)).toEqual([done, id]);
    expect((await http.get(`/v1/tool-calls/${done}`, agent)).body.result).toMatchObject({
      outcome: 'failed',
      error: 'upstream 502',
      output: { tried: 3 },
    });
  });

  it('another tenant’s agent cannot complete this tenant’s call through results: 404, nothing written', async () => {
    await conversation('cr-6');
    const ours = await executedCall('cr-6', 'c1');
    // The same conversation id and agent id in the other tenant: only the tenant tells them apart.
    await conversation('cr-6', outsiderAgent);
    const res = await propose(
      'cr-6',
      {
        toolCalls: [{ id: 'o1', toolName: 'get_source', arguments: { id: 'o1' } }],
        results: [{ toolCallId: ours, outcome: 'failed', error: 'sabotage' }],
      },
      outsiderAgent,
    );
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 404, code: 'not_found' });
    expect((await http.get(`/v1/tool-calls/${ours}`, agent)).body.status).toBe('executed');
    expect(await completions('cr-6')).toEqual([]);
    expect((await trail('cr-6', outsiderAuditor)).map((e) => e.type)).toEqual(['ConversationStarted']);
    // The call is still ours to report.
    expect((await http.post(`/v1/tool-calls/${ours}/result`, agent, { outcome: 'succeeded' })).status).toBe(200);
  });
});

describe('gRPC: ProposeToolCalls with results', () => {
  it('completes the earlier call in the same step', async () => {
    await rpc.call('StartConversation', { id: 'cr-grpc' }, agent);
    const first = await rpc.call(
      'ProposeToolCalls',
      {
        conversationId: 'cr-grpc',
        toolCalls: [{ id: 'g1', toolName: 'get_source', arguments: struct({ id: 'g1' }) }],
        claim: true,
      },
      agent,
    );
    const done = first.toolCalls[0].id;
    expect(first.toolCalls[0].status).toBe('TOOL_CALL_STATUS_EXECUTED');
    const next = await rpc.call(
      'ProposeToolCalls',
      {
        conversationId: 'cr-grpc',
        toolCalls: [{ id: 'g2', toolName: 'get_source', arguments: struct({ id: 'g2' }) }],
        claim: true,
        results: [{ toolCallId: done, outcome: 'RESULT_OUTCOME_SUCCEEDED', output: value({ rows: [1, 2] }) }],
      },
      agent,
    );
    expect(next.toolCalls[0].status).toBe('TOOL_CALL_STATUS_EXECUTED');
    expect(next.claims).toHaveLength(1);
    const read = await rpc.call('GetToolCall', { id: done }, agent);
    expect(read.status).toBe('TOOL_CALL_STATUS_COMPLETED');
    expect(read.result.outcome).toBe('RESULT_OUTCOME_SUCCEEDED');
    expect(fromValue(read.result.output)).toEqual({ rows: [1, 2] });
    const added = (await trail('cr-grpc')).slice(-4);
    expect(added.map((e) => e.type)).toEqual([
      'ToolCallCompleted',
      'ToolCallProposed',
      'ToolCallAutoApproved',
      'ToolCallExecuted',
    ]);
  });

  it('a refused result fails the call with its gRPC status and tollgate-code, and nothing is written', async () => {
    await rpc.call('StartConversation', { id: 'cr-grpc-2' }, agent);
    const { toolCalls } = await rpc.call(
      'ProposeToolCalls',
      { conversationId: 'cr-grpc-2', toolCalls: [{ id: 'h1', toolName: 'archive_source', arguments: struct({}) }] },
      agent,
    );
    expect(toolCalls[0].status).toBe('TOOL_CALL_STATUS_PENDING');
    const before = await trail('cr-grpc-2');
    const f = await rpc.failure(
      'ProposeToolCalls',
      {
        conversationId: 'cr-grpc-2',
        toolCalls: [{ id: 'h1', toolName: 'archive_source', arguments: struct({}) }],
        results: [{ toolCallId: toolCalls[0].id, outcome: 'RESULT_OUTCOME_SUCCEEDED' }],
      },
      agent,
    );
    expect(f).toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      tollgateCode: 'not_executed',
      info: { reason: 'not_executed', domain: 'tollgate' },
    });
    const unknown = await rpc.failure(
      'ProposeToolCalls',
      {
        conversationId: 'cr-grpc-2',
        toolCalls: [{ id: 'h1', toolName: 'archive_source', arguments: struct({}) }],
        results: [{ toolCallId: 'tc_nope', outcome: 'RESULT_OUTCOME_SUCCEEDED' }],
      },
      agent,
    );
    expect(unknown).toMatchObject({ code: grpc.status.NOT_FOUND, tollgateCode: 'not_found' });
    const unspecified = await rpc.failure(
      'ProposeToolCalls',
      {
        conversationId: 'cr-grpc-2',
        toolCalls: [{ id: 'h1', toolName: 'archive_source', arguments: struct({}) }],
        results: [{ toolCallId: toolCalls[0].id }],
      },
      agent,
    );
    expect(unspecified).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, tollgateCode: 'validation_failed' });
    expect(unspecified.violations?.map((v) => v.field)).toEqual(['results[0].outcome']);
    expect(await trail('cr-grpc-2')).toEqual(before);
  });
});
