/**
 * `tollgate inbox` never approves arguments it had to cut to fit the screen (the review's reproduction: padding
 * pushed what mattered past the view, and Approve stood beside it). The inbox runs in this process on stand-in
 * terminal streams, against the real server: what it shows is the screen it writes, what it decides reaches the API.
 */
import { PassThrough } from 'node:stream';
import { ApiClient } from '../../src/adapters/cli/client/api-client';
import { runInbox } from '../../src/adapters/cli/client/inbox';
import { client as http } from '../support/http';
import { startTestServer, type TestServer } from '../support/server';
import { until } from '../support/wait';

let server: TestServer;
let api: ReturnType<typeof http>;

beforeAll(async () => {
  server = await startTestServer({ streamPollMs: 200 });
  api = http(server.url);
});

afterAll(async () => {
  await server?.stop();
});

/** A tenant of its own (its inbox lists only this test's calls): Ann, an admin, and an agent. */
async function tenant(name: string) {
  const ann = await server.token('ann', ['admin'], { name: 'Ann', tenant: name });
  const agent = await server.token('bot', ['agent'], { tenant: name });
  expect((await api.put('/v1/policy', ann, { rules: [{ match: '*', level: 'confirm' }] })).status).toBe(200);
  let n = 0;
  return {
    ann,
    async propose(args: Record<string, unknown>): Promise<string> {
      const conv = `inbox-${++n}`;
      expect((await api.post('/v1/conversations', agent, { id: conv, title: `Task ${n}` })).status).toBe(201);
      const r = await api.post(`/v1/conversations/${conv}/tool-calls`, agent, {
        toolCalls: [{ toolName: 'wire_money', arguments: args }],
      });
      expect(r.status).toBe(201);
      return r.body.toolCalls[0].id;
    },
    statusOf: async (id: string) => (await api.get(`/v1/tool-calls/${id}`, ann)).body.status,
    inbox: (t: ReturnType<typeof terminal>) => runInbox(new ApiClient({ url: server.url, token: ann }), t.io),
  };
}

/** A terminal of 120 × 40 on streams: keys go in, the latest full screen comes out. */
function terminal() {
  const input = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => input });
  const output = Object.assign(new PassThrough(), { isTTY: true, columns: 120, rows: 40 });
  let screen = '';
  output.on('data', (c: Buffer) => {
    const s = c.toString('utf8');
    const at = s.lastIndexOf('\x1b[H\x1b[2J');
    screen = at >= 0 ? s.slice(at) : screen + s;
  });
  const plain = () => screen.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  return {
    io: { input: input as unknown as NodeJS.ReadStream, output: output as unknown as NodeJS.WriteStream },
    press: (keys: string) => input.write(keys),
    shows: (text: string, label = text) => until(() => plain().includes(text), 20_000, `the screen showing ${label}`),
    plain,
  };
}

describe('tollgate inbox and arguments too long to show', () => {
  it('refuses a and A on arguments cut to fit, says how long they are and links to the card; r still rejects', async () => {
    const padded = { note: 'n'.repeat(2500), amount: 950000 };
    const g = await tenant('cut');
    const id = await g.propose(padded);
    const t = terminal();
    const running = g.inbox(t);
    await t.shows('Task 1');
    t.press('a');
    const tooLong = `arguments too long to show here: ${JSON.stringify(padded).length} characters`;
    await t.shows(tooLong);
    expect(t.plain()).toContain(`or open the full card: ${server.url}/#/calls/${id}`);
    expect(t.plain()).not.toContain('approving');
    t.press('A');
    await until(() => t.plain().split(tooLong).length > 2, 20_000, 'the refusal noted again');
    expect(t.plain()).not.toContain('Always allow wire_money');
    expect(await g.statusOf(id)).toBe('pending');

    t.press('r');
    await t.shows('reason (enter to send');
    t.press('cannot read it\r');
    await t.shows('rejected by you via cli (cannot read it)');
    expect(await g.statusOf(id)).toBe('rejected');
    t.press('q');
    await running;
  });

  it('on arguments too long for their row, a opens the details where they fit, and a again approves', async () => {
    const args = { memo: 'm'.repeat(90), iban: 'DE'.padEnd(90, '0'), amount: 950000 };
    const g = await tenant('details');
    const id = await g.propose(args);
    const t = terminal();
    const running = g.inbox(t);
    await t.shows('Task 1');
    t.press('a');
    await t.shows('here they are whole; press the key again to decide');
    expect(t.plain()).toContain('"amount": 950000');
    expect(await g.statusOf(id)).toBe('pending');
    t.press('a');
    await t.shows('approved by you via cli');
    expect(await g.statusOf(id)).toBe('approved');
    t.press('q');
    await running;
  });

  it('e shows arguments too long for the screen whole in the editor, and y then approves them as they are', async () => {
    const g = await tenant('editor');
    const id = await g.propose({ note: 'n'.repeat(2500), amount: 950000 });
    const t = terminal();
    const running = g.inbox(t);
    await t.shows('Task 1');
    const before = process.env.VISUAL;
    process.env.VISUAL = 'true'; // an editor that leaves the file as it is
    try {
      t.press('e');
      await t.shows('Arguments unchanged. Approve wire_money with them as they are?');
    } finally {
      if (before === undefined) delete process.env.VISUAL;
      else process.env.VISUAL = before;
    }
    expect(await g.statusOf(id)).toBe('pending');
    t.press('y');
    await t.shows('approved by you via cli');
    expect(await g.statusOf(id)).toBe('approved');
    t.press('q');
    await running;
  });

  it('approves at once what its row shows whole', async () => {
    const g = await tenant('fits');
    const id = await g.propose({ amount: 12 });
    const t = terminal();
    const running = g.inbox(t);
    await t.shows('{"amount":12}');
    t.press('a');
    await t.shows('approved by you via cli');
    expect(await g.statusOf(id)).toBe('approved');
    t.press('q');
    await running;
  });
});
