/**
 * `tollgate serve --approve-in-terminal` and a call whose rule asks for a passkey: the terminal cannot sign, so it
 * asks no approval for it. It says where to approve it (the card at localhost: browsers refuse passkeys on an IP
 * address), refuses y and a, takes a rejection, or leaves the call to the inbox and goes on. The terminal channel
 * runs in this process on stand-in streams, attached to the real server as `serve` attaches it.
 */
import { PassThrough } from 'node:stream';
import { TerminalChannel } from '../../src/adapters/cli/terminal/terminal-channel';
import { client as http } from '../support/http';
import { startTestServer, type TestServer } from '../support/server';
import { until } from '../support/wait';

let server: TestServer;
let api: ReturnType<typeof http>;
let terminal: TerminalChannel;
let agent: string;
let root: string;
const input = new PassThrough();
const output = new PassThrough();
let written = '';
output.on('data', (c: Buffer) => (written += c.toString('utf8')));

beforeAll(async () => {
  terminal = new TerminalChannel(
    { id: 'operator', tenant: 'default', roles: ['approver', 'admin'], via: 'cli' },
    {
      input,
      output,
    },
  );
  server = await startTestServer({ outboxPollMs: 100 }, { outboxConsumers: [terminal.consumer] });
  await terminal.attach(server.app, server.config.publicUrl ?? server.url);
  api = http(server.url);
  agent = await server.token('bot', ['agent']);
  root = await server.token('root', ['admin']);
  const policy = await api.put('/v1/policy', root, {
    rules: [{ match: 'wire_money', level: 'confirm', stepUp: 'passkey' }],
  });
  expect(policy.status).toBe(200);
});

afterAll(async () => {
  terminal?.close();
  await server?.stop();
});

let n = 0;
async function propose(): Promise<string> {
  const conv = `term-passkey-${++n}`;
  expect((await api.post('/v1/conversations', agent, { id: conv })).status).toBe(201);
  const r = await api.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ toolName: 'wire_money', arguments: { to: 'ACME', amount: 950000 } }],
  });
  expect(r.body.toolCalls[0].status).toBe('pending');
  return r.body.toolCalls[0].id;
}

const shows = (text: string, from: number) =>
  until(() => written.indexOf(text, from) >= 0, 20_000, `the terminal showing ${text}`);
const statusOf = async (id: string) => (await api.get(`/v1/tool-calls/${id}`, root)).body.status;

describe('the terminal approver and calls that need a passkey', () => {
  it('links to the card at localhost, refuses y, and rejects on n', async () => {
    const from = written.length;
    const id = await propose();
    const card = `${server.url.replace('127.0.0.1', 'localhost')}/#/calls/${id}`;
    await shows(`needs a passkey — approve in the inbox: ${card}`, from);
    await shows('[n] reject / [s]kip, leave it to the inbox / [d]etails:', from);
    input.write('y\n');
    await shows('This call needs a passkey, which this terminal cannot give', from);
    expect(await statusOf(id)).toBe('pending');
    input.write('n\n');
    await shows('Reason (optional):', from);
    input.write('not this month\n');
    await shows(`wire_money ${id} rejected (not this month)`, from);
    const call = (await api.get(`/v1/tool-calls/${id}`, root)).body;
    expect(call.decision).toMatchObject({ outcome: 'rejected', by: { id: 'operator', via: 'cli' } });
  });

  it('s leaves it pending for the inbox, and the terminal asks the next request', async () => {
    const from = written.length;
    const id = await propose();
    await shows('[s]kip', from);
    input.write('s\n');
    await shows(`wire_money ${id} left to the inbox`, from);
    expect(await statusOf(id)).toBe('pending');
    // The terminal asks the next request at once.
    const next = await propose();
    await shows(`/#/calls/${next}`, from);
    input.write('s\n');
    await shows(`wire_money ${next} left to the inbox`, from);
  });
});
