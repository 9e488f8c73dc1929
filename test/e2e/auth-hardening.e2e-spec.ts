/**
 * Authentication hardening (issue 11): an agent token never gains a person's powers whatever else it claims (4),
 * issuer and audience hold in every mode (10), weak secrets are refused at start (11), and token lifetimes are
 * bounded (17).
 */
import { SignJWT } from 'jose';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/infrastructure/config/config';
import { freshDatabase } from '../support/database';
import { client, Reply } from '../support/http';
import { startTestServer, TEST_SECRET, TestServer } from '../support/server';

const BIN = join(__dirname, '..', '..', 'bin', 'tollgate.js');
const now = () => Math.floor(Date.now() / 1000);
const HOUR = 3600;

function expectProblem(res: Reply, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

/** An HS256 token with exactly these claims (no defaults added), signed with the test secret. */
function sign(payload: Record<string, unknown>, secret = TEST_SECRET) {
  return new SignJWT(payload).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(secret));
}

/** The CLI as an operator runs it, with only the environment given (no secret or database inherited). */
function cli(args: string[], extra: Record<string, string>) {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('TOLLGATE_') || k === 'DATABASE_URL') delete env[k];
  return spawnSync(process.execPath, [BIN, ...args], { env: { ...env, ...extra }, encoding: 'utf8', timeout: 60_000 });
}

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());

describe('a token that carries agent acts as an agent everywhere (finding 4)', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let dual: string; // agent + admin (+ approver, auditor): must act as a plain agent
  let admin: string;
  let agent: string;
  let ownCall: { id: string }; // pending, in the dual token's own conversation
  let otherCall: { id: string }; // pending, in another agent's conversation
  let webhookId: string;

  beforeAll(async () => {
    server = await startTestServer();
    api = client(server.url);
    dual = await server.token('agent-dual', ['agent', 'admin', 'approver', 'auditor']);
    admin = await server.token('root', ['admin']);
    agent = await server.token('agent-1', ['agent']);
    expect((await api.post('/v1/conversations', agent, { id: 'other', user: { id: 'uma' } })).status).toBe(201);
    [otherCall] = (
      await api.post('/v1/conversations/other/tool-calls', agent, {
        toolCalls: [{ toolName: 'send_email', arguments: {} }],
      })
    ).body.toolCalls;
    expect((await api.put('/v1/tools/admin_tool', admin, { destructive: true })).status).toBe(201);
    const hook = await api.post('/v1/webhooks', admin, {
      url: 'http://127.0.0.1:9/hook',
      events: ['ToolCallApproved'],
    });
    expect(hook.status).toBe(201);
    webhookId = hook.body.id;
  });
  afterAll(() => server?.stop());

  it('still works as an agent: starts a conversation, registers a tool and proposes', async () => {
    expect((await api.post('/v1/conversations', dual, { id: 'dual-own', user: { id: 'uma' } })).status).toBe(201);
    const reg = await api.put('/v1/tools/dual_tool', dual, { requiresApproval: true });
    expect(reg.status).toBe(201);
    const proposed = await api.post('/v1/conversations/dual-own/tool-calls', dual, {
      toolCalls: [{ toolName: 'send_email', arguments: { to: 'x' } }],
    });
    expect(proposed.status).toBe(201);
    ownCall = proposed.body.toolCalls[0];
    expect(ownCall).toMatchObject({ status: 'pending' });
    expect((await api.get(`/v1/tool-calls/${ownCall.id}`, dual)).status).toBe(200);
  });

  it('sees only the conversations it started', async () => {
    const list = await api.get('/v1/conversations', dual);
    expect(list.status).toBe(200);
    expect(list.body.items.map((c: { id: string }) => c.id)).toEqual(['dual-own']);
    expect((await api.get('/v1/conversations/other', dual)).status).not.toBe(200);
    expect((await api.get(`/v1/tool-calls/${otherCall.id}`, dual)).status).not.toBe(200);
  });

  const ADMIN_ROUTES: Array<[string, string, () => unknown]> = [
    ['PUT', '/v1/policy', () => ({ rules: [{ match: '*', level: 'automatic' }] })],
    ['POST', '/v1/halt', () => ({ scope: 'tenant', reason: 'mine now' })],
    ['POST', '/v1/resume', () => ({ scope: 'tenant' })],
    ['GET', '/v1/status', () => undefined],
    ['PUT', '/v1/tools/admin_tool', () => ({ destructive: false })], // an admin's registration, not an agent's to change
    ['GET', '/v1/approvals', () => undefined],
    ['POST', '/v1/webhooks', () => ({ url: 'http://127.0.0.1:9/mine', events: ['ToolCallApproved'] })],
    ['GET', '/v1/webhooks', () => undefined],
    ['GET', '/v1/webhooks/:webhook', () => undefined],
    ['GET', '/v1/webhooks/:webhook/deliveries', () => undefined],
    ['DELETE', '/v1/webhooks/:webhook', () => undefined],
    ['GET', '/v1/audit/events', () => undefined],
    ['GET', '/v1/audit/export', () => undefined],
    ['GET', '/v1/audit/verify', () => undefined],
    ['GET', '/v1/audit/checkpoint', () => undefined],
    ['GET', '/v1/audit/metrics', () => undefined],
    ['GET', '/v1/audit/gaps', () => undefined],
    ['POST', '/v1/audit/purge', () => ({ before: '2000-01-01T00:00:00Z', reason: 'cover my tracks' })],
    ['POST', '/v1/tool-calls/:own/decision', () => ({ decision: 'approve' })],
    ['POST', '/v1/tool-calls/:own/decision', () => ({ decision: 'always_allow', scope: 'tenant' })],
    ['POST', '/v1/tool-calls/:other/decision', () => ({ decision: 'approve' })],
  ];

  it.each(ADMIN_ROUTES)('%s %s answers 403 forbidden to an agent+admin token', async (method, route, body) => {
    const path = route.replace(':webhook', webhookId).replace(':own', ownCall.id).replace(':other', otherCall.id);
    const res = await api.call(method, path, { token: dual, body: body() });
    // A decision on another agent's conversation may hide it (404); it must never succeed.
    if (route.includes(':other')) expect([403, 404]).toContain(res.status);
    else expectProblem(res, 403, 'forbidden');
  });

  it('changed nothing: the policy, halts, webhooks and calls are as they were', async () => {
    expect((await api.get('/v1/policy', admin)).body.version).toBe(0);
    expect((await api.get('/v1/tools/admin_tool', admin)).body).toMatchObject({ destructive: true });
    expect((await api.get('/v1/status', admin)).body).toMatchObject({ halts: [] });
    expect((await api.get(`/v1/webhooks/${webhookId}`, admin)).status).toBe(200);
    expect((await api.get(`/v1/tool-calls/${ownCall.id}`, admin)).body.status).toBe('pending');
    expect((await api.get(`/v1/tool-calls/${otherCall.id}`, admin)).body.status).toBe('pending');
  });

  it('its event stream shows only its own conversations', async () => {
    const ctl = new AbortController();
    const res = await fetch(`${server.url}/v1/events/stream?lastEventId=0`, {
      headers: { authorization: `Bearer ${dual}` },
      signal: ctl.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    // Read until the dual token's own proposal has arrived: everything before it is in the backlog too.
    while (!text.includes(`"toolCallId":"${ownCall.id}"`))
      text += new TextDecoder().decode((await reader.read()).value);
    ctl.abort();
    const events = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]));
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e) => e.conversationId === 'dual-own')).toBe(true);
  });
});

describe('token lifetimes are bounded (finding 17)', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  const claims = { sub: 'alice', roles: ['approver'] };

  beforeAll(async () => {
    server = await startTestServer(); // maxTtlSeconds left out: 24 h by default
    api = client(server.url);
  });
  afterAll(() => server?.stop());

  it('accepts a token that lives up to 24 hours', async () => {
    const t = now();
    expect((await api.get('/v1/approvals', await sign({ ...claims, iat: t, exp: t + 24 * HOUR }))).status).toBe(200);
    expect((await api.get('/v1/approvals', await sign({ ...claims, exp: t + 23 * HOUR }))).status).toBe(200);
  });

  it('refuses a token whose exp − iat exceeds the maximum', async () => {
    const t = now();
    expectProblem(
      await api.get('/v1/approvals', await sign({ ...claims, iat: t, exp: t + 24 * HOUR + 60 })),
      401,
      'unauthenticated',
    );
    // Issued long ago with a far expiry: still a year-long token, even if little of it is left.
    expectProblem(
      await api.get('/v1/approvals', await sign({ ...claims, iat: t - 364 * 24 * HOUR, exp: t + 24 * HOUR })),
      401,
      'unauthenticated',
    );
  });

  it('refuses a token without iat that expires further away than the maximum', async () => {
    expectProblem(
      await api.get('/v1/approvals', await sign({ ...claims, exp: now() + 30 * 24 * HOUR })),
      401,
      'unauthenticated',
    );
  });

  it('refuses iat in the future beyond the clock skew, and allows it within', async () => {
    const t = now();
    const r = await api.get('/v1/approvals', await sign({ ...claims, iat: t + 120, exp: t + HOUR }));
    expectProblem(r, 401, 'unauthenticated');
    expect(r.body.detail).toMatch(/iat/);
    expect((await api.get('/v1/approvals', await sign({ ...claims, iat: t + 10, exp: t + HOUR }))).status).toBe(200);
  });

  it('follows a configured maximum', async () => {
    const short = await startTestServer(
      { auth: { secret: TEST_SECRET, devSecret: false, maxTtlSeconds: HOUR } },
      { db: server.db },
    );
    try {
      const t = now();
      const a = client(short.url);
      expect((await a.get('/v1/approvals', await sign({ ...claims, iat: t, exp: t + HOUR }))).status).toBe(200);
      expectProblem(
        await a.get('/v1/approvals', await sign({ ...claims, iat: t, exp: t + 2 * HOUR })),
        401,
        'unauthenticated',
      );
    } finally {
      await short.stop();
    }
  });
});

describe('issuer and audience hold with a shared secret too (finding 10)', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  const ISSUER = 'https://tollgate.example.test/';
  const AUDIENCE = 'tollgate-api';
  const base = () => ({ sub: 'alice', roles: ['approver'], exp: now() + 600 });

  beforeAll(async () => {
    server = await startTestServer({
      auth: { secret: TEST_SECRET, devSecret: false, issuer: ISSUER, audience: AUDIENCE },
    });
    api = client(server.url);
  });
  afterAll(() => server?.stop());

  it('refuses an HS256 token without the configured iss and aud, or with others', async () => {
    for (const extra of [
      {},
      { iss: ISSUER },
      { aud: AUDIENCE },
      { iss: 'https://evil.test/', aud: AUDIENCE },
      { iss: ISSUER, aud: 'someone-else' },
    ]) {
      const res = await api.get('/v1/approvals', await sign({ ...base(), ...extra }));
      expect({ extra, status: res.status, code: res.body?.code }).toEqual({
        extra,
        status: 401,
        code: 'unauthenticated',
      });
    }
  });

  it('accepts an HS256 token with the configured iss and aud', async () => {
    expect((await api.get('/v1/approvals', await sign({ ...base(), iss: ISSUER, aud: AUDIENCE }))).status).toBe(200);
  });

  it('`tollgate token` sets the configured iss and aud, so its tokens pass', async () => {
    const r = cli(['token', '--sub', 'alice', '--role', 'approver'], {
      TOLLGATE_JWT_SECRET: TEST_SECRET,
      TOLLGATE_JWT_ISSUER: ISSUER,
      TOLLGATE_JWT_AUDIENCE: AUDIENCE,
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const token = r.stdout.trim();
    expect(claimsOf(token)).toMatchObject({ iss: ISSUER, aud: AUDIENCE });
    expect((await api.get('/v1/approvals', token)).status).toBe(200);
  });
});

describe('`tollgate token` mints only tokens the server accepts (finding 17)', () => {
  it('refuses a --ttl longer than TOLLGATE_JWT_MAX_TTL, saying so', () => {
    const r = cli(['token', '--sub', 'alice', '--role', 'approver', '--ttl', '2d'], {
      TOLLGATE_JWT_SECRET: TEST_SECRET,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/TOLLGATE_JWT_MAX_TTL/);
    expect(r.stdout).toBe('');
    const longer = cli(['token', '--sub', 'alice', '--role', 'approver', '--ttl', '2d'], {
      TOLLGATE_JWT_SECRET: TEST_SECRET,
      TOLLGATE_JWT_MAX_TTL: '72h',
    });
    expect(longer.status).toBe(0);
  });

  it('mints its default 8 h token and a --ttl within the maximum', () => {
    for (const [args, seconds] of [
      [[], 8 * HOUR],
      [['--ttl', '24h'], 24 * HOUR],
    ] as const) {
      const r = cli(['token', '--sub', 'alice', '--role', 'approver', ...args], { TOLLGATE_JWT_SECRET: TEST_SECRET });
      expect(r.status).toBe(0);
      const c = claimsOf(r.stdout.trim());
      expect(c.exp - c.iat).toBe(seconds);
    }
  });
});

describe('a short TOLLGATE_JWT_SECRET is refused at start (finding 11)', () => {
  it('does not start with a secret under 32 bytes', async () => {
    const db = await freshDatabase();
    try {
      const start = startTestServer({ auth: { secret: 'x'.repeat(31), devSecret: false } }, { db });
      await expect(start).rejects.toBeInstanceOf(ConfigError);
      await expect(start).rejects.toThrow(/TOLLGATE_JWT_SECRET is 31 bytes.*at least 32 bytes/);
    } finally {
      await db.drop();
    }
  });

  it('`tollgate token` will not sign with such a secret either', () => {
    const r = cli(['token', '--sub', 'alice', '--role', 'approver'], { TOLLGATE_JWT_SECRET: 'short' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/TOLLGATE_JWT_SECRET is 5 bytes.*at least 32 bytes/);
    expect(r.stdout).toBe('');
  });

  it('`tollgate serve` exits with 2 and says what is wrong', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-secret-'));
    try {
      // An unreachable database: the secret must be refused before anything is opened.
      const r = cli(['serve'], {
        TOLLGATE_JWT_SECRET: 'k',
        TOLLGATE_DATA_DIR: dir,
        PORT: '0',
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      });
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/TOLLGATE_JWT_SECRET is 1 byte.*at least 32 bytes/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
