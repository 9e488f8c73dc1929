import * as pty from 'node-pty';
import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { client } from '../support/http';
import { BIN } from '../support/process';
import { cliEnv, KEYS, plain, spawnTerminal } from '../support/pty';
import { startTestServer, TestServer } from '../support/server';

/**
 * `tollgate inbox` on the terminals a newcomer meets: 80 columns, where the key help must still reach "q quit", and
 * a pseudo-terminal with no size at all (0×0, as some harnesses make), where q and Ctrl-C must still end it at once.
 */
describe('tollgate inbox on small and sizeless terminals', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  const open: Array<{ kill(): void }> = [];

  beforeAll(async () => {
    server = await startTestServer({ streamPollMs: 200 });
    api = client(server.url);
  });
  afterEach(() => {
    for (const t of open.splice(0)) t.kill();
  });
  afterAll(async () => {
    await server.stop();
  });

  /** The environment of Ann (admin) in a tenant of her own, where one call waits for a person. */
  async function oneCallWaiting(tenant: string): Promise<NodeJS.ProcessEnv> {
    const ann = await server.token('ann', ['admin'], { tenant, name: 'Ann' });
    const agent = await server.token('bot', ['agent'], { tenant });
    const conv = `${tenant}-conv`;
    expect((await api.post('/v1/conversations', agent, { id: conv, title: 'Task' })).status).toBe(201);
    const r = await api.post(`/v1/conversations/${conv}/tool-calls`, agent, {
      toolCalls: [{ toolName: 'send_email', arguments: { to: 'cfo@example.com' } }],
    });
    expect(r.body.toolCalls[0].status).toBe('pending');
    return cliEnv({ url: server.url, token: ann });
  }

  it('at 80 columns the key help and notices are wrapped, not cut: every key shows, down to "q quit"', async () => {
    const term = spawnTerminal(['inbox'], await oneCallWaiting('eighty'), { cols: 80, rows: 24 });
    open.push(term);
    await term.waitFor('● live');
    await term.waitFor('q quit');
    const screen = term.text();
    for (const key of ['↑/↓ move', 'enter details', 'a approve', 'A always allow', 'r reject', 'e edit arguments'])
      expect(screen).toContain(key);
    expect(screen).toContain('g refresh');
    // Notices wrap too: a row cut at 80 columns sends `a` to the details first, and says so to the end.
    const m = term.mark();
    term.write('a');
    await term.waitFor(/press the\s+key again to decide/, m);
    term.write('q');
    expect((await term.exited()).exitCode).toBe(0);
  }, 60_000);

  it.each([
    ['q', 'q'],
    ['Ctrl-C', KEYS.ctrlC],
  ])('on a 0×0 pseudo-terminal %s quits at once, even with a request to a slow server in flight', async (name, key) => {
    const env = await oneCallWaiting(`sizeless-${name.toLowerCase()}`);
    // The server answers all but the tool list, which it holds past the client's 30 s timeout (and this test's).
    const slow = await holdingProxy(server.url, '/v1/tools');
    try {
      const term = sizelessTerminal(['inbox'], { ...env, TOLLGATE_URL: slow.url });
      open.push(term);
      await term.waitFor('size: 0 0');
      await term.waitFor('● live');
      await term.waitFor('send_email');
      await slow.held;
      term.write(key);
      expect(await term.exited).toBe(0);
    } finally {
      await slow.close();
    }
  });
});

/**
 * A pseudo-terminal whose size is 0×0. node-pty will not make one (it takes 0 for "80×24"), so a shell sets it with
 * stty, shows that it did, then becomes the inbox.
 */
function sizelessTerminal(args: string[], env: NodeJS.ProcessEnv) {
  const p = pty.spawn(
    '/bin/sh',
    ['-c', 'stty rows 0 cols 0 && echo "size: $(stty size)" && exec "$0" "$@"', process.execPath, BIN, ...args],
    { name: 'xterm-256color', cols: 80, rows: 24, cwd: process.cwd(), env: env as Record<string, string> },
  );
  let raw = '';
  let done = false;
  p.onData((d) => (raw += d));
  const exited = new Promise<number>((resolve) =>
    p.onExit((e) => {
      done = true;
      resolve(e.exitCode);
    }),
  );
  const text = () => plain(raw);
  return {
    exited,
    write: (keys: string) => p.write(keys),
    kill: () => (done ? undefined : p.kill()),
    async waitFor(s: string): Promise<void> {
      while (!text().includes(s)) {
        if (done) throw new Error(`the terminal exited before showing ${s}:\n${text().slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
  };
}

/** A loopback proxy to `target` that holds every request under `heldPath` unanswered; `held` settles on the first. */
async function holdingProxy(target: string, heldPath: string) {
  const holding: ServerResponse[] = [];
  let heldOne!: () => void;
  const held = new Promise<void>((resolve) => (heldOne = resolve));
  const proxy = createServer((req, res) => {
    if (req.url?.startsWith(heldPath)) {
      holding.push(res);
      return heldOne();
    }
    const up = request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    held,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of holding) res.destroy();
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}
