/**
 * Who may use `tollgate mcp --http`, through the built command, the MCP SDK's own Client and a real Tollgate:
 * only people of the gateway's own tenant; a bounded number of sessions each; only the hosts and origins it
 * serves; and forged tokens stop at the gateway, counted per client address, instead of spending Tollgate's
 * failed-authentication limit for the gateway's address.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { client as http } from '../support/http';
import { httpUpstream, type HttpUpstream } from '../support/mcp-upstream';
import { BIN, exited, freePort } from '../support/process';
import { startTestServer, type TestServer } from '../support/server';
import { until } from '../support/wait';

/** Tollgate's own limit of failed authentications per address and 10 s, low enough for a test to reach. */
const TOLLGATE_FAILURES = 5;
/** The gateway's, per client address and minute: below Tollgate's, so what it forwards never reaches that. */
const GATEWAY_FAILURES = 3;

let server: TestServer;
let api: ReturnType<typeof http>;
let files: HttpUpstream;
let scratch: string;
let gateway: ChildProcess;
let url: string;
let port: number;
let stderr = '';
let annToken: string;
let beaToken: string;

beforeAll(async () => {
  server = await startTestServer({ authFailuresPer10s: TOLLGATE_FAILURES });
  api = http(server.url);
  annToken = await server.token('ann', ['admin'], { name: 'Ann' });
  beaToken = await server.token('bea', ['approver'], { name: 'Bea' });
  const agentToken = await server.token('mcp-gateway', ['agent']);
  files = await httpUpstream('files');
  scratch = mkdtempSync(join(tmpdir(), 'tollgate-mcp-http-'));
  const config = join(scratch, 'gateway.yaml');
  writeFileSync(
    config,
    `mcpServers:
  files: { url: "${files.url}", trustAnnotations: true }
http:
  allowedOrigins: [https://app.example.com]
limits: { sessions: 3, sessionsPerUser: 2, failedAuthPerMinute: ${GATEWAY_FAILURES} }
`,
  );
  port = await freePort();
  url = `http://127.0.0.1:${port}/mcp`;
  gateway = spawn(process.execPath, [BIN, 'mcp', '--config', config, '--http', `:${port}`], {
    env: { ...getDefaultEnvironment(), TOLLGATE_URL: server.url, TOLLGATE_TOKEN: agentToken },
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
  if (gateway) {
    gateway.kill('SIGTERM');
    await exited(gateway);
  }
  await files?.close();
  await server?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** Each test's sessions end with it (DELETE), so the next test starts with none open. */
const sessions: Array<{ client: Client; transport: StreamableHTTPClientTransport }> = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) {
    await s.transport.terminateSession().catch(() => undefined); // one the gateway closed already answers 404
    await s.client.close();
  }
});

/** An MCP client with this token (and any other headers), in a session of its own. */
async function connect(
  token: string,
  headers: Record<string, string> = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } },
  });
  const client = new Client({ name: 'http-test', version: '1.0.0' });
  await client.connect(transport);
  sessions.push({ client, transport });
  return { client, transport };
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** A raw request, with any Host: what a page rebinding a name to the gateway would send (`null`: no body). */
function post(
  headers: Record<string, string>,
  body: unknown = initialize,
  method = 'POST',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          host: `127.0.0.1:${port}`,
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // an SSE stream: the text as it is
          }
          resolve({ status: res.statusCode!, headers: res.headers, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body === null ? undefined : JSON.stringify(body));
  });
}

/** A well-formed token Tollgate did not sign (another key): only Tollgate can tell. */
const forged = (sub: string) =>
  new SignJWT({ roles: ['admin'], tenant: 'default' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode('not-the-server-secret-not-the-server-secret'));
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('tollgate mcp --http', () => {
  it("refuses another tenant's tokens whatever their roles: no session, nothing reaches the upstream", async () => {
    const eve = await server.token('eve', ['admin'], { name: 'Eve', tenant: 'other' });
    await expect(connect(eve)).rejects.toThrow(/403/);
    const raw = await post({ authorization: `Bearer ${eve}` });
    expect({ status: raw.status, code: raw.body.code, detail: raw.body.detail }).toEqual({
      status: 403,
      code: 'forbidden',
      detail: "The token is of another tenant than this gateway's: use a token of its own tenant",
    });
    const otherAgent = await server.token('their-agent', ['agent'], { tenant: 'other' });
    expect((await post({ authorization: `Bearer ${otherAgent}` })).status).toBe(403);
    expect(files.received).toEqual([]);

    // Its own tenant's person gets in, with the roles Tollgate gives them.
    const { client } = await connect(annToken);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('read_file');
  });

  it('answers only the hosts and origins it serves: a rebinding Host or a foreign page gets 403; its own origin and a listed one pass', async () => {
    const token = { authorization: `Bearer ${annToken}` };
    const rebound = await post({ ...token, host: `evil.example:${port}` });
    expect({ status: rebound.status, code: rebound.body.code }).toEqual({ status: 403, code: 'forbidden' });
    const foreign = await post({ ...token, origin: 'https://evil.example' });
    expect({ status: foreign.status, code: foreign.body.code }).toEqual({ status: 403, code: 'forbidden' });
    await expect(connect(annToken, { origin: 'http://localhost:1' })).rejects.toThrow(/403/);

    const own = await post({ ...token, host: `localhost:${port}`, origin: `http://localhost:${port}` });
    expect(own.status).toBe(200);
    expect(
      (await post({ ...token, 'mcp-session-id': String(own.headers['mcp-session-id']) }, null, 'DELETE')).status,
    ).toBe(200);
    const { client } = await connect(annToken, { origin: 'https://app.example.com' });
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it("caps one person's sessions: their least recently used idle one makes room, and others still get in", async () => {
    const first = await connect(beaToken);
    await connect(beaToken);
    await connect(beaToken); // Bea's third: her first session is closed for it
    const gone = await post(
      {
        authorization: `Bearer ${beaToken}`,
        'mcp-session-id': first.transport.sessionId!,
        'mcp-protocol-version': '2025-06-18',
      },
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
    );
    expect(gone.status).toBe(404);
    // limits.sessions is 3: Bea holds 2 of them, not all.
    const { client } = await connect(annToken);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('refuses obviously malformed tokens itself: expired or unsigned tokens never count against Tollgate', async () => {
    const expired = await server.token('ann', ['admin'], { ttl: '-1h' });
    const unsigned = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'ann', roles: ['admin'], exp: Math.floor(Date.now() / 1000) + 3600 })}.`;
    const answers = [];
    for (let i = 0; i < TOLLGATE_FAILURES + 3; i++)
      answers.push(await post({ authorization: `Bearer ${i % 2 ? expired : unsigned}` }));
    expect(answers.map((a) => a.status)).toEqual(Array(TOLLGATE_FAILURES + 3).fill(401));
    expect(answers.slice(0, 2).map((a) => a.body.detail)).toEqual([
      'The bearer token is not a valid Tollgate token: unsigned',
      'The bearer token is not a valid Tollgate token: expired',
    ]);

    // Tollgate counted none of them: a person it never saw before still gets in through the gateway.
    const cy = await server.token('cy', ['approver'], { name: 'Cy' });
    const { client } = await connect(cy);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('counts refused tokens per client address: past its limit, 429 with Retry-After; Tollgate is spared and open sessions go on', async () => {
    const { client } = await connect(annToken); // opened before the flood
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof post>> | undefined;
    for (let i = 0; i < 3 * GATEWAY_FAILURES; i++) {
      const answer = await post({ authorization: `Bearer ${await forged(`forger-${i}`)}` });
      statuses.push(answer.status);
      limited ??= answer.status === 429 ? answer : undefined;
    }
    // The first ones reach Tollgate and are refused there; past the limit they stop at the gateway.
    expect(statuses.slice(0, GATEWAY_FAILURES + 1)).toEqual([...Array(GATEWAY_FAILURES).fill(401), 429]);
    expect(new Set(statuses.slice(GATEWAY_FAILURES))).toEqual(new Set([429]));
    expect(limited!.body).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(Number(limited!.headers['retry-after'])).toBeGreaterThan(0);

    // The session opened before goes on, its token known to the gateway.
    expect(await client.callTool({ name: 'read_file', arguments: { path: '/after-the-flood' } })).toEqual({
      content: [{ type: 'text', text: 'files: contents of /after-the-flood' }],
    });
    // Tollgate saw three failures from this address, under its limit: a token it never saw is still let in.
    const dee = await server.token('dee', ['approver']);
    expect((await api.get('/v1/me', dee)).status).toBe(200);
  });
});
