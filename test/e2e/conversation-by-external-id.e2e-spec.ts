import * as grpc from '@grpc/grpc-js';
import { Tollgate } from '@tollgate/sdk';
import { client } from '../support/http';
import { TollgateGrpc } from '../support/grpc';
import { startTestServer, TestServer } from '../support/server';

/**
 * GET /v1/conversations/{id}?externalId=… and Tollgate.GetConversation's external_ids: a conversation with only
 * the calls of the external ids named, for a process that knows its framework's call ids (the Claude Code hook)
 * and must not read a long session whole. The same readers as the plain GET, and the same order of refusals.
 */

let server: TestServer;
let rpc: TollgateGrpc;
let http: ReturnType<typeof client>;
let agent: string;
let otherAgent: string;
let approver: string;
let outsider: string;

const CONV = 'ext-conv';
const path = (ids: string[], id = CONV) =>
  `/v1/conversations/${id}${ids.length ? `?${ids.map((x) => `externalId=${encodeURIComponent(x)}`).join('&')}` : ''}`;
/** The external ids of the calls answered, sorted: the calls of one step share their time, so their order is the ids'. */
const externalIds = (body: { toolCalls?: Array<{ externalId?: string | null }> }) =>
  body.toolCalls?.map((c) => c.externalId).sort();

beforeAll(async () => {
  server = await startTestServer();
  rpc = new TollgateGrpc(server.grpcAddress!);
  http = client(server.url);
  agent = await server.token('bot', ['agent']);
  otherAgent = await server.token('bot-2', ['agent']);
  approver = await server.token('ann', ['approver'], { name: 'Ann' });
  outsider = await server.token('olga', ['admin', 'approver'], { tenant: 'elsewhere' });
  expect((await http.post('/v1/conversations', agent, { id: CONV })).status).toBe(201);
  const proposed = await http.post(`/v1/conversations/${CONV}/tool-calls`, agent, {
    toolCalls: ['call_a', 'call_b', 'call_c'].map((id, i) => ({ id, toolName: 'get_source', arguments: { id: i } })),
  });
  expect(proposed.status).toBe(201);
});

afterAll(async () => {
  rpc?.close();
  await server?.stop();
});

describe('GET /v1/conversations/{id}?externalId=', () => {
  it('answers the conversation with only the calls named; an id no call has is not there', async () => {
    const res = await http.get(path(['call_c', 'nope', 'call_a']), agent);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: CONV, agentId: 'bot', status: 'blocked', pendingCount: 3 });
    expect(externalIds(res.body)).toEqual(['call_a', 'call_c']);
    expect(res.body.toolCalls.find((c: any) => c.externalId === 'call_a')).toMatchObject({
      toolName: 'get_source',
      arguments: { id: 0 },
    });
    expect(externalIds((await http.get(path(['nope']), agent)).body)).toEqual([]);
    // The same id twice is one call.
    expect(externalIds((await http.get(path(['call_b', 'call_b']), agent)).body)).toEqual(['call_b']);
  });

  it("keeps the conversation's status and pending count, made from every pending call, named or not", async () => {
    // The test server's policy holds these calls for a person: the conversation is blocked by both.
    const conv = 'ext-conv-blocked';
    expect((await http.post('/v1/conversations', agent, { id: conv })).status).toBe(201);
    const held = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
      toolCalls: ['p_1', 'p_2'].map((id) => ({ id, toolName: 'drop_source', arguments: { id } })),
    });
    expect(held.body.toolCalls.map((c: { status: string }) => c.status)).toEqual(['pending', 'pending']);
    const whole = await http.get(`/v1/conversations/${conv}`, agent);
    expect(whole.body).toMatchObject({ status: 'blocked', pendingCount: 2 });
    for (const ids of [['p_1'], ['nope'], ['p_2', 'p_1']]) {
      const res = await http.get(path(ids, conv), agent);
      expect(res.body).toMatchObject({ status: 'blocked', pendingCount: 2 });
      expect(externalIds(res.body)).toEqual(ids.filter((x) => x !== 'nope').sort());
    }
    const viaGrpc = await rpc.call('GetConversation', { conversationId: conv, externalIds: ['p_2'] }, agent);
    expect({ status: viaGrpc.status, pendingCount: viaGrpc.pendingCount, calls: viaGrpc.toolCalls.length }).toEqual({
      status: 'CONVERSATION_STATUS_BLOCKED',
      pendingCount: 2,
      calls: 1,
    });
  });

  it('without the parameter, every call as before', async () => {
    expect(externalIds((await http.get(path([]), agent)).body)).toEqual(['call_a', 'call_b', 'call_c']);
  });

  it('is read by whoever may read the conversation: a person of the tenant, not another agent nor another tenant', async () => {
    expect(externalIds((await http.get(path(['call_b']), approver)).body)).toEqual(['call_b']);
    for (const token of [otherAgent, outsider]) {
      const res = await http.get(path(['call_b']), token);
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 404, code: 'not_found' });
    }
    // 404 before 400: a bad parameter tells nothing of a conversation the caller cannot see.
    expect((await http.get(path(['not ok']), outsider)).status).toBe(404);
  });

  it('refuses a bad external id, an empty one and a 65th with validation_failed naming externalId', async () => {
    const sixtyFour = Array.from({ length: 64 }, (_, i) => `id-${i}`);
    expect((await http.get(path(sixtyFour), agent)).status).toBe(200);
    for (const ids of [['not ok'], [''], ['x'.repeat(129)], ['call_a', 'a/b'], [...sixtyFour, 'id-64']]) {
      const res = await http.get(path(ids), agent);
      expect({ ids: ids.length, status: res.status, code: res.body.code, path: res.body.errors?.[0]?.path }).toEqual({
        ids: ids.length,
        status: 400,
        code: 'validation_failed',
        path: 'externalId',
      });
    }
  });

  it("the SDK's getConversation takes externalIds", async () => {
    const tollgate = new Tollgate({ url: server.url, token: agent });
    expect(externalIds(await tollgate.getConversation(CONV, { externalIds: ['call_c'] }))).toEqual(['call_c']);
    expect(externalIds(await tollgate.getConversation(CONV))).toEqual(['call_a', 'call_b', 'call_c']);
    // An empty list would read every call: refused before anything is sent.
    expect(() => tollgate.getConversation(CONV, { externalIds: [] })).toThrow(TypeError);
  });
});

describe('Tollgate.GetConversation with external_ids', () => {
  const ids = (m: { toolCalls?: Array<{ externalId?: string }> }) =>
    (m.toolCalls ?? []).map((c) => c.externalId).sort();

  it('answers only the calls named; none named, every call', async () => {
    const named = await rpc.call('GetConversation', { conversationId: CONV, externalIds: ['call_b', 'nope'] }, agent);
    expect(named).toMatchObject({ id: CONV, agentId: 'bot' });
    expect(ids(named)).toEqual(['call_b']);
    expect(ids(await rpc.call('GetConversation', { conversationId: CONV }, approver))).toEqual([
      'call_a',
      'call_b',
      'call_c',
    ]);
  });

  it('is NOT_FOUND for another tenant or agent, INVALID_ARGUMENT for a bad id or a 65th', async () => {
    for (const token of [otherAgent, outsider]) {
      const f = await rpc.failure('GetConversation', { conversationId: CONV, externalIds: ['call_b'] }, token);
      expect({ code: f.code, tollgateCode: f.tollgateCode }).toEqual({
        code: grpc.status.NOT_FOUND,
        tollgateCode: 'not_found',
      });
    }
    const many = Array.from({ length: 65 }, (_, i) => `id-${i}`);
    for (const externalIds of [['not ok'], many]) {
      const f = await rpc.failure('GetConversation', { conversationId: CONV, externalIds }, agent);
      expect({ code: f.code, tollgateCode: f.tollgateCode, field: f.violations?.[0]?.field }).toEqual({
        code: grpc.status.INVALID_ARGUMENT,
        tollgateCode: 'validation_failed',
        field: 'externalId',
      });
    }
  });

  it('the calls it answers are the ones the REST read answers', async () => {
    const { toolCalls } = await rpc.call('GetConversation', { conversationId: CONV, externalIds: ['call_a'] }, agent);
    const rest = (await http.get(path(['call_a']), agent)).body.toolCalls;
    expect(toolCalls.map((c: any) => [c.id, c.toolName])).toEqual(rest.map((c: any) => [c.id, c.toolName]));
  });
});
