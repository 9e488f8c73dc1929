import * as grpc from '@grpc/grpc-js';
import canonicalize from 'canonicalize';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { createHash } from 'node:crypto';
import { client } from '../support/http';
import { decodeFailure, fromValue, json, struct, TollgateGrpc, value } from '../support/grpc';
import { startTestServer, TestServer } from '../support/server';
import { eventually } from '../support/wait';

/**
 * The gRPC API (proto/tollgate/v1/tollgate.proto) through a real @grpc/grpc-js client: the approval loop from
 * start to report, decided over gRPC and recorded `via: grpc`; the same identity, roles and tenant walls as REST;
 * and each error told with its gRPC status, the `tollgate-code` trailer and a google.rpc.ErrorInfo.
 */

let server: TestServer;
let rpc: TollgateGrpc;
let http: ReturnType<typeof client>;
let agent: string;
let otherAgent: string;
let approver: string;
let admin: string;
let auditor: string;
let outsider: string;

beforeAll(async () => {
  server = await startTestServer();
  rpc = new TollgateGrpc(server.grpcAddress!);
  http = client(server.url);
  agent = await server.token('bot', ['agent'], { name: 'Support bot' });
  otherAgent = await server.token('bot-2', ['agent']);
  approver = await server.token('ann', ['approver'], { name: 'Ann' });
  admin = await server.token('root', ['admin']);
  auditor = await server.token('audrey', ['auditor']);
  outsider = await server.token('olga', ['admin', 'approver'], { tenant: 'elsewhere' });
  expect((await rpc.call('RegisterTool', { name: 'get_source', isReadOnly: true }, admin)).created).toBe(true);
});

afterAll(async () => {
  rpc?.close();
  await server?.stop();
});

/** A fresh conversation of `bot` holding one pending call of an unknown tool (unknown tools ask by default). */
async function pendingCall(conversationId: string, args: Record<string, unknown> = { id: 'src_1' }): Promise<any> {
  await rpc.call('StartConversation', { id: conversationId }, agent);
  const { toolCalls } = await rpc.call(
    'ProposeToolCalls',
    { conversationId, toolCalls: [{ toolName: 'archive_source', arguments: struct(args) }] },
    agent,
  );
  expect(toolCalls[0].status).toBe('TOOL_CALL_STATUS_PENDING');
  return toolCalls[0];
}

/** A call of `bot` that has been approved (and optionally claimed, and completed). */
async function approvedCall(
  conversationId: string,
  upTo: 'approved' | 'executed' | 'completed' = 'approved',
): Promise<any> {
  const call = await pendingCall(conversationId);
  await rpc.call('DecideToolCall', { id: call.id, decision: 'DECISION_KIND_APPROVE' }, approver);
  if (upTo !== 'approved') await rpc.call('ClaimExecution', { id: call.id }, agent);
  if (upTo === 'completed') await rpc.call('ReportResult', { id: call.id, outcome: 'RESULT_OUTCOME_SUCCEEDED' }, agent);
  return call;
}

/** A request sent as raw bytes; resolves to the error it must end with. */
function raw(bytes: Buffer, token?: string, method = 'GetToolCall'): Promise<grpc.ServiceError> {
  return new Promise((resolve, reject) =>
    rpc.client.makeUnaryRequest(
      `/tollgate.v1.Tollgate/${method}`,
      (b: Buffer) => b,
      (b: Buffer) => b,
      bytes,
      rpc.metadata(token),
      (e: grpc.ServiceError | null) => (e ? resolve(e) : reject(new Error('accepted'))),
    ),
  );
}

/**
 * A StartConversationRequest whose metadata Struct nests `depth` levels ({"a": {"a": …}}), encoded by hand (an
 * encoder would recurse as deep): Struct.fields = 1 (map entry: key = 1, value = 2), Value.struct_value = 5.
 */
function nestedMetadata(depth: number): Buffer {
  const varint = (n: number) => {
    const out: number[] = [];
    for (; n > 127; n = Math.floor(n / 128)) out.push((n % 128) | 128);
    return Buffer.from([...out, n]);
  };
  const prefixes: Buffer[] = [];
  let inner = 0; // the encoded length of the Struct inside
  for (let i = 0; i < depth; i++) {
    const value = Buffer.concat([Buffer.from([0x2a]), varint(inner)]); // Value { struct_value = inner }
    const entry = Buffer.concat([Buffer.from([0x0a, 0x01, 0x61, 0x12]), varint(value.length + inner)]); // key "a", value …
    const struct = Buffer.concat([Buffer.from([0x0a]), varint(entry.length + value.length + inner)]); // fields { … }
    prefixes.push(Buffer.concat([struct, entry, value]));
    inner += struct.length + entry.length + value.length;
  }
  return Buffer.concat([Buffer.from([0x22]), varint(inner), ...prefixes.reverse()]); // StartConversationRequest.metadata = 4
}

describe('the approval loop over gRPC', () => {
  it('starts, proposes, watches, decides (via grpc), claims with a receipt, and reports', async () => {
    const reg = await rpc.call(
      'RegisterTool',
      { name: 'delete_source', description: 'Delete a knowledge source', destructive: true },
      agent,
    );
    expect(reg).toMatchObject({
      created: true,
      tool: {
        name: 'delete_source',
        destructive: true,
        isReadOnly: false,
        registeredBy: { id: 'bot', kind: 'REGISTRANT_KIND_AGENT' },
      },
    });

    const started = await rpc.call(
      'StartConversation',
      {
        id: 'conv-1',
        user: { id: 'ann', roles: ['admin'], name: 'Ann' },
        title: 'Tidy the knowledge base',
        metadata: struct({ ticket: 4711 }),
      },
      agent,
    );
    expect(started.created).toBe(true);
    expect(started.conversation).toMatchObject({
      id: 'conv-1',
      agentId: 'bot',
      user: { id: 'ann', roles: ['admin'], name: 'Ann' },
      title: 'Tidy the knowledge base',
      status: 'CONVERSATION_STATUS_ACTIVE',
      pendingCount: 0,
    });
    expect(json(started.conversation.metadata)).toEqual({ ticket: 4711 });
    expect((await rpc.call('StartConversation', { id: 'conv-1' }, agent)).created).toBe(false);

    const args = { id: 'src_2', opts: { hard: true, n: 2.5, tags: ['a', null], nested: { deeper: [[1], {}] } } };
    const step = {
      conversationId: 'conv-1',
      toolCalls: [
        { id: 'call_1', toolName: 'get_source', arguments: struct({ id: 'src_2' }) },
        {
          id: 'call_2',
          toolName: 'delete_source',
          arguments: struct(args),
          reason: 'the user asked to delete it',
          confidence: 0.9,
          display: {
            title: 'Delete source',
            summary: 'Delete Handbook (src_2): 1,204 objects.',
            fields: [{ label: 'Objects', value: '1,204' }],
          },
        },
      ],
    };
    const proposal = await rpc.call('ProposeToolCalls', step, agent);
    expect(proposal.replay).toBe(false);
    expect(proposal.conversation).toMatchObject({
      id: 'conv-1',
      status: 'CONVERSATION_STATUS_BLOCKED',
      pendingCount: 1,
      toolCalls: [],
    });
    const [read, del] = proposal.toolCalls;
    expect(read).toMatchObject({
      externalId: 'call_1',
      status: 'TOOL_CALL_STATUS_APPROVED',
      decision: { outcome: 'DECISION_OUTCOME_APPROVED', by: { id: 'policy', via: 'CHANNEL_POLICY' } },
    });
    expect(read.policy).toMatchObject({ level: 'SUPERVISION_LEVEL_AUTOMATIC', toolFlags: { isReadOnly: true } });
    expect(del).toMatchObject({
      externalId: 'call_2',
      conversationId: 'conv-1',
      toolName: 'delete_source',
      status: 'TOOL_CALL_STATUS_PENDING',
      reason: 'the user asked to delete it',
      confidence: 0.9,
      display: {
        title: 'Delete source',
        summary: 'Delete Handbook (src_2): 1,204 objects.',
        fields: [{ label: 'Objects', value: '1,204' }],
      },
      policy: {
        level: 'SUPERVISION_LEVEL_CONFIRM',
        policyVersion: 0,
        reason: 'Tool flags: destructive → confirm',
        toolFlags: { destructive: true },
      },
      approval: { approvers: ['approver', 'admin'] },
    });
    expect(json(del.arguments)).toEqual(args);
    expect(Number(del.approval.expiresAt.seconds) * 1000).toBeGreaterThan(Number(del.createdAt.seconds) * 1000);
    expect(del.policy.rule).toBeUndefined(); // no rule decided: absent, as REST's null

    // The agent's retry of a lost answer is idempotent by its own ids.
    const again = await rpc.call('ProposeToolCalls', step, agent);
    expect(again.replay).toBe(true);
    expect(again.toolCalls.map((c: any) => c.id)).toEqual([read.id, del.id]);

    const watch = rpc.watch(del.id, agent);
    expect((await watch.received(1))[0]).toMatchObject({ id: del.id, status: 'TOOL_CALL_STATUS_PENDING' });

    const inbox = await rpc.call('ListApprovals', {}, approver);
    const item = inbox.items.find((i: any) => i.toolCall.id === del.id);
    expect(item.conversation).toMatchObject({
      id: 'conv-1',
      agentId: 'bot',
      user: { id: 'ann', name: 'Ann' },
      title: 'Tidy the knowledge base',
    });

    const edited = { id: 'src_2', dryRun: true };
    const { answer: decided, trailers } = await rpc.callWithTrailers(
      'DecideToolCall',
      { id: del.id, decision: 'DECISION_KIND_APPROVE', reason: 'confirmed with the owner', arguments: struct(edited) },
      approver,
      { 'x-request-id': 'grpc-decision-1' },
    );
    expect(trailers.get('x-request-id')).toEqual(['grpc-decision-1']);
    expect(decided).toMatchObject({
      status: 'TOOL_CALL_STATUS_APPROVED',
      decision: {
        outcome: 'DECISION_OUTCOME_APPROVED',
        by: { id: 'ann', name: 'Ann', via: 'CHANNEL_GRPC' },
        reason: 'confirmed with the owner',
      },
    });
    expect(json(decided.decision.editedArguments)).toEqual(edited);

    // The watch sent the call at once, then its decision, and ended.
    expect(await watch.ended).toEqual({ ok: true });
    expect(watch.messages.map((m) => m.status)).toEqual(['TOOL_CALL_STATUS_PENDING', 'TOOL_CALL_STATUS_APPROVED']);
    expect(watch.messages[1].decision.by.via).toBe('CHANNEL_GRPC');

    const claim = await rpc.call('ClaimExecution', { id: del.id }, agent);
    expect(claim.toolCall).toMatchObject({
      status: 'TOOL_CALL_STATUS_EXECUTED',
      execution: { by: { id: 'bot', via: 'CHANNEL_GRPC' } },
    });
    expect(json(claim.arguments)).toEqual(edited);
    const jwks = createLocalJWKSet((await http.get('/.well-known/jwks.json')).body);
    const { payload } = await jwtVerify(claim.receipt, jwks, { issuer: 'tollgate', typ: 'tollgate-receipt+jwt' });
    expect(payload).toMatchObject({
      tcid: del.id,
      conv: 'conv-1',
      tool: 'delete_source',
      approvedBy: 'ann',
      args: createHash('sha256').update(canonicalize(edited)!).digest('hex'),
    });

    const done = await rpc.call(
      'ReportResult',
      { id: del.id, outcome: 'RESULT_OUTCOME_SUCCEEDED', output: value({ deleted: 1204, log: ['ok'] }) },
      agent,
    );
    expect(done).toMatchObject({
      status: 'TOOL_CALL_STATUS_COMPLETED',
      result: { outcome: 'RESULT_OUTCOME_SUCCEEDED' },
    });
    expect(fromValue(done.result.output)).toEqual({ deleted: 1204, log: ['ok'] });
    expect((await rpc.call('GetToolCall', { id: del.id }, auditor)).status).toBe('TOOL_CALL_STATUS_COMPLETED');

    // REST and the audit trail tell the same story: a person's decision through gRPC, with the request's id.
    expect((await http.get(`/v1/tool-calls/${del.id}`, admin)).body.decision.by).toEqual({
      id: 'ann',
      name: 'Ann',
      via: 'grpc',
    });
    const events = (await http.get(`/v1/audit/events?toolCallId=${del.id}&type=ToolCallApproved`, admin)).body.events;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      correlationId: 'grpc-decision-1',
      actor: { id: 'ann', kind: 'person', via: 'grpc' },
      data: { via: 'grpc', decision: 'approve' },
    });

    // What the agent did over gRPC is recorded as done through gRPC too, start to report.
    const trail = (await http.get('/v1/audit/events?conversationId=conv-1', admin)).body.events.filter(
      (e: any) => e.actor.kind === 'agent',
    );
    expect(trail.map((e: any) => [e.type, e.actor.via])).toEqual([
      ['ConversationStarted', 'grpc'],
      ['ToolCallProposed', 'grpc'],
      ['ToolCallProposed', 'grpc'],
      ['ToolCallExecuted', 'grpc'],
      ['ToolCallCompleted', 'grpc'],
    ]);
    const registered = (await http.get('/v1/audit/events?type=ToolRegistered', admin)).body.events.find(
      (e: any) => e.actor.id === 'bot',
    );
    expect(registered.actor).toMatchObject({ kind: 'agent', via: 'grpc' });
    expect((await http.get(`/v1/tool-calls/${del.id}`, admin)).body.execution.by).toEqual({
      id: 'bot',
      name: 'Support bot',
      via: 'grpc',
    });
  });

  it('takes a rejection and an output that is not an object, and answers null-free JSON both ways', async () => {
    const call = await pendingCall('conv-reject');
    const rejected = await rpc.call(
      'DecideToolCall',
      { id: call.id, decision: 'DECISION_KIND_REJECT', reason: 'not today' },
      approver,
    );
    expect(rejected).toMatchObject({
      status: 'TOOL_CALL_STATUS_REJECTED',
      decision: { outcome: 'DECISION_OUTCOME_REJECTED', reason: 'not today', by: { via: 'CHANNEL_GRPC' } },
    });
    const ran = await approvedCall('conv-output', 'executed');
    const done = await rpc.call(
      'ReportResult',
      { id: ran.id, outcome: 'RESULT_OUTCOME_FAILED', output: value(['partial', 3]), error: 'disk full' },
      agent,
    );
    expect(done.result).toMatchObject({ outcome: 'RESULT_OUTCOME_FAILED', error: 'disk full' });
    expect(fromValue(done.result.output)).toEqual(['partial', 3]);
    expect((await http.get(`/v1/tool-calls/${ran.id}`, admin)).body.result).toMatchObject({
      outcome: 'failed',
      output: ['partial', 3],
      error: 'disk full',
    });
  });

  it('records the channel a person names in x-tollgate-channel (cli, web), and refuses slack, policy and the rest', async () => {
    const viaCli = await pendingCall('conv-cli');
    expect(
      (
        await rpc.call('DecideToolCall', { id: viaCli.id, decision: 'DECISION_KIND_APPROVE' }, approver, {
          'x-tollgate-channel': 'CLI',
        })
      ).decision.by.via,
    ).toBe('CHANNEL_CLI');
    const posing = await pendingCall('conv-posing');
    for (const channel of ['slack', 'policy', 'system', 'api', 'grpc, cli']) {
      const f = await rpc.failure('DecideToolCall', { id: posing.id, decision: 'DECISION_KIND_APPROVE' }, approver, {
        'x-tollgate-channel': channel,
      });
      expect({ code: f.code, tollgateCode: f.tollgateCode, field: f.violations?.[0].field }).toEqual({
        code: grpc.status.INVALID_ARGUMENT,
        tollgateCode: 'validation_failed',
        field: 'x-tollgate-channel',
      });
    }
    expect((await rpc.call('GetToolCall', { id: posing.id }, approver)).status).toBe('TOOL_CALL_STATUS_PENDING');
  });

  it('makes a standing grant with always_allow that lets the next call of the tool through', async () => {
    const first = await pendingCall('conv-grant');
    const d = await rpc.call(
      'DecideToolCall',
      { id: first.id, decision: 'DECISION_KIND_ALWAYS_ALLOW', scope: 'GRANT_SCOPE_CONVERSATION' },
      approver,
    );
    expect(d.status).toBe('TOOL_CALL_STATUS_APPROVED');
    await rpc.call('ClaimExecution', { id: first.id }, agent);
    const { toolCalls } = await rpc.call(
      'ProposeToolCalls',
      { conversationId: 'conv-grant', toolCalls: [{ toolName: 'archive_source', arguments: struct({ id: 'src_9' }) }] },
      agent,
    );
    expect(toolCalls[0]).toMatchObject({
      status: 'TOOL_CALL_STATUS_APPROVED',
      policy: { level: 'SUPERVISION_LEVEL_AUTOMATIC' },
    });
  });

  it('shows the halts in force to admins, approvers and auditors', async () => {
    expect(await rpc.call('GetStatus', {}, auditor)).toEqual({ tenant: 'default', halted: false, halts: [] });
    expect((await http.post('/v1/halt', admin, { scope: 'agent', id: 'bot-halted', reason: 'looping' })).status).toBe(
      200,
    );
    const status = await rpc.call('GetStatus', {}, approver);
    expect(status.halts).toEqual([
      expect.objectContaining({
        scope: 'HALT_SCOPE_AGENT',
        id: 'bot-halted',
        reason: 'looping',
        by: expect.objectContaining({ id: 'root', via: 'CHANNEL_API' }),
      }),
    ]);
    expect((await http.post('/v1/resume', admin, { scope: 'agent', id: 'bot-halted' })).status).toBe(200);
  });
});

describe('identity over gRPC', () => {
  it('refuses a call without a token, with a malformed one, and with one that does not verify: UNAUTHENTICATED', async () => {
    const bad = `${agent.slice(0, -4)}AAAA`;
    for (const md of [undefined, 'not a jwt!', bad]) {
      const f = await rpc.failure('GetStatus', {}, md);
      expect({ code: f.code, tollgateCode: f.tollgateCode, reason: f.info?.reason, domain: f.info?.domain }).toEqual({
        code: grpc.status.UNAUTHENTICATED,
        tollgateCode: 'unauthenticated',
        reason: 'unauthenticated',
        domain: 'tollgate',
      });
    }
  });

  it('never lets an agent token decide, whatever other roles it carries: PERMISSION_DENIED', async () => {
    const call = await pendingCall('conv-agent-decides');
    const agentAdmin = await server.token('bot', ['agent', 'admin']);
    for (const token of [agent, agentAdmin]) {
      const f = await rpc.failure('DecideToolCall', { id: call.id, decision: 'DECISION_KIND_APPROVE' }, token);
      expect({ code: f.code, tollgateCode: f.tollgateCode, details: f.details }).toEqual({
        code: grpc.status.PERMISSION_DENIED,
        tollgateCode: 'forbidden',
        details: 'Agent tokens cannot decide tool calls: approval comes from people',
      });
    }
    // Nor a bad decision from an agent: the right to decide is checked before the request.
    expect((await rpc.failure('DecideToolCall', { id: call.id }, agent)).code).toBe(grpc.status.PERMISSION_DENIED);
    expect((await rpc.failure('ListApprovals', {}, agent)).code).toBe(grpc.status.PERMISSION_DENIED);
    expect((await rpc.call('GetToolCall', { id: call.id }, admin)).status).toBe('TOOL_CALL_STATUS_PENDING');
  });

  it('checks the roles of each method as REST does', async () => {
    const cases: Array<[string, object, string]> = [
      ['StartConversation', {}, approver], // agents only
      ['RegisterTool', { name: 'x' }, approver], // agents and admins
      ['GetStatus', {}, agent], // admins, approvers, auditors
      ['DecideToolCall', { id: (await pendingCall('conv-auditor')).id, decision: 'DECISION_KIND_APPROVE' }, auditor],
    ];
    for (const [method, request, token] of cases) {
      const f = await rpc.failure(method, request, token);
      expect({ method, code: f.code, tollgateCode: f.tollgateCode }).toEqual({
        method,
        code: grpc.status.PERMISSION_DENIED,
        tollgateCode: 'forbidden',
      });
    }
  });

  it('keeps another agent out of a conversation: it is NOT_FOUND, before any fault of the request', async () => {
    const call = await pendingCall('conv-owned');
    expect(
      (await rpc.failure('ProposeToolCalls', { conversationId: 'conv-owned', toolCalls: [] }, otherAgent)).tollgateCode,
    ).toBe('not_found');
    expect((await rpc.failure('ClaimExecution', { id: call.id }, otherAgent)).tollgateCode).toBe('not_found');
    expect((await rpc.failure('GetToolCall', { id: call.id }, otherAgent)).tollgateCode).toBe('not_found');
    const watch = rpc.watch(call.id, otherAgent);
    expect(await watch.ended).toMatchObject({ ok: false, code: grpc.status.NOT_FOUND, tollgateCode: 'not_found' });
  });

  it('walls tenants off: another tenant’s calls are NOT_FOUND and never listed', async () => {
    const call = await pendingCall('conv-walled');
    for (const [method, request] of [
      ['GetToolCall', { id: call.id }],
      ['DecideToolCall', { id: call.id, decision: 'DECISION_KIND_APPROVE' }],
      ['DecideToolCall', { id: call.id, decision: 'DECISION_KIND_APPROVE', reason: 'x'.repeat(5000) }],
      ['ClaimExecution', { id: call.id }],
    ] as const) {
      const f = await rpc.failure(method, request, outsider);
      expect({ method, code: f.code, tollgateCode: f.tollgateCode }).toEqual({
        method,
        code: grpc.status.NOT_FOUND,
        tollgateCode: 'not_found',
      });
    }
    const watch = rpc.watch(call.id, outsider);
    expect(await watch.ended).toMatchObject({ ok: false, code: grpc.status.NOT_FOUND });
    expect((await rpc.call('ListApprovals', {}, outsider)).items).toEqual([]);
    expect(await rpc.call('GetStatus', {}, outsider)).toMatchObject({ tenant: 'elsewhere', halted: false });
    expect((await rpc.call('GetToolCall', { id: call.id }, approver)).status).toBe('TOOL_CALL_STATUS_PENDING');
  });
});

describe('errors over gRPC: the status that fits, `tollgate-code`, and google.rpc.ErrorInfo', () => {
  it('INVALID_ARGUMENT validation_failed: every fault as a google.rpc.BadRequest field violation', async () => {
    await rpc.call('StartConversation', { id: 'conv-invalid' }, agent);
    const f = await rpc.failure(
      'ProposeToolCalls',
      { conversationId: 'conv-invalid', toolCalls: [{ toolName: 'bad name!', confidence: 2 }] },
      agent,
    );
    expect(f).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      tollgateCode: 'validation_failed',
      info: { reason: 'validation_failed', domain: 'tollgate' },
    });
    expect(f.status).toEqual({ code: grpc.status.INVALID_ARGUMENT, message: f.details });
    expect(f.detailTypes).toEqual(['google.rpc.ErrorInfo', 'google.rpc.BadRequest']);
    expect(f.violations!.map((v) => v.field).sort()).toEqual([
      'toolCalls[0].arguments',
      'toolCalls[0].confidence',
      'toolCalls[0].toolName',
    ]);
    // The same request over REST names the same faults.
    const rest = await http.post('/v1/conversations/conv-invalid/tool-calls', agent, {
      toolCalls: [{ toolName: 'bad name!', confidence: 2 }],
    });
    expect(
      f
        .violations!.map((v) => ({ path: v.field, message: v.description }))
        .sort((a, b) => a.path.localeCompare(b.path)),
    ).toEqual([...rest.body.errors].sort((a: any, b: any) => a.path.localeCompare(b.path)));
  });

  it('INVALID_ARGUMENT for what JSON cannot hold, an empty proposal, and edits with a rejection', async () => {
    await rpc.call('StartConversation', { id: 'conv-nan' }, agent);
    const nan = await rpc.failure(
      'ProposeToolCalls',
      {
        conversationId: 'conv-nan',
        toolCalls: [{ toolName: 't', arguments: { fields: { x: { numberValue: Number.NaN } } } }],
      },
      agent,
    );
    expect({ code: nan.code, field: nan.violations?.[0].field }).toEqual({
      code: grpc.status.INVALID_ARGUMENT,
      field: 'toolCalls[0].arguments.x',
    });
    const kindless = await rpc.failure(
      'ProposeToolCalls',
      { conversationId: 'conv-nan', toolCalls: [{ toolName: 't', arguments: { fields: { x: {} } } }] },
      agent,
    );
    expect(kindless.violations?.[0].field).toBe('toolCalls[0].arguments.x');
    const nul = await rpc.failure(
      'ProposeToolCalls',
      { conversationId: 'conv-nan', toolCalls: [{ toolName: 't', arguments: struct({ x: 'a\u0000b' }) }] },
      agent,
    );
    expect(nul.tollgateCode).toBe('validation_failed');
    expect(
      (await rpc.failure('ProposeToolCalls', { conversationId: 'conv-nan', toolCalls: [] }, agent)).violations?.[0]
        .field,
    ).toBe('toolCalls');
    const call = await pendingCall('conv-edit-reject');
    const f = await rpc.failure(
      'DecideToolCall',
      { id: call.id, decision: 'DECISION_KIND_REJECT', arguments: struct({ id: 'x' }) },
      approver,
    );
    expect(f.violations).toEqual([{ field: 'arguments', description: 'is allowed with decision "approve" only' }]);
    expect((await rpc.failure('DecideToolCall', { id: call.id }, approver)).violations?.[0].field).toBe('decision');
  });

  it('INVALID_ARGUMENT validation_failed for a message that does not decode, RESOURCE_EXHAUSTED past 1 MiB', async () => {
    const garbled = await raw(Buffer.from([0x0f]), agent); // wire type 7: no such thing
    expect({ code: garbled.code, tollgateCode: garbled.metadata.get('tollgate-code')[0] }).toEqual({
      code: grpc.status.INVALID_ARGUMENT,
      tollgateCode: 'validation_failed',
    });
    // Authentication still comes first.
    expect((await raw(Buffer.from([0x0f]))).code).toBe(grpc.status.UNAUTHENTICATED);
    const huge = await rpc.failure('GetToolCall', { id: 'x'.repeat(1024 * 1024 + 1) }, agent);
    expect(huge.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
  });

  it('INVALID_ARGUMENT for JSON nested too deep, however deep, and goes on serving', async () => {
    for (const depth of [64, 60_000]) {
      const bytes = nestedMetadata(depth);
      expect(bytes.length).toBeLessThan(1024 * 1024); // within the size gRPC takes
      const f = decodeFailure(await raw(bytes, agent, 'StartConversation'));
      expect({ depth, code: f.code, tollgateCode: f.tollgateCode }).toEqual({
        depth,
        code: grpc.status.INVALID_ARGUMENT,
        tollgateCode: 'validation_failed',
      });
    }
    // As deep as REST takes ({"metadata": …} at 64 levels, the body included) goes through, both ways.
    let deepest: Record<string, unknown> = { leaf: true };
    for (let i = 1; i < 63; i++) deepest = { a: deepest };
    const { conversation } = await rpc.call('StartConversation', { id: 'conv-deep', metadata: struct(deepest) }, agent);
    expect(json(conversation.metadata)).toEqual(deepest);
    expect((await http.post('/v1/conversations', agent, { metadata: { a: deepest } })).status).toBe(400);
    expect((await http.post('/v1/conversations', agent, { id: 'conv-deep-rest', metadata: deepest })).status).toBe(201);
    expect(json((await rpc.call('StartConversation', { id: 'conv-deep-rest' }, agent)).conversation.metadata)).toEqual(
      deepest,
    );
  });

  it('INVALID_ARGUMENT payload_too_large for a result output over 64 KiB', async () => {
    const call = await approvedCall('conv-big-output', 'executed');
    const f = await rpc.failure(
      'ReportResult',
      { id: call.id, outcome: 'RESULT_OUTCOME_SUCCEEDED', output: value({ blob: 'x'.repeat(70_000) }) },
      agent,
    );
    expect(f).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      tollgateCode: 'payload_too_large',
      info: { reason: 'payload_too_large' },
    });
  });

  it('NOT_FOUND not_found for a call that does not exist', async () => {
    const f = await rpc.failure('GetToolCall', { id: 'tc_nope' }, admin);
    expect(f).toMatchObject({
      code: grpc.status.NOT_FOUND,
      tollgateCode: 'not_found',
      details: 'Tool call tc_nope not found',
      info: { reason: 'not_found', domain: 'tollgate', metadata: {} },
    });
  });

  it('PERMISSION_DENIED forbidden with requestedScope and allowedScope for a grant beyond the caller', async () => {
    const call = await pendingCall('conv-wide-grant');
    const f = await rpc.failure(
      'DecideToolCall',
      { id: call.id, decision: 'DECISION_KIND_ALWAYS_ALLOW', scope: 'GRANT_SCOPE_TENANT' },
      approver,
    );
    expect(f).toMatchObject({
      code: grpc.status.PERMISSION_DENIED,
      tollgateCode: 'forbidden',
      info: { reason: 'forbidden', metadata: { requestedScope: 'tenant', allowedScope: 'conversation' } },
    });
  });

  it('FAILED_PRECONDITION for each broken rule, with the problem’s members in ErrorInfo.metadata', async () => {
    const pending = await pendingCall('conv-rules');
    const blocked = await rpc.failure(
      'ProposeToolCalls',
      { conversationId: 'conv-rules', toolCalls: [{ toolName: 'other', arguments: struct({}) }] },
      agent,
    );
    expect(blocked).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, tollgateCode: 'conversation_blocked' });
    expect(JSON.parse(blocked.info!.metadata.pendingToolCallIds)).toEqual([pending.id]);

    const notApproved = await rpc.failure('ClaimExecution', { id: pending.id }, agent);
    expect(notApproved).toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      tollgateCode: 'not_approved',
      info: { metadata: { toolCallStatus: 'pending' } },
    });

    await rpc.call('DecideToolCall', { id: pending.id, decision: 'DECISION_KIND_REJECT', reason: 'no' }, approver);
    const decided = await rpc.failure('DecideToolCall', { id: pending.id, decision: 'DECISION_KIND_APPROVE' }, admin);
    expect(decided).toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      tollgateCode: 'already_decided',
      info: { metadata: { toolCallStatus: 'rejected' } },
    });
    expect(JSON.parse(decided.info!.metadata.decision)).toMatchObject({
      outcome: 'rejected',
      by: { id: 'ann', via: 'grpc' },
      reason: 'no',
    });

    const executed = await approvedCall('conv-rules-2', 'executed');
    expect(await rpc.failure('ClaimExecution', { id: executed.id }, agent)).toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      tollgateCode: 'already_executed',
    });
    const approved = await approvedCall('conv-rules-3');
    expect(
      await rpc.failure('ReportResult', { id: approved.id, outcome: 'RESULT_OUTCOME_SUCCEEDED' }, agent),
    ).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, tollgateCode: 'not_executed' });
    const completed = await approvedCall('conv-rules-4', 'completed');
    expect(
      await rpc.failure('ReportResult', { id: completed.id, outcome: 'RESULT_OUTCOME_SUCCEEDED' }, agent),
    ).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, tollgateCode: 'already_completed' });

    expect(await rpc.failure('StartConversation', { id: 'conv-rules' }, otherAgent)).toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      tollgateCode: 'idempotency_mismatch',
    });
    await rpc.call(
      'ProposeToolCalls',
      {
        conversationId: 'conv-rules-4',
        toolCalls: [{ id: 'ext-1', toolName: 'get_source', arguments: struct({ id: 1 }) }],
      },
      agent,
    );
    const mismatch = await rpc.failure(
      'ProposeToolCalls',
      {
        conversationId: 'conv-rules-4',
        toolCalls: [{ id: 'ext-1', toolName: 'get_source', arguments: struct({ id: 2 }) }],
      },
      agent,
    );
    expect(mismatch).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, tollgateCode: 'idempotency_mismatch' });
  });

  it('FAILED_PRECONDITION halted for a proposal or a claim in the scope of a halt', async () => {
    const approved = await approvedCall('conv-halted');
    expect(
      (await http.post('/v1/halt', admin, { scope: 'conversation', id: 'conv-halted', reason: 'incident drill' }))
        .status,
    ).toBe(200);
    const f = await rpc.failure(
      'ProposeToolCalls',
      { conversationId: 'conv-halted', toolCalls: [{ toolName: 'get_source', arguments: struct({}) }] },
      agent,
    );
    expect(f).toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      tollgateCode: 'halted',
      info: { reason: 'halted', metadata: { scope: 'conversation' } },
    });
    // The halt cancelled the approved call: claiming it is refused.
    expect((await rpc.failure('ClaimExecution', { id: approved.id }, agent)).code).toBe(
      grpc.status.FAILED_PRECONDITION,
    );
  });
});

describe('limits over gRPC', () => {
  let limited: TestServer; // TOLLGATE_RATE_LIMIT=3
  let bounded: TestServer; // one open wait per token, two failed authentications per address
  let lrpc: TollgateGrpc;
  let brpc: TollgateGrpc;

  beforeAll(async () => {
    limited = await startTestServer({ rateLimitPer10s: 3 });
    bounded = await startTestServer({ maxWaitsPerToken: 1, authFailuresPer10s: 2 });
    lrpc = new TollgateGrpc(limited.grpcAddress!);
    brpc = new TollgateGrpc(bounded.grpcAddress!);
  });

  afterAll(async () => {
    lrpc?.close();
    brpc?.close();
    await limited?.stop();
    await bounded?.stop();
  });

  it('RESOURCE_EXHAUSTED rate_limited past TOLLGATE_RATE_LIMIT for the token, with a google.rpc.RetryInfo', async () => {
    const auditorToken = await limited.token('audrey', ['auditor']);
    for (let i = 0; i < 3; i++) await lrpc.call('GetStatus', {}, auditorToken);
    const f = await lrpc.failure('GetStatus', {}, auditorToken);
    expect(f).toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
      tollgateCode: 'rate_limited',
      info: { reason: 'rate_limited' },
    });
    expect(f.retryDelaySeconds).toBeGreaterThanOrEqual(1);
    expect(Number(f.info!.metadata.retryAfter)).toBe(f.retryDelaySeconds);
    // Another token has its own budget.
    expect((await lrpc.call('GetStatus', {}, await limited.token('other', ['auditor']))).tenant).toBe('default');
  });

  it('RESOURCE_EXHAUSTED rate_limited past the open waits of a token; a watch that ends frees its slot', async () => {
    const bot = await bounded.token('bot', ['agent']);
    await brpc.call('StartConversation', { id: 'conv-waits' }, bot);
    const { toolCalls } = await brpc.call(
      'ProposeToolCalls',
      { conversationId: 'conv-waits', toolCalls: [{ toolName: 'unknown', arguments: struct({}) }] },
      bot,
    );
    const first = brpc.watch(toolCalls[0].id, bot);
    await first.received(1);
    const second = brpc.watch(toolCalls[0].id, bot);
    expect(await second.ended).toMatchObject({
      ok: false,
      code: grpc.status.RESOURCE_EXHAUSTED,
      tollgateCode: 'rate_limited',
      retryDelaySeconds: 1,
    });
    first.cancel();
    await first.ended;
    // The slot is free again once the server has seen the cancel.
    const third = await eventually(
      async () => {
        const w = brpc.watch(toolCalls[0].id, bot);
        return (await Promise.race([w.received(1).then(() => true), w.ended.then(() => false)])) ? w : undefined;
      },
      5000,
      'a watch taken once the first is cancelled',
    );
    expect(third.messages[0].status).toBe('TOOL_CALL_STATUS_PENDING');
    third.cancel();
  });

  it('RESOURCE_EXHAUSTED rate_limited for an address past TOLLGATE_AUTH_FAILURE_LIMIT, before the token is read; one budget with REST', async () => {
    const auditorToken = await bounded.token('audrey-2', ['auditor']);
    const boundedAuditor = await bounded.token('audrey-3', ['auditor']);
    expect(await brpc.call('GetStatus', {}, boundedAuditor)).toMatchObject({ halted: false }); // verified before the failures
    // One failure each way: REST and gRPC draw on the same budget of the address, so it is not twice the limit.
    expect((await client(bounded.url).get('/v1/status', 'forged.token.here')).status).toBe(401);
    expect((await brpc.failure('GetStatus', {}, 'forged.token.here')).code).toBe(grpc.status.UNAUTHENTICATED);
    const f = await brpc.failure('GetStatus', {}, auditorToken);
    expect(f).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED, tollgateCode: 'rate_limited' });
    expect(f.retryDelaySeconds).toBeGreaterThanOrEqual(1);
    const rest = await client(bounded.url).get('/v1/status', auditorToken);
    expect({ status: rest.status, code: rest.body.code }).toEqual({ status: 429, code: 'rate_limited' });
    // A token verified before the flood still passes: only failures count against the address.
    expect(await brpc.call('GetStatus', {}, boundedAuditor)).toMatchObject({ halted: false });
    expect((await client(bounded.url).get('/v1/status', boundedAuditor)).status).toBe(200);
  });
});
