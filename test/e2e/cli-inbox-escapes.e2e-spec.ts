/**
 * `tollgate inbox` and agent text that tries to drive the terminal (the security review's reproduction: a reason
 * that draws fake arguments and a fake prompt, then hides the rest with ESC[8m). The inbox runs in this process on
 * stand-in terminal streams against the real server: the screen is what it writes, decisions reach the API.
 */
import { PassThrough } from 'node:stream';
import { ApiClient } from '../../src/adapters/cli/client/api-client';
import { runInbox } from '../../src/adapters/cli/client/inbox';
import { client as http } from '../support/http';
import { startTestServer, type TestServer } from '../support/server';
import { until } from '../support/wait';

const FAKE =
  'monthly payroll\n  arguments: {"amount":950,"to":"IBAN-ACME-PAYROLL"}\n  Approve? [y]es / [n]o / [a]lways / [d]etails: \x1b[8m';
const REAL = { amount: 950000, to: 'IBAN-MALLORY' };
/** What a terminal acts on: escapes, a C1 CSI, a carriage return, DEL, bidi overrides and isolates. */
const BAD = '\x1b[2K\u009b8m\r\x7f\u202e\u2066';
/** The inbox's own sequences (screen, cursor, styles); any other ESC on the screen would have come from the agent. */
const OWN = /\x1b\[(?:H|2J|0m|1m|22m|2m|7m|27m|3[123]m|39m|\?25[hl]|\?1049[hl])/g;

let server: TestServer;
let api: ReturnType<typeof http>;

beforeAll(async () => {
  server = await startTestServer({ streamPollMs: 200 });
  api = http(server.url);
});

afterAll(async () => {
  await server?.stop();
});

function terminal(columns = 160) {
  const input = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => input });
  const output = Object.assign(new PassThrough(), { isTTY: true, columns, rows: 50 });
  let screen = '';
  let all = '';
  output.on('data', (c: Buffer) => {
    const s = c.toString('utf8');
    all += s;
    const at = s.lastIndexOf('\x1b[H\x1b[2J');
    screen = at >= 0 ? s.slice(at) : screen + s;
  });
  const plain = () => screen.replace(OWN, '');
  return {
    io: { input: input as unknown as NodeJS.ReadStream, output: output as unknown as NodeJS.WriteStream },
    press: (keys: string) => input.write(keys),
    shows: (text: string) => until(() => plain().includes(text), 20_000, `the screen showing ${text}`),
    plain,
    all: () => all,
  };
}

describe('tollgate inbox and agent text with control characters', () => {
  it('shows the real arguments and no agent escape, in the list and the details, and a approves what was shown', async () => {
    const ann = await server.token('ann', ['admin'], { name: 'Ann', tenant: 'escapes' });
    const agent = await server.token('bot', ['agent'], { tenant: 'escapes' });
    expect((await api.put('/v1/policy', ann, { rules: [{ match: '*', level: 'confirm' }] })).status).toBe(200);
    const conv = await api.post('/v1/conversations', agent, {
      id: 'esc-1',
      title: `Payroll${BAD}`,
      user: { id: 'uma', roles: [], name: `Uma${BAD}` },
    });
    expect(conv.status).toBe(201);
    const r = await api.post('/v1/conversations/esc-1/tool-calls', agent, {
      toolCalls: [
        {
          toolName: 'wire_money',
          arguments: REAL,
          reason: FAKE,
          display: {
            title: `Wire${BAD}`,
            summary: `to ACME${BAD}`,
            fields: [{ label: `To${BAD}`, value: `ACME${BAD}` }],
          },
        },
      ],
    });
    expect(r.status).toBe(201);
    const id = r.body.toolCalls[0].id;

    const t = terminal();
    const running = runInbox(new ApiClient({ url: server.url, token: ann }), t.io);
    // Stored as JSONB, the arguments come back with their keys in another order.
    await t.shows('"to":"IBAN-MALLORY","amount":950000');
    // The title and the user's name with their controls gone (a carriage return shown as ↵), the rest as text.
    expect(t.plain()).toContain('Payroll[2K8m↵ ');
    expect(t.plain()).toContain('Uma[2K8m↵ ');
    t.press('\r');
    await t.shows('"amount": 950000');
    const shown = t.plain();
    expect(shown).toContain('"to": "IBAN-MALLORY"');
    // The reason is one line, its line breaks shown as ↵: it cannot pass for the arguments or the prompt.
    expect(shown).toContain(`Agent's reason monthly payroll↵  arguments: {"amount":950,"to":"IBAN-ACME-PAYROLL"}↵`);
    expect(shown).toContain('Display       Wire[2K8m↵ — to ACME[2K8m↵');
    expect(shown).toContain('  To[2K8m↵: ACME[2K8m↵');
    expect(shown).toContain('Uma[2K8m↵ (uma)');
    // Nothing the agent sent reaches the terminal as a control: every ESC written is one of the inbox's own.
    const everything = t.all();
    expect(everything.replace(OWN, '')).not.toContain('\x1b');
    for (const c of ['\u009b', '\r\x7f', '\x7f', '\u202e', '\u2066']) expect(everything).not.toContain(c);
    // The details reset any style before the arguments.
    expect(everything).toContain('\x1b[0mArguments');

    t.press('a');
    await t.shows('approved by you via cli');
    const call = (await api.get(`/v1/tool-calls/${id}`, ann)).body;
    expect(call.status).toBe('approved');
    expect(call.arguments).toEqual(REAL);
    t.press('q');
    await running;
  });

  it('shows C1 and bidi characters inside the arguments as JSON escapes, and decides "shown whole" on them', async () => {
    const ann = await server.token('ann', ['admin'], { name: 'Ann', tenant: 'escapes-json' });
    const agent = await server.token('bot', ['agent'], { tenant: 'escapes-json' });
    expect((await api.put('/v1/policy', ann, { rules: [{ match: '*', level: 'confirm' }] })).status).toBe(200);
    expect((await api.post('/v1/conversations', agent, { id: 'esc-2', title: 'T' })).status).toBe(201);
    // 180 characters as JSON, over 200 once its six bidi overrides are shown as escapes: the row no longer fits.
    const args = { to: `IBAN-${'\u202e'.repeat(6)}${'x'.repeat(156)}` };
    expect(JSON.stringify(args).length).toBeLessThanOrEqual(200);
    const r = await api.post('/v1/conversations/esc-2/tool-calls', agent, {
      toolCalls: [{ toolName: 'wire_money', arguments: args }],
    });
    expect(r.status).toBe(201);
    const id = r.body.toolCalls[0].id;
    // Wide enough for the details' line of them (206 characters), not for the row.
    const t = terminal(240);
    const running = runInbox(new ApiClient({ url: server.url, token: ann }), t.io);
    await t.shows('IBAN-\\u202e');
    t.press('a');
    await t.shows('here they are whole; press the key again to decide');
    expect((await api.get(`/v1/tool-calls/${id}`, ann)).body.status).toBe('pending');
    expect(t.all()).not.toContain('\u202e');
    t.press('q');
    await running;
  });
});
