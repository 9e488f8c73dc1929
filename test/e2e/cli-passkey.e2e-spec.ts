/**
 * The CLI and calls whose rule asks for a passkey (`stepUp: passkey`): they are approved in the web inbox only,
 * where a passkey signs for them. `tollgate inbox` offers no approve key for them and says where to go; `tollgate
 * approve <id>` prints the server's refusal (step_up_required) with the card's address and fails; rejecting needs
 * no passkey. The inbox runs in this process on stand-in terminal streams, and the commands through the CLI's own
 * parser, against the real server.
 */
import { PassThrough } from 'node:stream';
import { ApiClient, CliError, EXIT, ProblemError } from '../../src/adapters/cli/client/api-client';
import { reportError } from '../../src/adapters/cli/client/client-commands';
import { runInbox } from '../../src/adapters/cli/client/inbox';
import { buildCli } from '../../src/adapters/cli/main';
import { client as http } from '../support/http';
import { startTestServer, type TestServer } from '../support/server';
import { until } from '../support/wait';

let server: TestServer;
let api: ReturnType<typeof http>;
/** Where the card of a call needing a passkey is opened: the server's port at localhost (no passkeys on an IP). */
let cardBase: string;

beforeAll(async () => {
  server = await startTestServer({ streamPollMs: 200 });
  api = http(server.url);
  cardBase = server.url.replace('127.0.0.1', 'localhost');
});

afterAll(async () => {
  await server?.stop();
});

/** A tenant of its own (its inbox lists only this test's calls), whose rule asks for a passkey on wire_money. */
async function tenant(name: string) {
  const ann = await server.token('ann', ['admin'], { name: 'Ann', tenant: name });
  const agent = await server.token('bot', ['agent'], { tenant: name });
  const policy = await api.put('/v1/policy', ann, {
    rules: [
      { match: 'wire_money', level: 'confirm', stepUp: 'passkey' },
      { match: '*', level: 'confirm' },
    ],
  });
  expect(policy.status).toBe(200);
  let n = 0;
  return {
    ann,
    async propose(toolName: string, args: Record<string, unknown> = { to: 'ACME', amount: 950000 }): Promise<string> {
      const conv = `passkey-${++n}`;
      expect((await api.post('/v1/conversations', agent, { id: conv, title: `Task ${n}` })).status).toBe(201);
      const r = await api.post(`/v1/conversations/${conv}/tool-calls`, agent, {
        toolCalls: [{ toolName, arguments: args }],
      });
      expect(r.body.toolCalls[0].status).toBe('pending');
      return r.body.toolCalls[0].id;
    },
    /** One conversation, one step: each tool named is proposed with the same arguments. */
    async proposeStep(...toolNames: string[]): Promise<{ conv: string; ids: string[] }> {
      const conv = `passkey-step-${++n}`;
      expect((await api.post('/v1/conversations', agent, { id: conv })).status).toBe(201);
      const r = await api.post(`/v1/conversations/${conv}/tool-calls`, agent, {
        toolCalls: toolNames.map((toolName) => ({ toolName, arguments: { n: 1 } })),
      });
      expect(r.status).toBe(201);
      return { conv, ids: r.body.toolCalls.map((c: { id: string }) => c.id) };
    },
    statusOf: async (id: string) => (await api.get(`/v1/tool-calls/${id}`, ann)).body.status,
    inbox: (t: ReturnType<typeof terminal>) => runInbox(new ApiClient({ url: server.url, token: ann }), t.io),
  };
}

/** Runs `tollgate …` through the CLI's parser as main() does: what it prints, and the exit code it would end with. */
async function tollgate(ann: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { TOLLGATE_URL: process.env.TOLLGATE_URL, TOLLGATE_TOKEN: process.env.TOLLGATE_TOKEN };
  process.env.TOLLGATE_URL = server.url;
  process.env.TOLLGATE_TOKEN = ann;
  let stdout = '';
  let stderr = '';
  const out = jest.spyOn(process.stdout, 'write').mockImplementation((s) => ((stdout += String(s)), true));
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((s) => ((stderr += String(s)), true));
  const log = jest.spyOn(console, 'log').mockImplementation((s) => void (stdout += `${String(s)}\n`));
  const error = jest.spyOn(console, 'error').mockImplementation((s) => void (stderr += `${String(s)}\n`));
  try {
    await buildCli().parseAsync(['node', 'tollgate', ...args]);
    // A command that printed what it did and then failed (step with refused calls) sets the exit code.
    const code = Number(process.exitCode ?? EXIT.ok);
    process.exitCode = undefined;
    return { code, stdout, stderr };
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    reportError(e);
    return { code: e.exitCode, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
    log.mockRestore();
    error.mockRestore();
    for (const [k, v] of Object.entries(env))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
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
    shows: (text: string) => until(() => plain().includes(text), 20_000, `the screen showing ${text}`),
    plain,
  };
}

describe('tollgate approve and calls that need a passkey', () => {
  it("prints the server's step_up_required with the card's address and exits 1; the call stays pending", async () => {
    const g = await tenant('approve-plain');
    const id = await g.propose('wire_money');
    const run = await tollgate(g.ann, 'approve', id);
    expect(run.code).toBe(EXIT.refused);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('step_up_required: This call needs a passkey');
    expect(run.stderr).toContain(`its card: ${cardBase}/#/calls/${id}`);
    expect(await g.statusOf(id)).toBe('pending');
    // --json prints the problem itself, card and all.
    const json = await tollgate(g.ann, 'approve', id, '--json');
    expect(json.code).toBe(EXIT.refused);
    expect(JSON.parse(json.stdout)).toMatchObject({
      code: 'step_up_required',
      card: `/#/calls/${id}`,
      stepUp: 'passkey',
    });
  });

  it('refuses --always and --arguments the same way, and rejects without a passkey', async () => {
    const g = await tenant('approve-flags');
    const id = await g.propose('wire_money');
    for (const args of [['--always'], ['--arguments', '{"to":"ACME","amount":1}']]) {
      const run = await tollgate(g.ann, 'approve', id, ...args);
      expect(run.code).toBe(EXIT.refused);
      expect(run.stderr).toContain(`${cardBase}/#/calls/${id}`);
    }
    const rejected = await tollgate(g.ann, 'reject', id, '--reason', 'not this month');
    expect(rejected.code).toBe(EXIT.ok);
    expect(rejected.stdout).toContain(`${id} wire_money: rejected by Ann via cli (not this month)`);
  });

  it("step approve decides the others and lists the call that needs a passkey with its card's address", async () => {
    const g = await tenant('step');
    const { conv, ids } = await g.proposeStep('wire_money', 'send_invoice');
    const run = await tollgate(g.ann, 'step', 'approve', conv);
    expect(run.code).toBe(EXIT.refused);
    expect(run.stdout).toContain(`${ids[1]} send_invoice: approved`);
    expect(run.stderr).toContain(`${ids[0]}: step_up_required: `);
    expect(run.stderr).toContain(`its card: ${cardBase}/#/calls/${ids[0]}`);
    expect(await g.statusOf(ids[0])).toBe('pending');
  });

  it('pending marks the call', async () => {
    const g = await tenant('pending');
    const id = await g.propose('wire_money');
    const run = await tollgate(g.ann, 'pending');
    expect(run.stdout.split('\n').find((l) => l.startsWith(id))).toContain('confirm (passkey)');
    await tollgate(g.ann, 'reject', id);
  });

  it('a problem that points to no card prints as before', async () => {
    const e = new ProblemError(404, { code: 'not_found', detail: 'Tool call tc_x not found' } as never, server.url);
    expect(e.message).toBe('not_found: Tool call tc_x not found');
  });
});

describe('tollgate inbox and calls that need a passkey', () => {
  it('offers no approve key: a, A and e say to approve in the inbox at the card; r still rejects', async () => {
    const g = await tenant('inbox-passkey');
    const id = await g.propose('wire_money');
    const t = terminal();
    const running = g.inbox(t);
    const hint = `needs a passkey — approve in the inbox: ${cardBase}/#/calls/${id}`;
    await t.shows(hint);
    expect(t.plain()).not.toContain('a approve');
    expect(t.plain()).toContain('r reject');
    for (const key of ['a', 'A', 'e']) {
      const before = t.plain().split(hint).length;
      t.press(key);
      await until(() => t.plain().split(hint).length > before, 20_000, `the note after ${key}`);
    }
    expect(t.plain()).not.toMatch(/approving|Always allow wire_money|Approve wire_money/);
    expect(await g.statusOf(id)).toBe('pending');
    t.press('\r');
    await t.shows('each approval needs a passkey: approve in the web inbox');
    t.press('r');
    await t.shows('reason (enter to send');
    t.press('wrong account\r');
    await t.shows('rejected by you via cli (wrong account)');
    expect(await g.statusOf(id)).toBe('rejected');
    t.press('q');
    await running;
  });

  it('keeps a approve for a call that needs no passkey', async () => {
    const g = await tenant('inbox-plain');
    const id = await g.propose('send_invoice', { n: 1 }); // short enough for its row: a approves at once
    const t = terminal();
    const running = g.inbox(t);
    await t.shows('send_invoice');
    expect(t.plain()).toContain('a approve');
    expect(t.plain()).not.toContain('needs a passkey');
    t.press('a');
    await t.shows('approved by you via cli');
    expect(await g.statusOf(id)).toBe('approved');
    t.press('q');
    await running;
  });
});
