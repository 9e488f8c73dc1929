import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase } from '../support/database';
import { client } from '../support/http';
import { freePort } from '../support/process';
import { cliEnv, KEYS, runCli, spawnTerminal, Terminal } from '../support/pty';
import { startTestServer, TestServer } from '../support/server';

/** `tollgate inbox` driven through a pseudo-terminal against the real server. */
describe('tollgate inbox (interactive, in a terminal)', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let scratch: string;
  const open: Terminal[] = [];

  beforeAll(async () => {
    server = await startTestServer({ streamPollMs: 200 });
    api = client(server.url);
    scratch = mkdtempSync(join(tmpdir(), 'tollgate-inbox-'));
  });
  afterEach(() => {
    for (const t of open.splice(0)) t.kill();
  });
  afterAll(async () => {
    rmSync(scratch, { recursive: true, force: true });
    await server.stop();
  });

  /** Each test has its own tenant: Ann (admin) there, and an agent with one conversation per call. */
  async function tenant(name: string) {
    const ann = await server.token('ann', ['admin'], { tenant: name, name: 'Ann' });
    const bea = await server.token('bea', ['approver'], { tenant: name, name: 'Bea' });
    const agent = await server.token('bot', ['agent'], { tenant: name });
    let n = 0;
    const propose = async (toolName: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
      const conv = `${name}-conv-${++n}`;
      expect(
        (await api.post('/v1/conversations', agent, { id: conv, user: { id: 'uma', name: 'Uma' }, title: `Task ${n}` }))
          .status,
      ).toBe(201);
      const r = await api.post(`/v1/conversations/${conv}/tool-calls`, agent, {
        toolCalls: [{ toolName, arguments: args, ...extra }],
      });
      expect(r.status).toBe(201);
      expect(r.body.toolCalls[0].status).toBe('pending');
      return r.body.toolCalls[0].id as string;
    };
    const inbox = (env: Record<string, string> = {}) => {
      const t = spawnTerminal(['inbox'], cliEnv({ url: server.url, token: ann, ...env }));
      open.push(t);
      return t;
    };
    const wait = (id: string) => api.get(`/v1/tool-calls/${id}?wait=20`, agent);
    return { ann, bea, agent, propose, inbox, wait };
  }

  it('shows what is pending, details on enter, and stays live: new requests appear, decisions elsewhere leave with who and where', async () => {
    const t = await tenant('live');
    const first = await propose(
      t,
      'send_email',
      { to: 'cfo@example.com' },
      { reason: 'the user asked for the report' },
    );
    const term = t.inbox();
    await term.waitFor('send_email');
    await term.waitFor('● live');
    expect(term.text()).toContain('1 pending');

    let m = term.mark();
    term.write(KEYS.enter);
    await term.waitFor('Arguments', m);
    await term.waitFor('the user asked for the report', m);
    await term.waitFor('cfo@example.com', m);
    term.write(KEYS.esc);

    m = term.mark();
    const second = await propose(t, 'drop_table', { table: 'users' });
    await term.waitFor(`new: drop_table ${second}`, m);
    await term.waitFor('2 pending', m);

    m = term.mark();
    const decided = await api.post(
      `/v1/tool-calls/${first}/decision`,
      t.bea,
      { decision: 'approve' },
      { 'X-Tollgate-Channel': 'web' },
    );
    expect(decided.status).toBe(200);
    await term.waitFor(`send_email ${first} approved by Bea via web`, m);
    await term.waitFor('1 pending', m);

    m = term.mark();
    expect(
      (await api.post(`/v1/tool-calls/${second}/decision`, t.bea, { decision: 'reject', reason: 'not today' })).status,
    ).toBe(200);
    await term.waitFor(`drop_table ${second} rejected by Bea via api (not today)`, m);
    await term.waitFor('Nothing waiting for you', m);

    term.write('q');
    expect((await term.exited()).exitCode).toBe(0);
  }, 60_000);

  it('a approves the selected call (a second key for a destructive one); the waiting agent gets it, decided via cli', async () => {
    const t = await tenant('approve');
    const plainCall = await propose(t, 'create_ticket', { title: 'Printer' });
    const destructive = await propose(t, 'delete_source', { id: 'src_2' }, { annotations: { destructive: true } });
    const term = t.inbox();
    await term.waitFor('create_ticket');
    await term.waitFor('delete_source');

    const waited = t.wait(plainCall);
    let m = term.mark();
    term.write('a');
    await term.waitFor(`create_ticket ${plainCall} approved by you via cli`, m);
    const done = await waited;
    expect(done.body.status).toBe('approved');
    expect(done.body.decision.by).toMatchObject({ id: 'ann', via: 'cli' });

    m = term.mark();
    term.write('a');
    await term.waitFor('Approve delete_source (destructive)? y to confirm', m);
    term.write('x'); // anything but y cancels
    await term.waitFor('cancelled', m);
    expect((await api.get(`/v1/tool-calls/${destructive}`, t.ann)).body.status).toBe('pending');

    m = term.mark();
    term.write('a');
    await term.waitFor('y to confirm', m);
    term.write('y');
    await term.waitFor(`delete_source ${destructive} approved by you via cli`, m);
    const call = (await api.get(`/v1/tool-calls/${destructive}`, t.ann)).body;
    expect(call.status).toBe('approved');
    expect(call.decision.by.via).toBe('cli');
  }, 60_000);

  it('A always allows in the scope a key picks (as the web does): the call is approved and a standing grant made via cli', async () => {
    const t = await tenant('always');
    const id = await propose(t, 'create_ticket', { title: 'Printer' });
    const term = t.inbox();
    await term.waitFor('create_ticket');
    let m = term.mark();
    term.write('A');
    await term.waitFor(
      'Always allow create_ticket from now on in: c this conversation · g this agent · t the tenant',
      m,
    );
    term.write('x');
    await term.waitFor('cancelled', m);
    expect((await api.get(`/v1/tool-calls/${id}`, t.ann)).body.status).toBe('pending');
    m = term.mark();
    term.write('A');
    await term.waitFor('Always allow', m);
    term.write('g');
    await term.waitFor(`create_ticket ${id} approved by you via cli`, m);
    const grants = (await api.get('/v1/grants', t.ann)).body.items;
    expect(grants).toEqual([
      expect.objectContaining({
        toolName: 'create_ticket',
        scope: 'agent',
        agentId: 'bot',
        createdBy: expect.objectContaining({ id: 'ann', via: 'cli' }),
      }),
    ]);
  }, 60_000);

  it('r asks for a reason and rejects with it; ↓ selects the next call', async () => {
    const t = await tenant('reject');
    const keep = await propose(t, 'send_email', { to: 'a@example.com' });
    const refuse = await propose(t, 'wire_money', { amount: 10_000 });
    const term = t.inbox();
    await term.waitFor('wire_money');

    const waited = t.wait(refuse);
    const m = term.mark();
    term.write(KEYS.down);
    term.write('r');
    await term.waitFor('Reject wire_money — reason', m);
    term.write('too much, ask finance');
    term.write(KEYS.backspace); // typing is editable
    term.write('e');
    term.write(KEYS.enter);
    await term.waitFor(`wire_money ${refuse} rejected by you via cli (too much, ask finance)`, m);
    const done = await waited;
    expect(done.body.status).toBe('rejected');
    expect(done.body.decision).toMatchObject({
      outcome: 'rejected',
      reason: 'too much, ask finance',
      by: { id: 'ann', via: 'cli' },
    });
    expect((await api.get(`/v1/tool-calls/${keep}`, t.ann)).body.status).toBe('pending');
  }, 60_000);

  it('e opens the arguments in $EDITOR, checks the JSON, and approves with the edited arguments', async () => {
    const t = await tenant('edit');
    const id = await propose(t, 'send_email', { to: 'everyone@example.com', subject: 'Hi' });
    // An "editor" that first writes broken JSON, and on the second run the edited arguments.
    const editor = join(scratch, 'editor.sh');
    const runs = join(scratch, 'runs');
    writeFileSync(
      editor,
      `#!/bin/sh\nif [ -f "${runs}" ]; then printf '{"to": "team@example.com", "subject": "Hi"}\\n' > "$1"; else touch "${runs}"; printf '{"to": ' > "$1"; fi\n`,
    );
    chmodSync(editor, 0o755);
    const term = t.inbox({ EDITOR: editor });
    await term.waitFor('send_email');

    let m = term.mark();
    term.write('e');
    await term.waitFor('not valid', m);
    await term.waitFor('press e to fix it', m);
    expect((await api.get(`/v1/tool-calls/${id}`, t.ann)).body.status).toBe('pending');

    m = term.mark();
    term.write('e');
    await term.waitFor('Approve send_email with {"to":"team@example.com","subject":"Hi"}? y to confirm', m);
    const waited = t.wait(id);
    term.write('y');
    await term.waitFor(`send_email ${id} approved by you via cli with edited arguments`, m);
    const done = (await waited).body;
    expect(done.status).toBe('approved');
    expect(done.arguments).toEqual({ to: 'everyone@example.com', subject: 'Hi' }); // the original stays on record
    expect(done.decision.editedArguments).toEqual({ to: 'team@example.com', subject: 'Hi' });
    expect(done.decision.by.via).toBe('cli');
  }, 60_000);

  it('a decision already taken elsewhere is reported, not retried', async () => {
    const t = await tenant('race');
    const id = await propose(t, 'send_email', { to: 'x@example.com' });
    // Ann's inbox has not heard yet (it is paused by the race below): Bea decides first over the API.
    const term = t.inbox();
    await term.waitFor('send_email');
    await term.waitFor('● live');
    // Decide through the API, then press `a` at once: whichever the inbox sees first, it ends showing Bea's decision.
    const m = term.mark();
    await api.post(`/v1/tool-calls/${id}/decision`, t.bea, { decision: 'reject', reason: 'no' });
    term.write('a');
    await term.waitFor(/send_email \S+ (was already rejected by Bea via api|rejected by Bea via api \(no\))/, m);
    expect((await api.get(`/v1/tool-calls/${id}`, t.ann)).body.decision.by.id).toBe('bea');
  }, 60_000);

  it('refuses to run without a terminal, with exit code 2', async () => {
    const r = await runCli(['inbox'], cliEnv({ url: server.url, token: await server.token('ann', ['admin']) }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/needs a terminal/);
  });
});

function propose(
  t: { propose: (tool: string, args: Record<string, unknown>, extra?: Record<string, unknown>) => Promise<string> },
  tool: string,
  args: Record<string, unknown>,
  extra?: Record<string, unknown>,
) {
  return t.propose(tool, args, extra);
}

describe('tollgate inbox across a server restart', () => {
  it('reconnects by itself (resuming with Last-Event-ID) and stays live after a server restart', async () => {
    const db = await freshDatabase();
    const port = await freePort();
    let server = await startTestServer({ port, streamPollMs: 200 }, { db });
    const term: { t?: Terminal } = {};
    try {
      const api = client(server.url);
      const ann = await server.token('ann', ['admin'], { name: 'Ann' });
      const agent = await server.token('bot', ['agent']);
      const propose = async (conv: string, toolName: string) => {
        await api.post('/v1/conversations', agent, { id: conv });
        return (
          await api.post(`/v1/conversations/${conv}/tool-calls`, agent, { toolCalls: [{ toolName, arguments: {} }] })
        ).body.toolCalls[0].id as string;
      };
      const before = await propose('r-1', 'before_restart');
      term.t = spawnTerminal(['inbox'], cliEnv({ url: server.url, token: ann }));
      await term.t.waitFor('before_restart');
      await term.t.waitFor('● live');

      let m = term.t.mark();
      await server.stop();
      await term.t.waitFor('reconnecting', m);

      server = await startTestServer({ port, streamPollMs: 200 }, { db });
      m = term.t.mark();
      await term.t.waitFor('reconnected; caught up', m, 20_000);
      const after = await propose('r-2', 'after_restart');
      await term.t.waitFor(`new: after_restart ${after}`, m);
      await api.post(
        `/v1/tool-calls/${before}/decision`,
        ann,
        { decision: 'reject', reason: 'stale' },
        { 'X-Tollgate-Channel': 'web' },
      );
      await term.t.waitFor(`before_restart ${before} rejected by Ann via web (stale)`, m);
      term.t.write('q');
      expect((await term.t.exited()).exitCode).toBe(0);
    } finally {
      term.t?.kill();
      await server.stop();
      await db.drop();
    }
  }, 90_000);
});
