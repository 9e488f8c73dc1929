import { client } from '../support/http';
import { struct, TollgateGrpc } from '../support/grpc';
import { startTestServer, TestServer } from '../support/server';

/** gRPC's DecideToolCall takes an always allow's `expires_in` and `args`, checked as over REST. */
let server: TestServer;
let rpc: TollgateGrpc;
let http: ReturnType<typeof client>;
let agent: string;
let admin: string;

beforeAll(async () => {
  server = await startTestServer();
  rpc = new TollgateGrpc(server.grpcAddress!);
  http = client(server.url);
  agent = await server.token('bot', ['agent']);
  admin = await server.token('root', ['admin']);
});

afterAll(async () => {
  rpc?.close();
  await server?.stop();
});

let n = 0;
async function pendingCall(args: Record<string, unknown>): Promise<any> {
  const conversationId = `grpc-g-${++n}`;
  await rpc.call('StartConversation', { id: conversationId }, agent);
  const { toolCalls } = await rpc.call(
    'ProposeToolCalls',
    { conversationId, toolCalls: [{ toolName: 'shell', arguments: struct(args) }] },
    agent,
  );
  expect(toolCalls[0].status).toBe('TOOL_CALL_STATUS_PENDING');
  return toolCalls[0];
}

it('an always allow with expires_in and args makes a grant with that lifetime, covering only matching calls', async () => {
  const call = await pendingCall({ cmd: 'ls /tmp' });
  const decided = await rpc.call(
    'DecideToolCall',
    {
      id: call.id,
      decision: 'DECISION_KIND_ALWAYS_ALLOW',
      scope: 'GRANT_SCOPE_TENANT',
      expiresIn: 600,
      args: { cmd: 'ls *' },
    },
    admin,
  );
  expect(decided.status).toBe('TOOL_CALL_STATUS_APPROVED');
  const [grant] = (await http.get('/v1/grants', admin)).body.items;
  expect(grant).toMatchObject({ scope: 'tenant', args: { cmd: 'ls *' }, createdBy: { id: 'root', via: 'grpc' } });
  expect(Date.parse(grant.expiresAt) - Date.parse(grant.createdAt)).toBe(600_000);

  const propose = async (cmd: string) => {
    const conversationId = `grpc-g-${++n}`;
    await rpc.call('StartConversation', { id: conversationId }, agent);
    return (
      await rpc.call(
        'ProposeToolCalls',
        { conversationId, toolCalls: [{ toolName: 'shell', arguments: struct({ cmd }) }] },
        agent,
      )
    ).toolCalls[0].status;
  };
  expect(await propose('ls -la')).toBe('TOOL_CALL_STATUS_APPROVED');
  expect(await propose('rm -rf /')).toBe('TOOL_CALL_STATUS_PENDING');
});

it('refuses a bad lifetime or pattern with INVALID_ARGUMENT, and the call stays pending', async () => {
  const call = await pendingCall({ cmd: 'ls' });
  for (const bad of [{ expiresIn: 90 * 86400 + 1 }, { args: { cmd: 'ls, path=/etc' } }]) {
    const f = await rpc.failure(
      'DecideToolCall',
      { id: call.id, decision: 'DECISION_KIND_ALWAYS_ALLOW', ...bad },
      admin,
    );
    expect(f.code).toBe(3); // INVALID_ARGUMENT
  }
  const approve = await rpc.failure(
    'DecideToolCall',
    { id: call.id, decision: 'DECISION_KIND_APPROVE', expiresIn: 60 },
    admin,
  );
  expect(approve.code).toBe(3);
  expect((await http.get(`/v1/tool-calls/${call.id}`, admin)).body.status).toBe('pending');
});

it('takes respond (the answer in decision.response), always_reject (a standing deny) and uses, as over REST', async () => {
  const call = await pendingCall({ cmd: 'reboot' });
  const answered = await rpc.call(
    'DecideToolCall',
    { id: call.id, decision: 'DECISION_KIND_RESPOND', response: 'Not during business hours' },
    admin,
  );
  expect(answered.status).toBe('TOOL_CALL_STATUS_REJECTED');
  expect(answered.decision.response).toBe('Not during business hours');
  const missing = await rpc.failure(
    'DecideToolCall',
    { id: (await pendingCall({ cmd: 'x' })).id, decision: 'DECISION_KIND_RESPOND' },
    admin,
  );
  expect(missing.code).toBe(3);

  const denied = await pendingCall({ cmd: 'shutdown now' });
  const r = await rpc.call(
    'DecideToolCall',
    {
      id: denied.id,
      decision: 'DECISION_KIND_ALWAYS_REJECT',
      scope: 'GRANT_SCOPE_TENANT',
      args: { cmd: 'shutdown *' },
    },
    admin,
  );
  expect(r.status).toBe('TOOL_CALL_STATUS_REJECTED');
  const [deny] = (await http.get('/v1/grants?effect=deny', admin)).body.items;
  expect(deny).toMatchObject({
    effect: 'deny',
    scope: 'tenant',
    pattern: 'shell(cmd=shutdown *)',
    createdBy: { via: 'grpc' },
  });

  const once = await pendingCall({ cmd: 'uptime' });
  await rpc.call(
    'DecideToolCall',
    {
      id: once.id,
      decision: 'DECISION_KIND_ALWAYS_ALLOW',
      scope: 'GRANT_SCOPE_TENANT',
      args: { cmd: 'uptime' },
      uses: 1,
    },
    admin,
  );
  const grants = (await http.get('/v1/grants?effect=allow&status=all', admin)).body.items;
  expect(grants.find((g: any) => g.sourceToolCallId === once.id)).toMatchObject({ uses: 1, usesLeft: 1 });
});
