/**
 * `tollgate mcp` as clients run it: the built command over stdio (an MCP client's `command`) and over Streamable
 * HTTP with bearer auth, in front of real upstream MCP servers, gated by a real Tollgate.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult, Progress } from '@modelcontextprotocol/client';
import { client as http } from '../support/http';
import {
  httpUpstream,
  stdioUpstream,
  type HttpUpstream,
  type Received,
  type StdioUpstream,
} from '../support/mcp-upstream';
import { BIN, exited, freePort } from '../support/process';
import { startTestServer, type TestServer } from '../support/server';
import { until } from '../support/wait';

let server: TestServer;
let api: ReturnType<typeof http>;
let files: StdioUpstream;
let archive: HttpUpstream;
let scratch: string;
let config: string;
let annToken: string;
let beaToken: string;
let agentToken: string;

beforeAll(async () => {
  server = await startTestServer();
  api = http(server.url);
  annToken = await server.token('ann', ['admin'], { name: 'Ann' });
  beaToken = await server.token('bea', ['approver'], { name: 'Bea' });
  agentToken = await server.token('mcp-gateway', ['agent']);
  expect(
    (
      await api.put('/v1/policy', annToken, {
        rules: [{ match: '*move_file', level: 'confirm', approvers: ['requester', 'admin'] }],
      })
    ).status,
  ).toBe(200);
  [files, archive] = await Promise.all([stdioUpstream('files'), httpUpstream('archive')]);
  scratch = mkdtempSync(join(tmpdir(), 'tollgate-mcp-e2e-'));
  config = join(scratch, 'gateway.yaml');
  // The client's config passes TOLLGATE_URL and TOLLGATE_TOKEN in the environment; the user's token too.
  writeFileSync(
    config,
    `# the gateway of the e2e test
user:
  id: ann
  name: Ann
  roles: [admin]
  token: \${ANN_TOKEN}
mcpServers:
  files:
    command: ${JSON.stringify(files.command)}
    args: ${JSON.stringify(files.args)}
    env: ${JSON.stringify(files.env)}
    namespace: true
    trustAnnotations: true
  archive:
    type: http
    url: ${archive.url}
    namespace: true
    trustAnnotations: true
progressIntervalSeconds: 1
`,
  );
}, 60_000);

afterAll(async () => {
  await archive?.close();
  await server?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const gatewayEnv = (extra: Record<string, string> = {}) => ({
  ...getDefaultEnvironment(),
  TOLLGATE_URL: server.url,
  TOLLGATE_TOKEN: agentToken,
  ...extra,
});
const receivedBy = (path: string): Received[] =>
  [...files.received(), ...archive.received].filter((r) => r.arguments.path === path || r.arguments.from === path);
const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

/** Runs the command to its end without blocking this process: the Tollgate it talks to runs in here. */
async function run(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const status = await exited(child);
  return { status, stdout, stderr };
}

async function pendingCall(
  toolName: string,
  match: (a: Record<string, unknown>) => boolean,
): Promise<{ id: string; conversationId: string }> {
  let found: { id: string; conversationId: string } | undefined;
  await until(
    async () => {
      const r = await api.get('/v1/approvals', annToken);
      found = r.body.items.find(
        (a: { toolName: string; arguments: Record<string, unknown> }) => a.toolName === toolName && match(a.arguments),
      );
      return !!found;
    },
    20_000,
    `a pending ${toolName}`,
  );
  return found!;
}

describe('tollgate mcp --config', () => {
  it('refuses a bad config with exit 2, naming every fault', async () => {
    const bad = join(scratch, 'bad.yaml');
    writeFileSync(
      bad,
      'mcpServers:\n  files: { command: node, url: "http://127.0.0.1:1/mcp" }\n  web: { url: "ftp://example.com" }\nlimits: { pendingCallsPerSession: 0 }\n',
    );
    const r = await run(['mcp', '--config', bad], gatewayEnv());
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      'mcpServers.files: give either command (a stdio server) or url (a Streamable HTTP server)',
    );
    expect(r.stderr).toContain('mcpServers.web.url: must be an http(s) URL, got "ftp://example.com"');
    expect(r.stderr).toContain('limits.pendingCallsPerSession: must be a whole number from 1 to 64');

    const unset = await run(['mcp', '--config', config], gatewayEnv());
    expect(unset.status).toBe(2);
    expect(unset.stderr).toContain('user.token: ${ANN_TOKEN} is not set in the environment');

    const wrongToken = await run(
      ['mcp', '--config', config],
      gatewayEnv({ ANN_TOKEN: annToken, TOLLGATE_TOKEN: 'not-a-token' }),
    );
    expect(wrongToken.status).toBe(2);
    expect(wrongToken.stderr).toMatch(/Tollgate refused the gateway's token \(unauthenticated: /);
    expect(wrongToken.stderr).not.toContain(annToken);

    // Two servers offering read_file, neither namespaced: no silent renames, the start stops naming both.
    const clash = join(scratch, 'clash.yaml');
    writeFileSync(
      clash,
      `mcpServers:\n  files: { command: ${JSON.stringify(files.command)}, args: ${JSON.stringify(files.args)}, env: ${JSON.stringify(files.env)} }\n  archive: { url: "${archive.url}" }\n`,
    );
    const clashed = await run(['mcp', '--config', clash], gatewayEnv());
    expect(clashed.status).toBe(2);
    expect(clashed.stderr).toContain(
      'tollgate: two tools would be called read_file: "read_file" of upstream files and "read_file" of upstream archive; set namespace: true on one of them',
    );

    // Another person's token as Ann's: the client would decide in the chat as Bea.
    const wrongUser = await run(['mcp', '--config', config], gatewayEnv({ ANN_TOKEN: beaToken }));
    expect({ status: wrongUser.status, stderr: wrongUser.stderr }).toEqual({
      status: 2,
      stderr: "tollgate: user.token is bea's, not ann's (user.id): give ann's own token, or none\n",
    });
  });

  it('over stdio: a read runs at once, a deletion waits for the inbox with progress, and the requester decides in the chat via mcp', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--config', config],
      env: gatewayEnv({ ANN_TOKEN: annToken }),
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d) => (stderr += d));
    const client = new Client({ name: 'stdio-test', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (req) => {
      asked.push(req.params.message);
      return { action: 'accept', content: { approve: true, reason: 'my own file' } };
    });
    await client.connect(transport);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('files__read_file');
      expect(names).toContain('archive__read_file');

      const read = (await client.callTool({
        name: 'archive__read_file',
        arguments: { path: '/stdio/a' },
      })) as CallToolResult;
      expect(textOf(read)).toBe('archive: contents of /stdio/a');

      const progress: Progress[] = [];
      const deleting = client.callTool(
        { name: 'files__delete_file', arguments: { path: '/stdio/b' } },
        {
          onprogress: (p) => progress.push(p),
        },
      );
      const call = await pendingCall('files__delete_file', (a) => a.path === '/stdio/b');
      await until(() => progress.length > 0, 20_000, 'progress');
      expect(receivedBy('/stdio/b')).toEqual([]);
      const conversation = await api.get(`/v1/conversations/${call.conversationId}`, annToken);
      expect(conversation.body).toMatchObject({
        agentId: 'mcp-gateway',
        user: { id: 'ann', name: 'Ann', roles: ['admin'] },
        title: 'MCP session (the client says it is "stdio-test")',
      });
      expect(
        (
          await api.post(
            `/v1/tool-calls/${call.id}/decision`,
            annToken,
            { decision: 'approve' },
            { 'x-tollgate-channel': 'web' },
          )
        ).status,
      ).toBe(200);
      expect(textOf((await deleting) as CallToolResult)).toBe('files: deleted /stdio/b');
      expect(receivedBy('/stdio/b')).toEqual([
        { server: 'files', tool: 'delete_file', arguments: { path: '/stdio/b' } },
      ]);

      const moved = (await client.callTool({
        name: 'files__move_file',
        arguments: { from: '/stdio/c', to: '/stdio/d' },
      })) as CallToolResult;
      expect(textOf(moved)).toBe('files: moved /stdio/c to /stdio/d');
      expect(asked).toHaveLength(1);
      const approved = await api.get('/v1/audit/events?toolName=files__move_file&type=ToolCallApproved', annToken);
      expect(approved.body.events.at(-1).data).toMatchObject({ via: 'mcp', approvedBy: 'ann', reason: 'my own file' });
    } finally {
      await client.close();
    }
    expect(stderr).toMatch(/tollgate mcp: 8 tools from files, archive, gated by http:\/\/127\.0\.0\.1:\d+/);
    expect(stderr).not.toContain(agentToken);
    expect(stderr).not.toContain(annToken);
  });

  describe('over Streamable HTTP (--http)', () => {
    let gateway: ChildProcess;
    let url: string;
    let stderr = '';

    beforeAll(async () => {
      const port = await freePort();
      url = `http://127.0.0.1:${port}/mcp`;
      gateway = spawn(process.execPath, [BIN, 'mcp', '--config', config, '--http', `:${port}`], {
        env: gatewayEnv({ ANN_TOKEN: annToken }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      gateway.stderr!.on('data', (d) => (stderr += d));
      await until(
        () => stderr.includes('serving Streamable HTTP on') || gateway.exitCode !== null,
        30_000,
        'the gateway listening',
      );
      expect(stderr).toContain(`serving Streamable HTTP on ${url}`);
    }, 60_000);

    afterAll(async () => {
      gateway.kill('SIGTERM');
      expect(await exited(gateway)).toBe(0);
    });

    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const post = (headers: Record<string, string>, body: unknown = initialize) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(body),
      });

    it('answers 401 without a bearer token or with one Tollgate refuses, and 403 to an agent token', async () => {
      const none = await post({});
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Bearer');
      expect(await none.json()).toMatchObject({ status: 401, code: 'unauthenticated' });
      expect((await post({ authorization: 'Bearer nope.nope.nope' })).status).toBe(401);
      const agent = await post({ authorization: `Bearer ${agentToken}` });
      expect(agent.status).toBe(403);
      expect(await agent.json()).toMatchObject({ code: 'forbidden' });
    });

    it("makes the bearer token's person the end user, who decides in the chat via mcp; another person cannot use the session", async () => {
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${beaToken}` } },
      });
      const client = new Client({ name: 'http-test', version: '1.0.0' }, { capabilities: { elicitation: {} } });
      client.setRequestHandler('elicitation/create', async () => ({
        action: 'accept',
        content: { approve: false, reason: 'not that one' },
      }));
      await client.connect(transport);
      try {
        const running = client.callTool({ name: 'archive__move_file', arguments: { from: '/http/a', to: '/http/b' } });
        const result = (await running) as CallToolResult;
        expect(result).toEqual({
          content: [
            {
              type: 'text',
              text: 'archive__move_file was rejected by Bea via mcp: not that one. The call did not run.',
            },
          ],
          isError: true,
        });
        expect(receivedBy('/http/a')).toEqual([]);

        const rejected = await api.get('/v1/audit/events?toolName=archive__move_file&type=ToolCallRejected', annToken);
        const event = rejected.body.events.at(-1);
        expect(event).toMatchObject({ actor: { id: 'bea', via: 'mcp' }, data: { via: 'mcp', reason: 'not that one' } });
        const conversation = await api.get(`/v1/conversations/${event.conversationId}`, annToken);
        expect(conversation.body.user).toMatchObject({ id: 'bea', name: 'Bea', roles: ['approver'] });

        // Ann's valid token does not open Bea's session.
        const list = { jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} };
        const hijack = await post(
          {
            authorization: `Bearer ${annToken}`,
            'mcp-session-id': transport.sessionId!,
            'mcp-protocol-version': '2025-06-18',
          },
          list,
        );
        expect(hijack.status).toBe(404);
      } finally {
        await client.close();
      }
    });
  });
});
