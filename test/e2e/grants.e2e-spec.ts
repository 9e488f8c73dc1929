/**
 * Standing grants as a managed resource, through HTTP on a real database: GET /v1/grants lists them (filters,
 * pages), DELETE /v1/grants/{id} revokes one (it stops applying at the next proposal, on any instance, and
 * GrantRevoked joins the hash chain), `expiresIn` gives one a lifetime and `args` narrows it to matching calls.
 */
import { eventsOf, expectIntactChain } from '../support/audit';
import { freshDatabase, TestDatabase } from '../support/database';
import { client, Reply } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
});

afterAll(async () => {
  await server?.stop();
});

function expectProblem(res: Reply, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

const POLICY = {
  rules: [
    { match: 'shell', level: 'confirm' },
    { match: 'deploy', level: 'confirm' },
    { match: 'email', level: 'confirm' },
  ],
};

/** A tenant of its own with the confirm-everything policy, and what a test needs to act in it. */
async function tenant(name: string, h: ReturnType<typeof client> = http, s: TestServer = server) {
  let n = 0;
  const t = {
    name,
    admin: await s.token(`${name}-root`, ['admin'], { tenant: name, name: 'Root' }),
    approver: await s.token('alice', ['approver'], { tenant: name }),
    auditor: await s.token('audrey', ['auditor'], { tenant: name }),
    agent: await s.token('bot', ['agent'], { tenant: name }),
    requester: await s.token('rita', [], { tenant: name }),
    /** Proposes one call in `conv` (started on first use); answers the call as proposed. */
    async propose(conv: string, toolName: string, args: Record<string, unknown> = {}, via = h) {
      await via.post('/v1/conversations', t.agent, { id: conv, user: { id: 'rita', roles: [] } });
      const res = await via.post(`/v1/conversations/${conv}/tool-calls`, t.agent, {
        toolCalls: [{ id: `c${++n}`, toolName, arguments: args }],
      });
      expect(res.status).toBe(201);
      return res.body.toolCalls[0];
    },
    /** A pending call in `conv`, always allowed by `token` with `body`; answers the grant made. */
    async grant(
      token: string,
      conv: string,
      toolName: string,
      body: Record<string, unknown> = {},
      args: Record<string, unknown> = {},
    ) {
      const call = await t.propose(conv, toolName, args);
      expect(call.status).toBe('pending');
      const res = await h.post(`/v1/tool-calls/${call.id}/decision`, token, { decision: 'always_allow', ...body });
      expect(res.status).toBe(200);
      const list = await h.get(`/v1/grants?status=all&tool=${toolName}`, t.admin);
      const made = list.body.items.find((g: any) => g.sourceToolCallId === call.id);
      expect(made).toBeDefined();
      return made;
    },
    revoke: (token: string, id: string, body?: unknown, query = '') =>
      h.call('DELETE', `/v1/grants/${id}${query}`, { token, body }),
    auditOf: async (type: string) => (await h.get(`/v1/audit/events?type=${type}`, t.auditor)).body.events,
  };
  expect((await h.put('/v1/policy', t.admin, POLICY)).status).toBe(200);
  return t;
}

describe('listing grants', () => {
  let t: Awaited<ReturnType<typeof tenant>>;
  const made: any[] = [];

  beforeAll(async () => {
    t = await tenant('grants-list');
    made.push(await t.grant(t.approver, 'list-1', 'shell', { scope: 'conversation' }));
    made.push(await t.grant(t.admin, 'list-2', 'deploy', { scope: 'agent', expiresIn: 3600 }));
    made.push(await t.grant(t.admin, 'list-3', 'shell', { scope: 'tenant', args: { cmd: 'ls *' } }));
    made.push(await t.grant(t.admin, 'list-4', 'email', { scope: 'tenant' }));
    expect((await t.revoke(t.admin, made[3].id, { reason: 'not needed' })).status).toBe(200);
  });

  it('shows each grant with its scope, pattern, author, lifetime and source call, newest first, active ones by default', async () => {
    const res = await http.get('/v1/grants', t.approver);
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    expect(res.body.items.map((g: any) => g.id)).toEqual([made[2].id, made[1].id, made[0].id]);
    expect(res.body.items[0]).toEqual({
      id: made[2].id,
      toolName: 'shell',
      scope: 'tenant',
      conversationId: null,
      agentId: null,
      args: { cmd: 'ls *' },
      pattern: 'shell(cmd=ls *)',
      status: 'active',
      createdBy: { id: 'grants-list-root', name: 'Root', via: 'api' },
      createdAt: expect.any(String),
      expiresAt: null,
      revokedAt: null,
      revokedBy: null,
      revokeReason: null,
      sourceToolCallId: made[2].sourceToolCallId,
      effect: 'allow',
      uses: null,
      usesLeft: null,
    });
    expect(res.body.items[1]).toMatchObject({
      scope: 'agent',
      agentId: 'bot',
      conversationId: null,
      pattern: 'deploy',
      args: null,
    });
    expect(Date.parse(res.body.items[1].expiresAt) - Date.parse(res.body.items[1].createdAt)).toBe(3600_000);
    expect(res.body.items[2]).toMatchObject({
      scope: 'conversation',
      conversationId: 'list-1',
      createdBy: { id: 'alice' },
    });
  });

  it('filters by tool, scope and status', async () => {
    const ids = async (q: string) => (await http.get(`/v1/grants?${q}`, t.auditor)).body.items.map((g: any) => g.id);
    expect(await ids('tool=shell')).toEqual([made[2].id, made[0].id]);
    expect(await ids('scope=agent')).toEqual([made[1].id]);
    expect(await ids('tool=shell&scope=conversation')).toEqual([made[0].id]);
    expect(await ids('status=revoked')).toEqual([made[3].id]);
    expect(await ids('status=expired')).toEqual([]);
    expect(await ids('status=all')).toEqual([made[3].id, made[2].id, made[1].id, made[0].id]);
    const revoked = (await http.get('/v1/grants?status=revoked', t.auditor)).body.items[0];
    expect(revoked).toMatchObject({
      status: 'revoked',
      revokedBy: { id: 'grants-list-root', via: 'api' },
      revokeReason: 'not needed',
      revokedAt: expect.any(String),
    });
  });

  it('pages with limit and cursor', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: Reply = await http.get(`/v1/grants?status=all&limit=1${cursor ? `&cursor=${cursor}` : ''}`, t.admin);
      expect(res.body.items).toHaveLength(1);
      seen.push(res.body.items[0].id);
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([made[3].id, made[2].id, made[1].id, made[0].id]);
  });

  it('refuses bad filters with 400', async () => {
    expectProblem(await http.get('/v1/grants?status=gone', t.admin), 400, 'validation_failed');
    expectProblem(await http.get('/v1/grants?scope=world', t.admin), 400, 'validation_failed');
    expectProblem(await http.get('/v1/grants?cursor=nonsense', t.admin), 400, 'validation_failed');
    expectProblem(await http.get('/v1/grants?limit=0', t.admin), 400, 'validation_failed');
  });

  it('is for the people who decide or audit: agents and end users without a role get 403', async () => {
    expectProblem(await http.get('/v1/grants', t.agent), 403, 'forbidden');
    expectProblem(await http.get('/v1/grants', t.requester), 403, 'forbidden');
    expectProblem(await http.get('/v1/grants'), 401, 'unauthenticated');
  });

  it("shows only the caller's tenant", async () => {
    const other = await server.token('root', ['admin'], { tenant: 'grants-list-other' });
    expect((await http.get('/v1/grants?status=all', other)).body.items).toEqual([]);
  });
});

describe('revoking a grant', () => {
  let t: Awaited<ReturnType<typeof tenant>>;

  beforeAll(async () => {
    t = await tenant('grants-revoke');
  });

  it('stops it applying at the next proposal, records GrantRevoked in an intact chain, and answers the same again', async () => {
    const g = await t.grant(t.admin, 'rv-1', 'deploy', { scope: 'tenant' });
    const covered = await t.propose('rv-2', 'deploy');
    expect(covered).toMatchObject({
      status: 'approved',
      policy: { reason: `Allowed by standing grant ${g.id} (scope tenant)` },
    });

    const res = await http.call('DELETE', `/v1/grants/${g.id}`, {
      token: t.admin,
      body: { reason: 'too wide' },
      headers: { 'x-tollgate-channel': 'cli' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: g.id,
      status: 'revoked',
      revokedBy: { id: 'grants-revoke-root', via: 'cli' },
      revokeReason: 'too wide',
    });

    expect(await t.propose('rv-2', 'deploy')).toMatchObject({ status: 'pending', policy: { level: 'confirm' } });
    expect(await t.propose('rv-3', 'deploy')).toMatchObject({ status: 'pending' });

    const again = await t.revoke(t.admin, g.id, { reason: 'something else' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(res.body);

    const events = await t.auditOf('GrantRevoked');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'GrantRevoked',
      toolName: 'deploy',
      actor: { id: 'grants-revoke-root', kind: 'person', via: 'cli' },
      data: {
        grantId: g.id,
        scope: 'tenant',
        scopeId: null,
        revokedBy: 'grants-revoke-root',
        via: 'cli',
        reason: 'too wide',
      },
    });
    expectIntactChain(await eventsOf(server.dataSource, 'grants-revoke'));
  });

  it('takes the reason from the query too', async () => {
    const g = await t.grant(t.approver, 'rv-q', 'shell');
    const res = await t.revoke(t.approver, g.id, undefined, '?reason=done%20here');
    expect(res.body).toMatchObject({ status: 'revoked', revokeReason: 'done here' });
  });

  it('follows who may make such a grant: an approver a conversation grant, only an admin an agent or tenant grant', async () => {
    // Each for a tool of its own (unknown tools are held by default), so no grant covers another's source call.
    const wide = await t.grant(t.admin, 'rv-4', 'email_a', { scope: 'tenant' });
    const agentWide = await t.grant(t.admin, 'rv-5', 'email_b', { scope: 'agent' });
    const narrow = await t.grant(t.approver, 'rv-6', 'email_c', { scope: 'conversation' });
    expectProblem(await t.revoke(t.approver, wide.id), 403, 'forbidden');
    expectProblem(await t.revoke(t.approver, agentWide.id), 403, 'forbidden');
    expectProblem(await t.revoke(t.agent, narrow.id), 403, 'forbidden');
    expectProblem(await t.revoke(t.auditor, narrow.id), 403, 'forbidden');
    expectProblem(await t.revoke(t.requester, narrow.id), 403, 'forbidden');
    // The refused attempts changed nothing.
    for (const g of [wide, agentWide, narrow])
      expect((await http.get(`/v1/grants?tool=${g.toolName}`, t.admin)).body.items.map((x: any) => x.id)).toEqual([
        g.id,
      ]);
    expect((await t.revoke(t.approver, narrow.id)).body.status).toBe('revoked');
    expect((await t.revoke(t.admin, wide.id)).body.status).toBe('revoked');
  });

  it("answers 404 for an unknown id and for another tenant's grant", async () => {
    const g = await t.grant(t.admin, 'rv-7', 'shell', { scope: 'tenant' });
    const stranger = await server.token('root', ['admin'], { tenant: 'grants-revoke-other' });
    expectProblem(await t.revoke(stranger, g.id), 404, 'not_found');
    expectProblem(await t.revoke(t.admin, 'grant_nope'), 404, 'not_found');
    expect((await http.get(`/v1/grants?tool=shell&scope=tenant`, t.admin)).body.items[0]).toMatchObject({
      id: g.id,
      status: 'active',
    });
  });

  it('refuses an unknown body field', async () => {
    const g = await t.grant(t.admin, 'rv-8', 'unregistered_tool');
    expectProblem(await t.revoke(t.admin, g.id, { because: 'x' }), 400, 'validation_failed');
  });
});

describe('a grant with a lifetime (expiresIn)', () => {
  let t: Awaited<ReturnType<typeof tenant>>;

  beforeAll(async () => {
    t = await tenant('grants-expiry');
  });

  it('applies until it expires, then no longer; the list shows it expired', async () => {
    const g = await t.grant(t.admin, 'ex-1', 'deploy', { scope: 'tenant', expiresIn: 2 });
    expect(Date.parse(g.expiresAt) - Date.parse(g.createdAt)).toBe(2000);
    // Proposes until a proposal is held: while the grant lives each one is let through by it; the one held
    // must come once the server's clock passed expiresAt (no duration is assumed).
    let i = 0;
    for (;;) {
      const call = await t.propose(`ex-2-${++i}`, 'deploy');
      if (call.status === 'pending') break;
      expect(call).toMatchObject({ status: 'approved', policy: { reason: expect.stringContaining(g.id) } });
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(i).toBeGreaterThan(1); // it did apply at first
    expect((await http.get('/v1/grants?status=expired', t.admin)).body.items.map((x: any) => x.id)).toEqual([g.id]);
    expect(await t.propose('ex-3', 'deploy')).toMatchObject({ status: 'pending' });
    expect((await http.get('/v1/grants', t.admin)).body.items).toEqual([]);
    expect((await t.auditOf('GrantCreated'))[0].data).toMatchObject({ grantId: g.id, expiresAt: g.expiresAt });
  }, 30_000);

  it.each([
    [{ decision: 'always_allow', expiresIn: 0 }, 'expiresIn'],
    [{ decision: 'always_allow', expiresIn: -1 }, 'expiresIn'],
    [{ decision: 'always_allow', expiresIn: 90 * 86400 + 1 }, 'expiresIn'],
    [{ decision: 'always_allow', expiresIn: 1.5 }, 'expiresIn'],
    [{ decision: 'always_allow', expiresIn: '1h' }, 'expiresIn'],
    [{ decision: 'approve', expiresIn: 60 }, 'expiresIn'],
    [{ decision: 'reject', args: { cmd: 'x' } }, 'args'],
  ])('refuses %j with 400 naming %s, and the call stays pending', async (body, path) => {
    const call = await t.propose(`ex-bad-${path}-${JSON.stringify(body)}`.replace(/[^\w.:-]/g, '_'), 'shell');
    const res = await http.post(`/v1/tool-calls/${call.id}/decision`, t.admin, body);
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.errors.map((e: any) => e.path)).toEqual([path]);
    expect((await http.get(`/v1/tool-calls/${call.id}`, t.admin)).body.status).toBe('pending');
  });
});

describe('a grant with an argument pattern (args)', () => {
  let t: Awaited<ReturnType<typeof tenant>>;

  beforeAll(async () => {
    t = await tenant('grants-args');
  });

  it('covers only the calls whose arguments match its globs', async () => {
    const g = await t.grant(t.admin, 'ar-1', 'shell', { scope: 'tenant', args: { cmd: 'ls *' } }, { cmd: 'ls /tmp' });
    expect(g).toMatchObject({ args: { cmd: 'ls *' }, pattern: 'shell(cmd=ls *)' });
    expect(await t.propose('ar-2', 'shell', { cmd: 'ls -la' })).toMatchObject({ status: 'approved' });
    expect(await t.propose('ar-3', 'shell', { cmd: 'rm -rf /' })).toMatchObject({ status: 'pending' });
    expect(await t.propose('ar-4', 'shell', {})).toMatchObject({ status: 'pending' });
    expect((await t.auditOf('GrantCreated'))[0].data).toMatchObject({ grantId: g.id, args: { cmd: 'ls *' } });
  });

  it.each([
    [{ args: 'ls *' }, 'args'],
    [{ args: {} }, 'args'],
    [{ args: { cmd: 7 } }, 'args.cmd'],
    [{ args: { 'bad name': 'x' } }, 'args.bad name'],
    [{ args: { cmd: 'ls, path=/etc' } }, 'args.cmd'],
  ])('refuses %j with 400 naming %s', async (extra, path) => {
    const call = await t.propose(`ar-bad-${JSON.stringify(extra)}`.replace(/[^\w.:-]/g, '_'), 'shell', { cmd: 'ls' });
    const res = await http.post(`/v1/tool-calls/${call.id}/decision`, t.approver, {
      decision: 'always_allow',
      ...extra,
    });
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.errors.map((e: any) => e.path)).toEqual([path]);
  });
});

/** PostgreSQL only: the embedded database is one process's. */
const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;

onPostgres('two instances sharing one PostgreSQL', () => {
  let db: TestDatabase;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    db = await freshDatabase();
    a = await startTestServer({ instanceId: 'a' }, { db });
    b = await startTestServer({ instanceId: 'b' }, { db });
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await db?.drop();
  });

  it('a grant revoked on A no longer applies to a proposal on B', async () => {
    const onA = client(a.url);
    const onB = client(b.url);
    const t = await tenant('grants-two', onA, a);
    const g = await t.grant(t.admin, 'two-1', 'deploy', { scope: 'tenant' });
    expect(await t.propose('two-2', 'deploy', {}, onB)).toMatchObject({ status: 'approved' });
    expect((await t.revoke(t.admin, g.id)).status).toBe(200);
    expect(await t.propose('two-2', 'deploy', {}, onB)).toMatchObject({ status: 'pending' });
    expect(await t.propose('two-3', 'deploy', {}, onB)).toMatchObject({ status: 'pending' });
  }, 60_000);
});
