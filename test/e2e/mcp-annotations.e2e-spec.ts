import * as grpc from '@grpc/grpc-js';
import { client } from '../support/http';
import { struct, TollgateGrpc } from '../support/grpc';
import { startTestServer, TestServer } from '../support/server';

/**
 * A proposal may carry an MCP tool's annotations as they are (`readOnlyHint`, `destructiveHint`, `idempotentHint`,
 * `openWorldHint`, `title`) besides Tollgate's flags, over REST and gRPC; the policy reads them as the flags they
 * mean, the two names of one flag must agree, and a decision taken in an MCP chat is recorded `via: "mcp"`.
 */

let server: TestServer;
let http: ReturnType<typeof client>;
let rpc: TollgateGrpc;
let agent: string;
let approver: string;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
  rpc = new TollgateGrpc(server.grpcAddress!);
  agent = await server.token('mcp-gateway', ['agent']);
  approver = await server.token('ann', ['approver'], { name: 'Ann' });
});

afterAll(async () => {
  rpc?.close();
  await server?.stop();
});

async function proposeOne(conversationId: string, toolName: string, annotations: Record<string, unknown>) {
  expect((await http.post('/v1/conversations', agent, { id: conversationId })).status).toBe(201);
  return http.post(`/v1/conversations/${conversationId}/tool-calls`, agent, {
    toolCalls: [{ toolName, arguments: { path: '/tmp/a' }, annotations }],
  });
}

describe("MCP's annotation names in a REST proposal", () => {
  it('readOnlyHint lets an unregistered tool through at once, as isReadOnly does', async () => {
    const res = await proposeOne('mcp-ro', 'read_file', {
      title: 'Read a file',
      readOnlyHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(res.status).toBe(201);
    expect(res.body.toolCalls[0]).toMatchObject({
      status: 'approved',
      policy: { level: 'automatic', toolFlags: { isReadOnly: true } },
    });
  });

  it('destructiveHint holds the call for a person, as destructive does, and the flags seen are recorded in our names', async () => {
    const res = await proposeOne('mcp-destructive', 'delete_file', { readOnlyHint: false, destructiveHint: true });
    expect(res.status).toBe(201);
    const [call] = res.body.toolCalls;
    expect(call).toMatchObject({
      status: 'pending',
      policy: { level: 'confirm', toolFlags: { isReadOnly: false, destructive: true } },
    });
    expect(call.policy.toolFlags).not.toHaveProperty('destructiveHint');
  });

  it('the same value under both names is accepted; contradicting names are refused with the field named, and nothing is recorded', async () => {
    expect(
      (await proposeOne('mcp-agree', 'read_file', { isReadOnly: true, readOnlyHint: true })).body.toolCalls[0].status,
    ).toBe('approved');
    const refused = await proposeOne('mcp-contradict', 'delete_file', { destructive: false, destructiveHint: true });
    expect({ status: refused.status, code: refused.body.code }).toEqual({ status: 400, code: 'validation_failed' });
    expect(refused.body.errors).toEqual([
      { path: 'toolCalls[0].annotations.destructiveHint', message: 'contradicts destructive' },
    ]);
    expect((await http.get('/v1/conversations/mcp-contradict', agent)).body.toolCalls ?? []).toEqual([]);
  });

  it('refuses a hint that is not a boolean and a name MCP does not have', async () => {
    for (const annotations of [{ readOnlyHint: 'yes' }, { openWorldHint: 1 }, { title: 7 }, { sideEffectHint: true }]) {
      const res = await proposeOne(`mcp-bad-${Object.keys(annotations)[0]}`, 'read_file', annotations);
      expect({
        status: res.status,
        code: res.body.code,
        named: JSON.stringify(res.body.errors).includes(Object.keys(annotations)[0]),
      }).toEqual({ status: 400, code: 'validation_failed', named: true });
    }
  });
});

describe("MCP's annotation names over gRPC", () => {
  it('read_only_hint and destructive_hint mean what they mean over REST; a contradiction is INVALID_ARGUMENT', async () => {
    await rpc.call('StartConversation', { id: 'mcp-grpc' }, agent);
    const { toolCalls } = await rpc.call(
      'ProposeToolCalls',
      {
        conversationId: 'mcp-grpc',
        toolCalls: [
          { id: 'ro', toolName: 'list_dir', arguments: struct({}), annotations: { readOnlyHint: true, title: 'List' } },
          { id: 'rm', toolName: 'rm_dir', arguments: struct({}), annotations: { destructiveHint: true } },
        ],
      },
      agent,
    );
    expect(toolCalls.map((c: any) => c.status)).toEqual(['TOOL_CALL_STATUS_APPROVED', 'TOOL_CALL_STATUS_PENDING']);
    const f = await rpc.failure(
      'ProposeToolCalls',
      {
        conversationId: 'mcp-grpc',
        toolCalls: [{ toolName: 'x', arguments: struct({}), annotations: { isReadOnly: true, readOnlyHint: false } }],
      },
      agent,
    );
    expect({ code: f.code, tollgateCode: f.tollgateCode, field: f.violations?.[0].field }).toEqual({
      code: grpc.status.INVALID_ARGUMENT,
      tollgateCode: 'validation_failed',
      field: 'toolCalls[0].annotations.readOnlyHint',
    });
  });
});

describe('the mcp channel', () => {
  it('a person who decides in an MCP chat is recorded via mcp, over REST and over gRPC', async () => {
    const rest = (await proposeOne('mcp-via-rest', 'delete_file', { destructiveHint: true })).body.toolCalls[0];
    const decided = await http.post(
      `/v1/tool-calls/${rest.id}/decision`,
      approver,
      { decision: 'approve' },
      { 'X-Tollgate-Channel': 'mcp' },
    );
    // A destructive call is never approved from a chat: the chat relays, it does not prove a person saw the call.
    expect(decided.status).toBe(403);
    expect(decided.body).toMatchObject({ code: 'chat_approval_not_allowed', toolCallId: rest.id });
    const rejected = await http.post(
      `/v1/tool-calls/${rest.id}/decision`,
      approver,
      { decision: 'reject', reason: 'not from a chat' },
      { 'X-Tollgate-Channel': 'mcp' },
    );
    expect(rejected.status).toBe(200);
    expect(rejected.body.decision.by).toEqual({ id: 'ann', name: 'Ann', via: 'mcp', assurance: 'client' });

    const viaGrpc = (await proposeOne('mcp-via-grpc', 'delete_file', { destructiveHint: true })).body.toolCalls[0];
    const answer = await rpc.call(
      'DecideToolCall',
      { id: viaGrpc.id, decision: 'DECISION_KIND_REJECT', reason: 'not that one' },
      approver,
      { 'x-tollgate-channel': 'mcp' },
    );
    expect(answer.decision.by.via).toBe('CHANNEL_MCP');
    expect((await http.get(`/v1/tool-calls/${viaGrpc.id}`, agent)).body.decision).toMatchObject({
      outcome: 'rejected',
      by: { via: 'mcp' },
      reason: 'not that one',
    });
  });
});
