/**
 * The MCP gateway's Streamable HTTP session limits under concurrent initialize requests, through `handleHttp` (as a
 * server mounting it calls it, many requests at once), a real Tollgate and a real upstream MCP server: at most
 * `limits.sessionsPerUser` sessions of one person and `limits.sessions` in all exist or are starting at any moment,
 * and an initialize that fails gives its place back.
 */
import { Tollgate } from '@tollgate/sdk';
import { TollgateMcpGateway } from '../../src/integrations/mcp.js';
import { httpUpstream, type HttpUpstream } from '../../../../test/support/mcp-upstream.js';
import { startTestServer, type TestServer } from '../support.js';

let server: TestServer;
let files: HttpUpstream;
let agentToken: string;
let annToken: string;
let gateway: TollgateMcpGateway;

beforeAll(async () => {
  server = await startTestServer();
  agentToken = await server.token('mcp-gateway', ['agent']);
  annToken = await server.token('ann', ['approver'], { name: 'Ann' });
  files = await httpUpstream('files');
}, 60_000);

/** A gateway of its own for each test: no session of one test takes another's place. */
beforeEach(async () => {
  gateway = await TollgateMcpGateway.start({
    tollgate: new Tollgate({ url: server.url, token: agentToken }),
    upstreams: [{ name: 'files', url: files.url }],
    limits: { sessions: 3, sessionsPerUser: 2 },
  });
});
afterEach(() => gateway.close());
afterAll(async () => {
  await files?.close();
  await server?.stop();
});

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/** A Streamable HTTP POST with this person's token, as a server would hand it to `handleHttp`. */
async function post(
  token: string,
  body: unknown = initialize,
  headers: Record<string, string> = {},
): Promise<{ status: number; session: string | null; body: any }> {
  const request = new Request('http://localhost/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const response = await gateway.handleHttp(request, { clientAddress: '127.0.0.1' });
  const text = await response.text(); // an initialize's SSE stream ends with its answer
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // an SSE stream: the text as it is
  }
  return { status: response.status, session: response.headers.get('mcp-session-id'), body: parsed };
}

/** The sessions of these that still answer `tools/list`: the others were refused, or closed to make room. */
async function alive(token: string, sessions: string[]): Promise<string[]> {
  const answers = await Promise.all(
    sessions.map((id) =>
      post(
        token,
        { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
        { 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' },
      ),
    ),
  );
  return sessions.filter((_, i) => answers[i].status === 200);
}

describe('MCP sessions over HTTP', () => {
  it('hold both limits when one person sends twenty initializes at once: at most their share opens, and others still get in', async () => {
    const flo = await server.token('flo', ['approver'], { name: 'Flo' });
    const first = await post(flo); // Tollgate has vouched for Flo's token: the flood below is not slowed by asking it
    expect(first.status).toBe(200);

    const answers = await Promise.all(Array.from({ length: 20 }, () => post(flo)));
    const opened = [first.session!, ...answers.filter((a) => a.status === 200).map((a) => a.session!)];
    const open = await alive(flo, opened);
    expect(open.length).toBeGreaterThanOrEqual(1);
    expect(open.length).toBeLessThanOrEqual(2); // limits.sessionsPerUser
    // The rest were told to wait for the two starting: 429, never the gateway's 503 nor an error.
    const statuses = answers.map((a) => (a.status === 200 ? '200' : `${a.status} ${a.body.code}`));
    expect(new Set(statuses)).toEqual(new Set(['200', '429 rate_limited']));

    // limits.sessions is 3: Flo holds at most 2 of them, so Ann still gets a session.
    const ann = await post(annToken);
    expect(ann.status).toBe(200);
    expect(await alive(annToken, [ann.session!])).toEqual([ann.session]);
  });

  it('give the place of an initialize that fails back: failed starts count against no limit', async () => {
    const gus = await server.token('gus', ['approver'], { name: 'Gus' });
    // An initialize the transport refuses (it must accept SSE too): no session, and no place kept for one.
    const refused = await Promise.all(
      Array.from({ length: 5 }, () => post(gus, initialize, { accept: 'application/json' })),
    );
    expect(refused.map((a) => a.status)).toEqual(Array(5).fill(406));

    const again = await Promise.all([post(gus), post(gus)]);
    expect(again.map((a) => a.status)).toEqual([200, 200]);
    expect(
      await alive(
        gus,
        again.map((a) => a.session!),
      ),
    ).toHaveLength(2);
    expect((await post(annToken)).status).toBe(200);
  });
});
