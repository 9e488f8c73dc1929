import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintToken } from '../../src/infrastructure/auth/jwt-verifier';
import { freshDatabase, TestDatabase } from '../support/database';
import { client } from '../support/http';
import { freePort, serverEnv } from '../support/process';
import { runCli, spawnTerminal, Terminal } from '../support/pty';
import { TEST_SECRET } from '../support/server';

/** `tollgate serve --approve-in-terminal` (seed ADR 012, single-user mode), its terminal driven through a pseudo-terminal. */
describe('tollgate serve --approve-in-terminal', () => {
  let db: TestDatabase;
  let term: Terminal;
  let url: string;
  let api: ReturnType<typeof client>;
  let agent: string;
  let ann: string;

  beforeAll(async () => {
    db = await freshDatabase();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    api = client(url);
    const env = serverEnv({
      PORT: String(port),
      TOLLGATE_DATA_DIR: db.dataDir,
      DATABASE_URL: db.url,
      TOLLGATE_JWT_SECRET: TEST_SECRET,
      TOLLGATE_SWEEP_INTERVAL_MS: '200',
    });
    term = spawnTerminal(['serve', '--approve-in-terminal', '--as', 'operator'], env);
    await term.waitFor('Approving in this terminal as operator', 0, 60_000);
    agent = await mintToken(TEST_SECRET, { sub: 'bot', roles: ['agent'] }, '1h');
    ann = await mintToken(TEST_SECRET, { sub: 'ann', roles: ['admin'], name: 'Ann' }, '1h');
  }, 90_000);

  afterAll(async () => {
    if (term) {
      term.kill('SIGTERM');
      await Promise.race([term.exited(), new Promise((r) => setTimeout(r, 15_000).unref())]);
    }
    await db?.drop();
  }, 30_000);

  let n = 0;
  async function propose(toolName: string, args: Record<string, unknown>): Promise<string> {
    const conv = `term-${++n}`;
    expect((await api.post('/v1/conversations', agent, { id: conv, title: `Job ${n}` })).status).toBe(201);
    const r = await api.post(`/v1/conversations/${conv}/tool-calls`, agent, {
      toolCalls: [{ toolName, arguments: args, reason: 'the user asked' }],
    });
    expect(r.status).toBe(201);
    return r.body.toolCalls[0].id;
  }

  it('asks on the terminal and holds the call until y: the agent’s long-poll waits, then gets approved via cli', async () => {
    const m = term.mark();
    const id = await propose('drop_table', { table: 'users' });
    await term.waitFor(`drop_table  ${id}`, m);
    await term.waitFor('Approve? [y]es / [n]o / [a]lways / [d]etails:', m);
    // Nothing decides it meanwhile: a 2 s long-poll ends still pending.
    expect((await api.get(`/v1/tool-calls/${id}?wait=2`, agent)).body.status).toBe('pending');
    const waited = api.get(`/v1/tool-calls/${id}?wait=20`, agent);
    term.write('y\r');
    const done = (await waited).body;
    expect(done.status).toBe('approved');
    expect(done.decision.by).toMatchObject({ id: 'operator', via: 'cli' });
    await term.waitFor(`drop_table ${id} approved`, m);
  }, 60_000);

  it('n asks for a reason and rejects with it; d shows the whole request first', async () => {
    const m = term.mark();
    const id = await propose('send_email', { to: 'all@example.com', body: 'hello' });
    await term.waitFor('Approve? [y]es', m);
    term.write('d\r');
    await term.waitFor('"body": "hello"', m);
    const waited = api.get(`/v1/tool-calls/${id}?wait=20`, agent);
    term.write('n\r');
    await term.waitFor('Reason (optional):', m);
    term.write('not to everyone\r');
    const done = (await waited).body;
    expect(done.status).toBe('rejected');
    expect(done.decision).toMatchObject({ reason: 'not to everyone', by: { id: 'operator', via: 'cli' } });
  }, 60_000);

  it('a always allows in the scope asked next (as the web does): approved, and a standing grant made by the operator via cli', async () => {
    const m = term.mark();
    const id = await propose('archive_ticket', { id: 7 });
    await term.waitFor('[a]lways', m);
    const waited = api.get(`/v1/tool-calls/${id}?wait=20`, agent);
    term.write('a\r');
    await term.waitFor('Always allow in [c]onversation / a[g]ent / [t]enant', m);
    // Each prompt is awaited after the answer before it, never matched by an earlier one: a line typed before its
    // question is asked is read by no one.
    const wrong = term.mark();
    term.write('x\r');
    await term.waitFor('Please answer c, g or t.', wrong);
    await term.waitFor('Approve? [y]es', wrong);
    const again = term.mark();
    term.write('a\r');
    await term.waitFor('Always allow in', again);
    term.write('c\r');
    expect((await waited).body.status).toBe('approved');
    await term.waitFor(`archive_ticket ${id} approved (always allowed in scope conversation)`, m);
    const grants = (await api.get('/v1/grants?tool=archive_ticket', ann)).body.items;
    expect(grants).toEqual([
      expect.objectContaining({
        scope: 'conversation',
        createdBy: expect.objectContaining({ id: 'operator', via: 'cli' }),
      }),
    ]);
  }, 60_000);

  it('asks one at a time, queueing the rest; a decision taken elsewhere withdraws the question and says who took it', async () => {
    const m = term.mark();
    const first = await propose('tool_one', {});
    await term.waitFor(`tool_one  ${first}`, m);
    const second = await propose('tool_two', {});
    await term.waitFor(`tool_two ${second} queued`, m);

    expect(
      (
        await api.post(
          `/v1/tool-calls/${first}/decision`,
          ann,
          { decision: 'approve' },
          { 'X-Tollgate-Channel': 'web' },
        )
      ).status,
    ).toBe(200);
    await term.waitFor(`tool_one ${first} was approved by Ann via web`, m);
    await term.waitFor(`tool_two  ${second}`, m); // the next one is asked
    term.write('y\r');
    expect((await api.get(`/v1/tool-calls/${second}?wait=20`, agent)).body.decision.by).toMatchObject({
      id: 'operator',
      via: 'cli',
    });
  }, 60_000);

  it('refuses to start without a terminal, with exit code 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-noterm-'));
    try {
      const r = await runCli(
        ['serve', '--approve-in-terminal'],
        serverEnv({ PORT: String(await freePort()), TOLLGATE_DATA_DIR: dir, TOLLGATE_JWT_SECRET: TEST_SECRET }),
      );
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--approve-in-terminal .*not a terminal/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
