import { Client } from 'pg';
import { mintToken } from '../../src/infrastructure/auth/jwt-verifier';
import { freshDatabase, TestDatabase } from '../support/database';
import { client } from '../support/http';
import { exited, freePort, ServerProcess, serverEnv, spawnServer } from '../support/process';
import { spawnTerminal, Terminal } from '../support/pty';
import { TEST_SECRET } from '../support/server';
import { until } from '../support/wait';

/**
 * The logs of `tollgate serve` as an operator's log shipper reads them (stdout not a terminal: JSON lines) and
 * as a person at a terminal reads them (pretty): a short banner, one access line per request, never a secret.
 */

type Line = Record<string, any>;

/** Every line of stdout, each of which must be JSON. */
function jsonLines(stdout: string): Line[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      try {
        return JSON.parse(l) as Line;
      } catch {
        throw new Error(`not a JSON line: ${l}`);
      }
    });
}

describe('tollgate serve logs, piped: JSON lines', () => {
  let db: TestDatabase;
  let server: ServerProcess;
  let api: ReturnType<typeof client>;
  let agent: string;
  let approver: string;

  beforeAll(async () => {
    db = await freshDatabase();
    server = await spawnServer({
      DATABASE_URL: db.url,
      TOLLGATE_DATA_DIR: db.dataDir,
      TOLLGATE_JWT_SECRET: TEST_SECRET,
    });
    api = client(server.url);
    agent = await mintToken(TEST_SECRET, { sub: 'bot', roles: ['agent'], tenant: 'logs' }, '1h');
    approver = await mintToken(TEST_SECRET, { sub: 'ann', roles: ['approver'], tenant: 'logs' }, '1h');
  }, 120_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await db?.drop();
  });

  /** The access lines of one request (by the X-Request-Id the test sent). */
  function accessLines(requestId: string): Line[] {
    return jsonLines(server.stdout()).filter((l) => l.req_id === requestId && 'status' in l);
  }

  async function accessLine(requestId: string): Promise<Line> {
    await until(() => accessLines(requestId).length > 0, 20_000, `the access line of ${requestId}`);
    return accessLines(requestId)[0];
  }

  async function metric(series: string): Promise<number> {
    const text = (await api.get('/metrics')).body as string;
    const line = text.split('\n').find((l) => l.startsWith(series + ' '));
    return line ? Number(line.slice(series.length + 1)) : 0;
  }

  it('starts with one banner line and no route mapping: version, URL, database, inbox and sign-in, docs', () => {
    const lines = jsonLines(server.stdout());
    expect(server.stdout()).not.toMatch(/Mapped \{|RouterExplorer|RoutesResolver|InstanceLoader/);
    const banner = lines.find((l) => /^Tollgate listening on /.test(l.msg));
    expect(banner).toMatchObject({
      level: 'info',
      msg: `Tollgate listening on ${server.url} (version ${banner?.version})`,
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      url: server.url,
      database: db.url
        ? expect.stringMatching(/^PostgreSQL 127\.0\.0\.1:5432\/tollgate_t_/)
        : `embedded PostgreSQL in ${db.dataDir}`,
      // Passkeys need a name, not an IP address: the inbox is announced at localhost.
      inbox: `${server.url.replace('127.0.0.1', 'localhost')}/`,
      signIn: expect.stringContaining('npx tollgate token'),
      docs: `${server.url}/docs`,
      tracing: 'off',
      // No VAPID subject nor SMTP here: the banner says how to turn push on.
      push: expect.stringContaining('TOLLGATE_VAPID_SUBJECT'),
      email: 'off',
    });
    expect(typeof banner!.time).toBe('string');
    // Nothing before the banner: no module or route lines at info.
    expect(lines.indexOf(banner!)).toBe(0);
  });

  it('writes one access line per request: id, route pattern, status, duration, tenant and principal; 4xx with their code', async () => {
    const conv = await api.post('/v1/conversations', agent, { id: 'logged' }, { 'X-Request-Id': 'log-created' });
    expect(conv.status).toBe(201);
    expect(conv.headers.get('x-request-id')).toBe('log-created');
    expect(await accessLine('log-created')).toMatchObject({
      level: 'info',
      msg: expect.stringMatching(/^POST \/v1\/conversations 201 \d+ms$/),
      method: 'POST',
      route: '/v1/conversations',
      status: 201,
      duration_ms: expect.any(Number),
      tenant: 'logs',
      principal: { sub: 'bot', roles: ['agent'] },
      remote_addr: expect.stringMatching(/127\.0\.0\.1/),
    });

    await api.get('/v1/tool-calls/tc_not_there', agent, { 'X-Request-Id': 'log-missing' });
    expect(await accessLine('log-missing')).toMatchObject({
      level: 'info',
      route: '/v1/tool-calls/:id',
      status: 404,
      code: 'not_found',
    });

    await api.get('/v1/tools', undefined, { 'X-Request-Id': 'log-anonymous' });
    const anonymous = await accessLine('log-anonymous');
    expect(anonymous).toMatchObject({ level: 'info', route: '/v1/tools', status: 401, code: 'unauthenticated' });
    expect(anonymous).not.toHaveProperty('principal');
    expect(anonymous).not.toHaveProperty('err'); // the stack is for 5xx only

    // A request id the server made up is echoed and logged the same.
    const made = await api.get('/v1/approvals', approver);
    const id = made.headers.get('x-request-id')!;
    expect(id).toMatch(/^req_/);
    expect(await accessLine(id)).toMatchObject({
      route: '/v1/approvals',
      status: 200,
      principal: { sub: 'ann', roles: ['approver'] },
    });
    expect(accessLines(id)).toHaveLength(1);
    // Tracing is off: no trace fields.
    expect(accessLines(id)[0]).not.toHaveProperty('trace_id');
  });

  it('names no route for a path that matched none, and logs it without its query string', async () => {
    await api.get('/v1/nothing/here?x=1', undefined, { 'X-Request-Id': 'log-nowhere' });
    expect(await accessLine('log-nowhere')).toMatchObject({
      route: null,
      path: '/v1/nothing/here',
      status: 404,
      msg: expect.stringMatching(/^GET \/v1\/nothing\/here 404 /),
    });
  });

  it('never writes a credential: bearer tokens, cookies, Slack signatures, tokens in query strings', async () => {
    const secrets = ['sekrit-cookie-value', 'v0=slack-signature-value', 'query-token-value', 'webhook-signature-value'];
    await api.get('/v1/events/stream?access_token=query-token-value&lastEventId=x', agent, {
      'X-Request-Id': 'log-secrets',
      Cookie: 'session=sekrit-cookie-value',
      'X-Slack-Signature': 'v0=slack-signature-value',
      'Webhook-Signature': 'webhook-signature-value',
    });
    await api.get('/v1/tools?token=query-token-value', undefined, {
      Authorization: 'Bearer not.a.jwt-but-secret',
      'X-Request-Id': 'log-bad-token',
    });
    await accessLine('log-secrets');
    await accessLine('log-bad-token');
    const out = server.output();
    for (const s of [...secrets, agent, 'not.a.jwt-but-secret', agent.split('.')[2]]) expect(out).not.toContain(s);
  });

  it('logs a long-poll once, when it answers', async () => {
    await api.post('/v1/conversations', agent, { id: 'polled' });
    const call = (
      await api.post('/v1/conversations/polled/tool-calls', agent, {
        toolCalls: [{ toolName: 'needs_a_person', arguments: {} }],
      })
    ).body.toolCalls[0];
    const before = await metric('tollgate_open_long_polls');
    const poll = api.get(`/v1/tool-calls/${call.id}?wait=30`, agent, { 'X-Request-Id': 'log-poll' });
    await until(async () => (await metric('tollgate_open_long_polls')) > before, 20_000, 'the long-poll waiting');
    expect(accessLines('log-poll')).toHaveLength(0); // nothing while it waits
    await api.post(`/v1/tool-calls/${call.id}/decision`, approver, { decision: 'approve' });
    expect((await poll).body.status).toBe('approved');
    expect(await accessLine('log-poll')).toMatchObject({ route: '/v1/tool-calls/:id', status: 200 });
    expect(accessLines('log-poll')).toHaveLength(1);
  });

  it('logs an event stream once, when the client leaves', async () => {
    const leave = new AbortController();
    const res = await fetch(`${server.url}/v1/events/stream`, {
      headers: { authorization: `Bearer ${approver}`, 'X-Request-Id': 'log-stream' },
      signal: leave.signal,
    });
    expect(res.status).toBe(200);
    await until(async () => (await metric('tollgate_open_event_streams')) === 1, 20_000, 'the stream open');
    expect(accessLines('log-stream')).toHaveLength(0);
    leave.abort();
    expect(await accessLine('log-stream')).toMatchObject({
      route: '/v1/events/stream',
      status: 200,
      client_closed: true,
      tenant: 'logs',
    });
    await until(async () => (await metric('tollgate_open_event_streams')) === 0, 20_000, 'the stream closed');
    expect(accessLines('log-stream')).toHaveLength(1);
  });

  it('logs probes and scrapes at debug only', async () => {
    await api.get('/health/live', undefined, { 'X-Request-Id': 'log-probe' });
    await api.post('/v1/conversations', agent, { id: 'after-probe' }, { 'X-Request-Id': 'log-after-probe' });
    await accessLine('log-after-probe'); // lines are written in order: the probe's would be there by now
    expect(accessLines('log-probe')).toHaveLength(0);
  });

  (process.env.DATABASE_URL ? it : it.skip)('logs a 5xx at error with the error and its stack', async () => {
    const name = new URL(db.url!).pathname.slice(1);
    const admin = new Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [name],
      );
      expect((await api.get('/v1/tools', agent, { 'X-Request-Id': 'log-down' })).status).toBe(503);
      expect(await accessLine('log-down')).toMatchObject({
        level: 'error',
        route: '/v1/tools',
        status: 503,
        code: 'unavailable',
        err: { message: expect.any(String), stack: expect.stringMatching(/\n\s+at /) },
      });
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await admin.end();
    }
  });

  it('says it is stopping, as JSON too, and exits 0', async () => {
    server.child.kill('SIGTERM');
    expect(await exited(server.child)).toBe(0);
    expect(jsonLines(server.stdout()).some((l) => l.msg === 'SIGTERM: finishing in-flight requests and stopping')).toBe(
      true,
    );
    expect(server.stderr()).toBe('');
  });
});

describe('tollgate serve logs on a terminal: pretty', () => {
  let db: TestDatabase;
  let term: Terminal;
  let url: string;

  beforeAll(async () => {
    db = await freshDatabase();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    term = spawnTerminal(
      ['serve'],
      serverEnv({
        PORT: String(port),
        DATABASE_URL: db.url,
        TOLLGATE_DATA_DIR: db.dataDir,
        TOLLGATE_JWT_SECRET: TEST_SECRET,
        LOG_LEVEL: 'debug',
      }),
    );
    await term.waitFor(`Tollgate listening on ${url}`, 0, 90_000);
    // The banner's lines may reach the terminal in more than one chunk: wait for its last before reading it.
    await term.waitFor(`${url}/docs`, 0, 30_000);
  }, 120_000);

  afterAll(async () => {
    if (term) {
      term.kill('SIGTERM');
      await Promise.race([term.exited(), new Promise((r) => setTimeout(r, 15_000).unref())]);
    }
    await db?.drop();
  }, 30_000);

  it('prints the banner as a few plain lines, and each request as one readable line', async () => {
    const shown = term.text();
    expect(shown).toMatch(/^\s*web inbox  http:\/\/localhost:\d+\/  sign in with/m);
    expect(shown).toMatch(/^\s*API docs   http:\/\/127\.0\.0\.1:\d+\/docs/m);
    const m = term.mark();
    const token = await mintToken(TEST_SECRET, { sub: 'bot', roles: ['agent'] }, '1h');
    expect((await fetch(`${url}/v1/tools`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    const line = await term.waitFor(/INFO: GET \/v1\/tools 200 \d+ms \{[^\n]*\}/, m);
    expect(line).toContain('"principal":{"sub":"bot","roles":["agent"]}');
    expect(line).not.toMatch(/^\{/);
  });

  it('shows the route mapping at debug', () => {
    expect(term.text()).toMatch(/DEBUG: \[RouterExplorer\] Mapped \{\/v1\/tools, GET\} route/);
  });
});
