import * as grpc from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import { Writable } from 'node:stream';
import { mintToken } from '../../src/infrastructure/auth/jwt-verifier';
import { loadConfig, TollgateConfig } from '../../src/infrastructure/config/config';
import { RunningServer, startServer } from '../../src/server';
import { freshDatabase, TestDatabase } from '../support/database';
import { TollgateGrpc } from '../support/grpc';
import { client } from '../support/http';
import { CLI_CLIENT_ID, startOidcProvider, TestProvider } from '../support/oidc-provider';
import { startTestServer, TEST_SECRET } from '../support/server';

/**
 * The requester's own identity: an agent passes the end user's token from the identity provider (`user.token`),
 * Tollgate verifies it with the keys of people's tokens and records the user as `verified`; a user the agent names
 * is `asserted`. A rule with `requireVerifiedUser` acts only for a verified one. The agent must never hold a token
 * that works as a Tollgate credential, and the token itself is never shown, stored or logged.
 */

const API_AUDIENCE = 'tollgate-api';
const AGENT_APP = 'agent-app';
const TENANT = 'acme';

/** An HS256 token signed with the server's secret, as the agent application's issuer would make one. */
function hsToken(
  claims: { sub: string; roles?: string[]; tenant?: string; name?: string },
  opts: { audience?: string | string[]; ttl?: string; secret?: string; exp?: number } = {},
): Promise<string> {
  let jwt = new SignJWT({
    roles: claims.roles ?? [],
    tenant: claims.tenant ?? TENANT,
    ...(claims.name ? { name: claims.name } : {}),
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuedAt(opts.exp !== undefined ? opts.exp - 600 : undefined)
    .setExpirationTime(opts.exp ?? opts.ttl ?? '10m');
  if (opts.audience !== undefined) jwt = jwt.setAudience(opts.audience);
  return jwt.sign(new TextEncoder().encode(opts.secret ?? TEST_SECRET));
}

describe('verified requesters (user.token)', () => {
  let idp: TestProvider;
  let db: TestDatabase;
  let running: RunningServer;
  let api: ReturnType<typeof client>;
  let rpc: TollgateGrpc;
  let agent: string;
  let admin: string;
  let auditor: string;
  const logs: string[] = [];
  /** Every user token the tests sent: none may come back in an answer, an event or a log line. */
  const sent: string[] = [];

  beforeAll(async () => {
    idp = await startOidcProvider({});
    db = await freshDatabase();
    const config: TollgateConfig = {
      ...loadConfig({}),
      host: '127.0.0.1',
      port: 0,
      grpcPort: 0,
      databaseUrl: db.url,
      dataDir: db.dataDir,
      auth: { secret: TEST_SECRET, audience: API_AUDIENCE, userTokenAudiences: [AGENT_APP], devSecret: false },
      rateLimitPer10s: 0,
      authFailuresPer10s: 0,
      instanceId: 'test',
      oidc: idp.oidcConfig(),
    };
    running = await startServer(config, {
      logLevels: ['verbose'],
      logDestination: new Writable({
        write(chunk: Buffer, _enc, next) {
          logs.push(chunk.toString('utf8'));
          next();
        },
      }),
    });
    await idp.registerTollgate(running.url);
    api = client(running.url);
    rpc = new TollgateGrpc(running.grpcAddress!);
    const opts = { audience: API_AUDIENCE };
    agent = await mintToken(TEST_SECRET, { sub: 'bot', roles: ['agent'], tenant: TENANT }, '1h', opts);
    admin = await mintToken(TEST_SECRET, { sub: 'root', roles: ['admin'], tenant: TENANT }, '1h', opts);
    auditor = await mintToken(TEST_SECRET, { sub: 'audrey', roles: ['auditor'], tenant: TENANT }, '1h', opts);
    const policy = {
      rules: [
        { match: 'refund_*', level: 'confirm', requireVerifiedUser: true },
        { match: 'lookup_*', level: 'automatic' },
      ],
    };
    expect((await api.put('/v1/policy', admin, policy)).status).toBe(200);
  });

  afterAll(async () => {
    rpc?.close();
    await running?.close();
    await db?.drop();
    await idp?.close();
  });

  async function start(user: Record<string, unknown>) {
    if (typeof user.token === 'string') sent.push(user.token);
    return api.post('/v1/conversations', agent, { user });
  }

  it('records a user verified from their own token: id, roles and name from it', async () => {
    const token = await hsToken({ sub: 'ann', roles: ['finance'], name: 'Ann' }, { audience: AGENT_APP });
    const res = await start({ token });
    expect(res.status).toBe(201);
    expect(res.body.user).toEqual({ id: 'ann', roles: ['finance'], name: 'Ann', assurance: 'verified' });
    const read = await api.get(`/v1/conversations/${res.body.id}`, agent);
    expect(read.body.user).toEqual({ id: 'ann', roles: ['finance'], name: 'Ann', assurance: 'verified' });
    // The same id beside the token is fine.
    const same = await start({ id: 'ann', token: await hsToken({ sub: 'ann' }, { audience: AGENT_APP }) });
    expect(same.status).toBe(201);
    expect(same.body.user).toEqual({ id: 'ann', roles: [], assurance: 'verified' });
    const events = await api.get(`/v1/audit/events?conversationId=${res.body.id}&type=ConversationStarted`, auditor);
    expect(events.body.events.map((e: any) => e.data.user)).toEqual([
      { id: 'ann', roles: ['finance'], name: 'Ann', assurance: 'verified' },
    ]);
  });

  it("maps a provider's token as a person's (the role map, the tenant claim), an ID token with a nonce included", async () => {
    const token = await idp.sign(
      { sub: 'bea', groups: ['payments-leads', 'unmapped'], org: TENANT, name: 'Bea', nonce: 'n-1' },
      { audience: AGENT_APP },
    );
    const res = await start({ token });
    expect(res.status).toBe(201);
    expect(res.body.user).toEqual({ id: 'bea', roles: ['approver'], name: 'Bea', assurance: 'verified' });
  });

  it('records a user the agent names as asserted, as before', async () => {
    const res = await start({ id: 'carl', roles: ['finance'], name: 'Carl' });
    expect(res.status).toBe(201);
    expect(res.body.user).toEqual({ id: 'carl', roles: ['finance'], name: 'Carl', assurance: 'asserted' });
    const list = await api.get('/v1/conversations?limit=100', admin);
    expect(list.body.items.find((c: any) => c.id === res.body.id).user.assurance).toBe('asserted');
  });

  it('requireVerifiedUser denies a call for an asserted user and holds the same call for a verified one', async () => {
    const asserted = (await start({ id: 'ann', roles: ['finance'] })).body.id;
    const verified = (await start({ token: await hsToken({ sub: 'ann' }, { audience: AGENT_APP }) })).body.id;
    const propose = (conv: string) =>
      api.post(`/v1/conversations/${conv}/tool-calls`, agent, {
        toolCalls: [{ toolName: 'refund_order', arguments: { order: 'o-1' } }],
      });
    const denied = await propose(asserted);
    expect(denied.status).toBe(201);
    expect(denied.body.toolCalls[0]).toMatchObject({ status: 'rejected', policy: { level: 'deny', rule: 0 } });
    expect(denied.body.toolCalls[0].policy.reason).toMatch(/requires a verified user/);
    const held = await propose(verified);
    expect(held.body.toolCalls[0]).toMatchObject({ status: 'pending', policy: { level: 'confirm', rule: 0 } });
    // The inbox shows whom the call is for, and how Tollgate knows them.
    const inbox = await api.get('/v1/approvals', admin);
    const entry = inbox.body.items.find((i: any) => i.id === held.body.toolCalls[0].id);
    expect(entry.conversation.user).toEqual({ id: 'ann', roles: [], assurance: 'verified' });
    // Simulation weighs the conversations' users the same way.
    const sim = await api.post('/v1/policy/simulate', admin, {
      document: { rules: [{ match: 'refund_*', level: 'confirm', requireVerifiedUser: true }] },
      calls: [
        { toolName: 'refund_order', arguments: {}, conversationId: asserted },
        { toolName: 'refund_order', arguments: {}, conversationId: verified },
      ],
    });
    expect(sim.status).toBe(200);
    expect(sim.body.results.map((r: any) => r.now.level)).toEqual(['deny', 'confirm']);
    const recorded = await api.post('/v1/policy/simulate', admin, {
      document: { rules: [{ match: 'refund_*', level: 'confirm', requireVerifiedUser: true }] },
      days: 1,
    });
    const byId = new Map(recorded.body.results.map((r: any) => [r.toolCallId, r.now.level]));
    expect(byId.get(denied.body.toolCalls[0].id)).toBe('deny');
    expect(byId.get(held.body.toolCalls[0].id)).toBe('confirm');
  });

  it('refuses a token that does not verify: expired, forged, for another audience, of another tenant, not a JWT', async () => {
    const cases: Array<[string, string]> = [
      ['expired', await hsToken({ sub: 'ann' }, { audience: AGENT_APP, exp: Math.floor(Date.now() / 1000) - 300 })],
      [
        'forged',
        await hsToken({ sub: 'ann' }, { audience: AGENT_APP, secret: 'another-secret-long-enough-0123456789' }),
      ],
      ['another audience', await hsToken({ sub: 'ann' }, { audience: 'someone-else' })],
      ['no audience', await hsToken({ sub: 'ann' })],
      ['another tenant', await hsToken({ sub: 'ann', tenant: 'globex' }, { audience: AGENT_APP })],
      [
        'provider, another tenant',
        await idp.sign({ sub: 'bea', groups: ['payments-leads'], org: 'globex' }, { audience: AGENT_APP }),
      ],
      ['provider, another audience', await idp.sign({ sub: 'bea', org: TENANT }, { audience: 'someone-else' })],
      ['not a JWT', 'not-a-token'],
    ];
    for (const [what, token] of cases) {
      const res = await start({ token });
      expect({ what, status: res.status, code: res.body.code }).toEqual({
        what,
        status: 400,
        code: 'invalid_user_token',
      });
      expect(res.body.detail).toMatch(/user\.token/);
    }
  });

  it("refuses an agent's token as a user token", async () => {
    const token = await hsToken({ sub: 'bot-2', roles: ['agent'] }, { audience: AGENT_APP });
    const res = await start({ token });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_user_token', detail: expect.stringMatching(/agent's token/) });
  });

  it('refuses a token about the agent itself, and a subject no user id could be', async () => {
    const self = await start({ token: await hsToken({ sub: 'bot' }, { audience: AGENT_APP }) });
    expect(self.status).toBe(400);
    expect(self.body).toMatchObject({ code: 'invalid_user_token', detail: expect.stringMatching(/the agent itself/) });
    const long = await start({ token: await hsToken({ sub: 'u'.repeat(257) }, { audience: AGENT_APP }) });
    expect(long.status).toBe(400);
    expect(long.body.code).toBe('invalid_user_token');
  });

  it('refuses a token Tollgate would take as a bearer credential: user_token_is_credential', async () => {
    const apiToken = await hsToken({ sub: 'ann', roles: ['approver'] }, { audience: API_AUDIENCE });
    const both = await hsToken({ sub: 'ann', roles: ['approver'] }, { audience: [AGENT_APP, API_AUDIENCE] });
    const cli = await idp.sign({ sub: 'bea', groups: ['payments-leads'], org: TENANT }, { audience: CLI_CLIENT_ID });
    for (const token of [apiToken, both, cli]) {
      // Each one is a credential indeed: it reads the person's own view of Tollgate.
      expect((await api.get('/v1/me', token)).status).toBe(200);
      const res = await start({ token });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('user_token_is_credential');
      expect(res.body.detail).toMatch(/agent's application/);
    }
  });

  it('refuses an id other than the token subject, roles or a name beside a token, and a user with neither', async () => {
    const token = await hsToken({ sub: 'ann' }, { audience: AGENT_APP });
    const mismatch = await start({ id: 'mallory', token });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toMatchObject({ code: 'validation_failed', errors: [{ path: 'user.id' }] });
    const extras = await start({ token, roles: ['admin'], name: 'Ann' });
    expect(extras.status).toBe(400);
    expect(extras.body.errors.map((e: any) => e.path).sort()).toEqual(['user.name', 'user.roles']);
    const neither = await start({});
    expect(neither.status).toBe(400);
    expect(neither.body.errors).toEqual([{ path: 'user.id', message: 'is required unless user.token is given' }]);
    const long = await start({ token: 'x'.repeat(8193) });
    expect(long.status).toBe(400);
    expect(long.body.code).toBe('validation_failed');
    expect(long.body.errors.map((e: any) => e.path)).toEqual(['user.token']);
  });

  it('over gRPC: StartConversation with user.token records a verified user; a bad token is INVALID_ARGUMENT', async () => {
    const token = await hsToken({ sub: 'ann', roles: ['finance'], name: 'Ann' }, { audience: AGENT_APP });
    sent.push(token);
    const answer = await rpc.call('StartConversation', { user: { token } }, agent);
    expect(answer.created).toBe(true);
    expect(answer.conversation.user).toMatchObject({
      id: 'ann',
      roles: ['finance'],
      name: 'Ann',
      assurance: 'verified',
    });
    const asserted = await rpc.call('StartConversation', { user: { id: 'carl' } }, agent);
    expect(asserted.conversation.user).toMatchObject({ id: 'carl', assurance: 'asserted' });
    const bad = await hsToken({ sub: 'ann' }, { audience: 'someone-else' });
    sent.push(bad);
    const f = await rpc.failure('StartConversation', { user: { token: bad } }, agent);
    expect(f).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, tollgateCode: 'invalid_user_token' });
    const credential = await hsToken({ sub: 'ann' }, { audience: API_AUDIENCE });
    sent.push(credential);
    expect(await rpc.failure('StartConversation', { user: { token: credential } }, agent)).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      tollgateCode: 'user_token_is_credential',
    });
  });

  it('never shows, records or logs a user token', async () => {
    expect(sent.length).toBeGreaterThan(10);
    const conversations = await api.get('/v1/conversations?limit=100', admin);
    const events = await api.get('/v1/audit/events?limit=1000', auditor);
    expect(events.body.events.length).toBeGreaterThan(10);
    const stored = await running.dataSource.query(`SELECT * FROM conversations`);
    expect(stored.length).toBeGreaterThan(5);
    expect(logs.length).toBeGreaterThan(0);
    const everything = [
      JSON.stringify(conversations.body),
      JSON.stringify(events.body),
      JSON.stringify(stored),
      logs.join(''),
    ];
    for (const token of sent) {
      // A JWT's signature is the part only its holder has: not a piece of it anywhere.
      const signature = token.split('.').pop()!;
      for (const text of everything) expect(text.includes(signature)).toBe(false);
    }
  });
});

describe('user tokens where the server cannot take them', () => {
  it('answers user_token_not_configured without TOLLGATE_USER_TOKEN_AUDIENCE', async () => {
    const server = await startTestServer();
    try {
      const agent = await server.token('bot', ['agent']);
      const token = await hsToken({ sub: 'ann', tenant: 'default' }, { audience: AGENT_APP });
      const res = await client(server.url).post('/v1/conversations', agent, { user: { token } });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('user_token_not_configured');
      expect(res.body.detail).toMatch(/TOLLGATE_USER_TOKEN_AUDIENCE/);
    } finally {
      await server.stop();
    }
  });

  it('refuses every token signed with the secret when no TOLLGATE_JWT_AUDIENCE narrows bearer tokens', async () => {
    // HS256 with no audience configured: any token signed with the secret is a bearer token, whatever its aud.
    const server = await startTestServer({
      auth: { secret: TEST_SECRET, userTokenAudiences: [AGENT_APP], devSecret: false },
    });
    try {
      const agent = await server.token('bot', ['agent']);
      const token = await hsToken({ sub: 'ann', tenant: 'default' }, { audience: AGENT_APP });
      expect((await client(server.url).get('/v1/me', token)).status).toBe(200);
      const res = await client(server.url).post('/v1/conversations', agent, { user: { token } });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('user_token_is_credential');
      // The detail names what to change, not only what went wrong.
      expect(res.body.detail).toMatch(/set TOLLGATE_JWT_AUDIENCE/);
    } finally {
      await server.stop();
    }
  });
});
