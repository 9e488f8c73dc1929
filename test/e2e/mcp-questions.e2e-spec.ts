/**
 * The MCP gateway's built-in `ask_human` tool, through the MCP SDK's own Client, a real gateway, a real upstream
 * MCP server and a real Tollgate: listed only when the config turns it on; the question waits in Tollgate's inbox
 * (progress meanwhile) and its answer is the tool's result; the session's user may answer in the chat
 * (elicitation, recorded `via: "mcp"`), where the first answer wins; a question nobody answers is an `isError`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import type { CallToolResult, ElicitRequest, ElicitResult, Progress } from '@modelcontextprotocol/client';
import { parseGatewayConfig, TollgateMcpGateway, type SessionIdentity } from '../../packages/sdk/src/integrations/mcp';
// The gateway's own Tollgate class (it checks `instanceof`), not the built package's.
import { Tollgate } from '../../packages/sdk/src/tollgate';
import { client as http } from '../support/http';
import { httpUpstream, type HttpUpstream } from '../support/mcp-upstream';
import { BIN } from '../support/process';
import { startTestServer, type TestServer } from '../support/server';
import { eventually } from '../support/wait';

let server: TestServer;
let api: ReturnType<typeof http>;
let archive: HttpUpstream;
let annToken: string;
let beaToken: string;
let agentToken: string;
/** askHuman off (the default), on from a config file, and on with questions that expire after a second. */
let plain: TollgateMcpGateway;
let asking: TollgateMcpGateway;
let hurried: TollgateMcpGateway;
const ANN = { id: 'ann', name: 'Ann', roles: ['admin'] };

beforeAll(async () => {
  server = await startTestServer({ sweepIntervalMs: 100 });
  api = http(server.url);
  annToken = await server.token('ann', ['admin'], { name: 'Ann' });
  beaToken = await server.token('bea', ['approver'], { name: 'Bea' });
  agentToken = await server.token('mcp-gateway', ['agent']);
  archive = await httpUpstream('archive');
  const start = (config: Record<string, unknown>) => {
    const c = parseGatewayConfig(
      { mcpServers: { archive: { url: archive.url } }, progressIntervalSeconds: 1, ...config },
      { TOLLGATE_URL: server.url, TOLLGATE_TOKEN: agentToken },
    );
    return TollgateMcpGateway.start({
      tollgate: new Tollgate({ url: c.tollgate.url, token: c.tollgate.token }),
      upstreams: c.upstreams,
      ...(c.askHuman ? { askHuman: c.askHuman } : {}),
      progressIntervalMs: c.progressIntervalSeconds * 1000,
    });
  };
  [plain, asking, hurried] = await Promise.all([
    start({}),
    start({ askHuman: true }),
    start({ askHuman: { timeoutSeconds: 1 } }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([plain?.close(), asking?.close(), hurried?.close()]);
  await archive?.close();
  await server?.stop();
});

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

/** An MCP client in a session of its own; with `elicit`, it can be asked in the chat and answers with it. */
async function connect(
  gateway: TollgateMcpGateway,
  identity: SessionIdentity = {},
  elicit?: (req: ElicitRequest) => Promise<ElicitResult>,
): Promise<Client> {
  const client = new Client(
    { name: 'questions-test', version: '1.0.0' },
    { capabilities: elicit ? { elicitation: {} } : {} },
  );
  if (elicit) client.setRequestHandler('elicitation/create', (req) => elicit(req));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await gateway.server(identity).connect(serverSide);
  await client.connect(clientSide);
  clients.push(client);
  return client;
}

/** The pending question with this text, as an approver sees it in the inbox. */
function pendingQuestion(
  text: string,
  token = annToken,
): Promise<{ id: string; conversationId: string; askTo: string[] }> {
  return eventually(
    async () =>
      (await api.get('/v1/questions?status=pending', token)).body.items.find((q: { text: string }) => q.text === text),
    20_000,
    `the question "${text}" pending`,
  );
}

const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

describe('the ask_human tool of the MCP gateway', () => {
  it('is listed with the upstream tools only when the config turns askHuman on', async () => {
    const off = (await (await connect(plain)).listTools()).tools.map((t) => t.name);
    expect(off).toContain('read_file');
    expect(off).not.toContain('ask_human');

    const { tools } = await (await connect(asking)).listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['read_file', 'delete_file', 'ask_human']));
    expect(tools.find((t) => t.name === 'ask_human')).toMatchObject({
      inputSchema: {
        type: 'object',
        required: ['question'],
        properties: { question: { type: 'string' }, choices: { type: 'array' } },
      },
    });

    // Off, the name is nobody's tool.
    await expect(
      (await connect(plain)).callTool({ name: 'ask_human', arguments: { question: 'Anyone?' } }),
    ).rejects.toThrow(/Unknown tool: ask_human/);
  });

  it("asks in the session's conversation, sends progress while it waits, and returns the answer a person gave in the inbox", async () => {
    const client = await connect(asking, { user: ANN });
    const progress: Progress[] = [];
    const text = 'Proceed with the EU or the US region?';
    const answering = client.callTool(
      { name: 'ask_human', arguments: { question: text, choices: ['EU', 'US'] } },
      { onprogress: (p) => progress.push(p) },
    );

    const q = await pendingQuestion(text);
    expect(q.askTo).toEqual(['requester', 'approver', 'admin']);
    const conversation = await api.get(`/v1/conversations/${q.conversationId}`, annToken);
    expect(conversation.body).toMatchObject({
      agentId: 'mcp-gateway',
      user: { id: 'ann' },
      title: 'MCP session (the client says it is "questions-test")',
    });
    await eventually(() => (progress.length ? true : undefined), 20_000, 'progress while waiting');
    expect(progress[0].message).toBe(`Waiting for a person to answer in Tollgate: ${text}`);

    // Bea is an approver, not the session's user: she answers in the web inbox.
    const answered = await api.post(
      `/v1/questions/${q.id}/answer`,
      beaToken,
      { answer: 'EU' },
      { 'x-tollgate-channel': 'web' },
    );
    expect(answered.status).toBe(200);
    expect(await answering).toEqual({ content: [{ type: 'text', text: 'EU' }] });
  });

  it("asks the session's user in the chat too, and records their answer via mcp", async () => {
    const asked: ElicitRequest['params'][] = [];
    const client = await connect(asking, { user: ANN, userToken: annToken }, async (req) => {
      asked.push(req.params);
      return { action: 'accept', content: { answer: 'Friday' } };
    });
    const text = 'Which day should the report go out?';
    const result = (await client.callTool({ name: 'ask_human', arguments: { question: text } })) as CallToolResult;
    expect(result).toEqual({ content: [{ type: 'text', text: 'Friday' }] });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      message: text,
      requestedSchema: { properties: { answer: { type: 'string' } }, required: ['answer'] },
    });

    const found = await api.get('/v1/questions?status=answered', annToken);
    const q = found.body.items.find((x: { text: string }) => x.text === text);
    expect(q).toMatchObject({ status: 'answered', answer: { text: 'Friday', by: { id: 'ann', via: 'mcp' } } });
    const events = await api.get(`/v1/audit/events?conversationId=${q.conversationId}&type=QuestionAnswered`, annToken);
    expect(events.body.events).toHaveLength(1);
    expect(events.body.events[0].data).toMatchObject({ questionId: q.id, by: 'ann', via: 'mcp', answer: 'Friday' });
  });

  it('offers the choices in the chat; an answer already given in the inbox wins over the one in the chat', async () => {
    const text = 'Bill which account?';
    let chatOffered: unknown;
    const client = await connect(asking, { user: ANN, userToken: annToken }, async (req) => {
      chatOffered = (req.params as unknown as { requestedSchema: { properties: { answer: unknown } } }).requestedSchema
        .properties.answer;
      // While the chat asks, Bea answers in the inbox first; Ann's later answer is refused (409) and hers stands.
      const q = await pendingQuestion(text, beaToken);
      expect(
        (
          await api.post(
            `/v1/questions/${q.id}/answer`,
            beaToken,
            { answer: 'acme-eu' },
            { 'x-tollgate-channel': 'web' },
          )
        ).status,
      ).toBe(200);
      return { action: 'accept', content: { answer: 'acme-us' } };
    });
    const result = (await client.callTool({
      name: 'ask_human',
      arguments: { question: text, choices: ['acme-eu', 'acme-us'] },
    })) as CallToolResult;
    expect(result).toEqual({ content: [{ type: 'text', text: 'acme-eu' }] });
    expect(chatOffered).toMatchObject({ type: 'string', enum: ['acme-eu', 'acme-us'] });
    const found = (await api.get('/v1/questions?status=answered', annToken)).body.items.find(
      (x: { text: string }) => x.text === text,
    );
    expect(found.answer).toMatchObject({ text: 'acme-eu', by: { id: 'bea', via: 'web' } });
    const events = await api.get(
      `/v1/audit/events?conversationId=${found.conversationId}&type=QuestionAnswered`,
      annToken,
    );
    expect(events.body.events).toHaveLength(1);
  });

  it('answers isError when nobody answers before the question expires', async () => {
    const client = await connect(hurried, { user: ANN });
    const text = 'Is anyone there?';
    const result = (await client.callTool({ name: 'ask_human', arguments: { question: text } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      `Nobody answered the question in time (it expired after 1 s): "${text}". Go on without the answer, or tell the user.`,
    );
    const expired = (await api.get('/v1/questions?status=expired', annToken)).body.items.find(
      (x: { text: string }) => x.text === text,
    );
    expect(expired).toMatchObject({ status: 'expired', timeoutSeconds: 1 });
  });

  it('reads askHuman from the config: true, or { timeoutSeconds }; anything else is a fault named with its path', () => {
    const parse = (askHuman: unknown) =>
      parseGatewayConfig({ mcpServers: { archive: { url: archive.url } }, askHuman }, { TOLLGATE_TOKEN: 't' });
    expect(parse(true).askHuman).toEqual({});
    expect(parse({ timeoutSeconds: 600 }).askHuman).toEqual({ timeoutSeconds: 600 });
    expect(parse(false)).not.toHaveProperty('askHuman');
    expect(() => parse('yes')).toThrow('askHuman: must be true, false or an object with timeoutSeconds');
    expect(() => parse({ timeoutSeconds: 0, ask: 1 })).toThrow(
      /askHuman\.ask: unknown field \(allowed: timeoutSeconds\)[\s\S]*askHuman\.timeoutSeconds: must be a whole number from 1 to 86400/,
    );
  });

  it('is on in `tollgate mcp` with askHuman: true in its config file', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'tollgate-mcp-questions-'));
    const config = join(scratch, 'gateway.yaml');
    writeFileSync(
      config,
      `user: { id: ann, name: Ann, roles: [admin] }\nmcpServers:\n  archive: { url: "${archive.url}" }\naskHuman: true\n`,
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--config', config],
      env: { ...getDefaultEnvironment(), TOLLGATE_URL: server.url, TOLLGATE_TOKEN: agentToken },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-questions', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('ask_human');
      const text = 'Ship it over stdio?';
      const answering = client.callTool({ name: 'ask_human', arguments: { question: text, choices: ['yes', 'no'] } });
      const q = await pendingQuestion(text);
      expect(
        (await api.post(`/v1/questions/${q.id}/answer`, annToken, { answer: 'yes' }, { 'x-tollgate-channel': 'web' }))
          .status,
      ).toBe(200);
      expect(await answering).toEqual({ content: [{ type: 'text', text: 'yes' }] });
    } finally {
      await client.close();
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 30_000);

  it('tells the model what is wrong with its arguments, and asks nothing', async () => {
    const client = await connect(asking, { user: ANN });
    const none = (await client.callTool({ name: 'ask_human', arguments: { choices: ['a', 'b'] } })) as CallToolResult;
    expect(none).toEqual({
      content: [{ type: 'text', text: 'ask_human: question is required: the text to ask' }],
      isError: true,
    });
    const one = (await client.callTool({
      name: 'ask_human',
      arguments: { question: 'Only one way?', choices: ['yes'] },
    })) as CallToolResult;
    expect(one.isError).toBe(true);
    expect(textOf(one)).toMatch(/^ask_human: Tollgate refused the question: /);
    expect(
      (await api.get('/v1/questions?status=pending', annToken)).body.items.filter(
        (x: { text: string }) => x.text === 'Only one way?',
      ),
    ).toEqual([]);
  });
});
