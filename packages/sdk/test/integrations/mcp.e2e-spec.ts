/**
 * `@tollgate/sdk/mcp` through a real Tollgate, with real upstream MCP servers (one over stdio, one over Streamable
 * HTTP) and the MCP SDK's own Client: what the client gets back, what people see and decide, and what the
 * upstreams received (never a call nobody approved).
 */
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import type { CallToolResult, ElicitResult, Progress } from '@modelcontextprotocol/client';
import { Tollgate, type Approval, type ToolCall } from '@tollgate/sdk';
import { TollgateMcpGateway, type SessionIdentity } from '../../src/integrations/mcp.js';
import { client as http } from '../../../../test/support/http.js';
import {
  httpUpstream,
  stdioUpstream,
  type HttpUpstream,
  type Received,
  type StdioUpstream,
} from '../../../../test/support/mcp-upstream.js';
import { startTestServer, until, type TestServer } from '../support.js';

let server: TestServer;
let files: StdioUpstream;
let archive: HttpUpstream;
let gateway: TollgateMcpGateway;
let ann: Tollgate;
let annToken: string;
let agentToken: string;
/** The gateway's own client: its result reports go in the background, `flush()` waits for them. */
let gatewayClient: Tollgate;
let api: ReturnType<typeof http>;
const logs: string[] = [];
const ANN = { id: 'ann', name: 'Ann', roles: ['admin'] };

/** move_file may be decided by the conversation's user (the requester); the rest go by the tools' flags. */
const POLICY = {
  rules: [{ match: '*move_file', level: 'confirm' as const, approvers: ['requester' as const, 'admin' as const] }],
};

beforeAll(async () => {
  server = await startTestServer();
  api = http(server.url);
  annToken = await server.token('ann', ['admin'], { name: 'Ann' });
  agentToken = await server.token('mcp-gateway', ['agent'], { name: 'MCP gateway' });
  ann = new Tollgate({ url: server.url, token: annToken, channel: 'web' });
  await ann.putPolicy(POLICY);
  // An admin registered archive__fail_file before the gateway came: the admin's registration stands.
  await ann.registerTool('archive__fail_file', { description: 'registered by an admin', isReadOnly: true });
  [files, archive] = await Promise.all([stdioUpstream('files'), httpUpstream('archive')]);
  gateway = await TollgateMcpGateway.start({
    tollgate: (gatewayClient = new Tollgate({ url: server.url, token: agentToken })),
    // Both offer the same tools, so both are namespaced; only files is trusted with its annotations.
    upstreams: [
      {
        name: 'files',
        command: files.command,
        args: files.args,
        env: files.env,
        namespace: true,
        trustAnnotations: true,
      },
      { name: 'archive', url: archive.url, namespace: true },
    ],
    progressIntervalMs: 50,
    log: (level, message) => logs.push(`${level}: ${message}`),
  });
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await archive?.close();
  await server?.stop();
});

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

/** An MCP client in a session of its own; with `elicit`, it can be asked in the chat and answers with it. */
async function connect(
  identity: SessionIdentity = {},
  elicit?: (message: string) => Promise<ElicitResult>,
): Promise<Client> {
  const client = new Client(
    { name: 'test-client', version: '1.0.0' },
    { capabilities: elicit ? { elicitation: {} } : {} },
  );
  if (elicit) client.setRequestHandler('elicitation/create', (req) => elicit(req.params.message));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await gateway.server(identity).connect(serverSide);
  await client.connect(clientSide);
  clients.push(client);
  return client;
}

let n = 0;
const unique = (what: string) => `/srv/${what}-${++n}`;

/** The call of `toolName` with this argument as people see it pending in the inbox. */
async function pending(toolName: string, match: (args: Record<string, unknown>) => boolean): Promise<Approval> {
  let found: Approval | undefined;
  await until(
    async () => !!(found = (await ann.inbox().all()).find((a) => a.toolName === toolName && match(a.arguments))),
    20_000,
    `a pending ${toolName}`,
  );
  return found!;
}

const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
const receivedBy = (path: string): Received[] =>
  [...files.received(), ...archive.received].filter((r) => r.arguments.path === path || r.arguments.from === path);

describe('the MCP gateway', () => {
  it('passes the upstream tools through, prefixed on namespaced servers, and registers them with flags from trusted annotations only', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    expect(names).toEqual([
      'archive__delete_file',
      'archive__fail_file',
      'archive__move_file',
      'archive__read_file',
      'files__delete_file',
      'files__fail_file',
      'files__move_file',
      'files__read_file',
    ]);
    expect(tools.find((t) => t.name === 'files__read_file')).toMatchObject({
      title: 'Read a file',
      description: 'Read a file (files)',
      annotations: { readOnlyHint: true },
      inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
    });

    expect(await ann.getTool('files__read_file')).toMatchObject({
      isReadOnly: true,
      destructive: false,
      registeredBy: { id: 'mcp-gateway', kind: 'agent' },
      description: 'The MCP server files says: "Read a file (files)"',
    });
    expect(await ann.getTool('archive__delete_file')).toMatchObject({ isReadOnly: false, destructive: true });
    expect(await ann.getTool('files__move_file')).toMatchObject({ isReadOnly: false, destructive: false });
    // archive's annotations are not trusted: its read_file says readOnlyHint, and is destructive all the same.
    expect(await ann.getTool('archive__read_file')).toMatchObject({ isReadOnly: false, destructive: true });
  });

  it('runs a read-only tool at once and returns the upstream result unchanged', async () => {
    const client = await connect({ user: ANN });
    const path = unique('readme');
    const result = await client.callTool({ name: 'files__read_file', arguments: { path } });
    expect(result).toEqual({ content: [{ type: 'text', text: `files: contents of ${path}` }] });
    expect(receivedBy(path)).toEqual([{ server: 'files', tool: 'read_file', arguments: { path } }]);

    // Approved by the policy (read-only), claimed with exactly these arguments by the gateway's agent.
    const executed = (
      await ann.listAuditEvents({ toolName: 'files__read_file', type: 'ToolCallExecuted' })
    ).events.filter((e) => (e.data as { arguments: { path?: string } }).arguments.path === path);
    expect(executed).toHaveLength(1);
    expect(executed[0]).toMatchObject({
      actor: { id: 'mcp-gateway' },
      data: { approvedBy: 'policy', approvedVia: 'policy', edited: false },
    });
  });

  it("holds a destructive call for the inbox, sending progress meanwhile, and runs it with the approver's edited arguments", async () => {
    const client = await connect({ user: ANN });
    const path = unique('report');
    const edited = `${path}.bak`;
    const progress: Progress[] = [];
    const running = client.callTool(
      { name: 'archive__delete_file', arguments: { path } },
      {
        onprogress: (p) => progress.push(p),
      },
    );

    const call = await pending('archive__delete_file', (a) => a.path === path);
    await until(() => progress.length >= 2, 20_000, 'progress while waiting');
    expect(progress[0].message).toMatch(
      /archive__delete_file waits for approval in Tollgate \(Tool flags: destructive → confirm; approvers: approver, admin\)/,
    );
    expect(receivedBy(path)).toEqual([]); // nothing reaches the upstream before a person approves

    const decided = await api.post(
      `/v1/tool-calls/${call.id}/decision`,
      annToken,
      { decision: 'approve', reason: 'archived copy', arguments: { path: edited } },
      { 'x-tollgate-channel': 'web' },
    );
    expect(decided.status).toBe(200);
    const result = (await running) as CallToolResult;
    expect(result).toEqual({
      content: [{ type: 'text', text: `archive: deleted ${edited}` }],
      structuredContent: { deleted: edited },
    });
    expect(receivedBy(path)).toEqual([]);
    expect(receivedBy(edited)).toEqual([{ server: 'archive', tool: 'delete_file', arguments: { path: edited } }]);

    await gatewayClient.flush();
    const done = await ann.getToolCall(call.id);
    expect(done).toMatchObject({
      status: 'completed',
      arguments: { path },
      decision: { by: { id: 'ann', via: 'web' }, editedArguments: { path: edited } },
      result: { outcome: 'succeeded', output: { deleted: edited } },
    });
  });

  it('answers a rejection as an isError result saying who refused and why, and the upstream never sees the call', async () => {
    const client = await connect({ user: ANN });
    const path = unique('payroll');
    const running = client.callTool({ name: 'files__delete_file', arguments: { path } });
    const call = await pending('files__delete_file', (a) => a.path === path);
    await ann.inbox().reject(call.id, { reason: 'payroll stays' });

    expect(await running).toEqual({
      content: [
        { type: 'text', text: 'files__delete_file was rejected by Ann via web: payroll stays. The call did not run.' },
      ],
      isError: true,
    });
    expect(receivedBy(path)).toEqual([]);
  });

  it("returns an upstream isError result unchanged and reports the call failed; an admin's registration outranks the hints", async () => {
    expect(await ann.getTool('archive__fail_file')).toMatchObject({
      description: 'registered by an admin',
      registeredBy: { id: 'ann', kind: 'admin' },
    });
    expect(logs).toContain(
      "info: tool archive__fail_file: registered by an admin; their flags stand over the gateway's",
    );
    const client = await connect({ user: ANN });
    const path = unique('missing');
    const result = await client.callTool({ name: 'files__read_file', arguments: { path } });
    expect(result.isError).toBeUndefined();
    const failing = await client.callTool({ name: 'archive__fail_file', arguments: { path } });
    expect(failing).toEqual({ content: [{ type: 'text', text: `archive: no such file ${path}` }], isError: true });
    await gatewayClient.flush();
    const [event] = (
      await ann.listAuditEvents({ toolName: 'archive__fail_file', type: 'ToolCallCompleted' })
    ).events.slice(-1);
    expect(event.data).toMatchObject({ outcome: 'failed', error: `archive: no such file ${path}` });
  });

  it('a halt cancels the waiting call and refuses the next, both as isError results; nothing reaches the upstream', async () => {
    const client = await connect({ user: ANN });
    const path = unique('halted');
    const running = client.callTool({ name: 'files__delete_file', arguments: { path } });
    await pending('files__delete_file', (a) => a.path === path);
    const halted = await api.post('/v1/halt', annToken, { scope: 'tenant', reason: 'incident drill' });
    expect(halted.status).toBe(200);
    try {
      const result = (await running) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(
        /^files__delete_file was cancelled by Ann via api: incident drill\. The call did not run\.$/,
      );

      const next = (await client.callTool({ name: 'files__read_file', arguments: { path } })) as CallToolResult;
      expect(next.isError).toBe(true);
      expect(textOf(next)).toMatch(
        /^files__read_file was refused: Tollgate is halted \(.*\)\. The call did not run\.$/,
      );
      expect(receivedBy(path)).toEqual([]);
    } finally {
      expect((await api.post('/v1/resume', annToken, { scope: 'tenant' })).status).toBe(200);
    }
  });

  it('asks the requester in the chat and runs the call they approve there, recorded via mcp', async () => {
    const asked: string[] = [];
    const client = await connect({ user: ANN, userToken: annToken }, async (message) => {
      asked.push(message);
      return { action: 'accept', content: { approve: true, reason: 'yes, move it' } };
    });
    const from = unique('draft');
    const result = (await client.callTool({
      name: 'files__move_file',
      arguments: { from, to: '/srv/final' },
    })) as CallToolResult;
    expect(textOf(result)).toBe(`files: moved ${from} to /srv/final`);
    expect(asked).toEqual([
      expect.stringContaining(`Allow files__move_file with {"from":"${from}","to":"/srv/final"}?`),
    ]);
    expect(receivedBy(from)).toEqual([{ server: 'files', tool: 'move_file', arguments: { from, to: '/srv/final' } }]);

    const [event] = (
      await ann.listAuditEvents({ toolName: 'files__move_file', type: 'ToolCallApproved' })
    ).events.slice(-1);
    expect(event.data).toMatchObject({ via: 'mcp', approvedBy: 'ann', reason: 'yes, move it' });
  });

  it('a decline in the chat rejects the call via mcp, and the model reads who declined', async () => {
    const client = await connect({ user: ANN, userToken: annToken }, async () => ({ action: 'decline' }));
    const from = unique('keep');
    const result = (await client.callTool({
      name: 'archive__move_file',
      arguments: { from, to: '/srv/x' },
    })) as CallToolResult;
    expect(result).toEqual({
      content: [
        {
          type: 'text',
          text: 'archive__move_file was rejected by Ann via mcp: declined in the chat. The call did not run.',
        },
      ],
      isError: true,
    });
    expect(receivedBy(from)).toEqual([]);
  });

  it('the inbox decides first while the chat still asks: the inbox decision stands and the late answer changes nothing', async () => {
    let answer!: (r: ElicitResult) => void;
    let asked = false;
    const client = await connect({ user: ANN, userToken: annToken }, () => {
      asked = true;
      return new Promise<ElicitResult>((resolve) => (answer = resolve));
    });
    const from = unique('race');
    const running = client.callTool({ name: 'files__move_file', arguments: { from, to: '/srv/y' } });
    const call = await pending('files__move_file', (a) => a.from === from);
    await until(() => asked, 20_000, 'the question in the chat');
    expect(
      (
        await api.post(
          `/v1/tool-calls/${call.id}/decision`,
          annToken,
          { decision: 'approve', reason: 'from the inbox' },
          { 'x-tollgate-channel': 'web' },
        )
      ).status,
    ).toBe(200);

    const result = (await running) as CallToolResult;
    expect(textOf(result)).toBe(`files: moved ${from} to /srv/y`);
    answer({ action: 'accept', content: { approve: false } }); // too late: the gateway withdrew the question
    const done: ToolCall = await ann.getToolCall(call.id);
    expect(done.decision).toMatchObject({
      outcome: 'approved',
      by: { id: 'ann', via: 'web' },
      reason: 'from the inbox',
    });
  });

  it("without a person's token it never asks in the chat: the call waits for the inbox", async () => {
    let asked = false;
    const client = await connect({ user: ANN }, async () => {
      asked = true;
      return { action: 'accept', content: { approve: true } };
    });
    const from = unique('no-token');
    const running = client.callTool({ name: 'files__move_file', arguments: { from, to: '/srv/z' } });
    const call = await pending('files__move_file', (a) => a.from === from);
    expect(receivedBy(from)).toEqual([]);
    await ann.inbox().approve(call.id);
    expect(textOf((await running) as CallToolResult)).toBe(`files: moved ${from} to /srv/z`);
    expect(asked).toBe(false);
  });
});
