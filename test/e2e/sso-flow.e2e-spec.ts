/**
 * Single sign-on over HTTP against a real OpenID provider (oidc-provider) on loopback, the browser imitated with a
 * cookie jar: the code flow with PKCE, state and nonce; sessions in an HttpOnly cookie; CSRF on state changes; logout;
 * lifetime and idle timeout; tenants from the claim; and the provider's bearer tokens mapped as sign-in maps them.
 * (The same in Chromium: test/browser/sso-sign-in.e2e-spec.ts.)
 */
import { CookieJar, startOidcProvider, TestProvider, throughProvider } from '../support/oidc-provider';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

const ACCOUNTS = {
  ann: { groups: ['payments-leads'], org: 'acme', name: 'Ann Lee', email: 'ann@acme.example' },
  bob: { groups: ['secops'], org: 'globex', name: 'Bob' },
  ivan: { groups: ['interns'], org: 'acme', name: 'Ivan' },
  agentish: { groups: 'agent', org: 'acme' },
};

describe('single sign-on (OpenID Connect) over HTTP', () => {
  let idp: TestProvider;
  let server: TestServer;
  let http: ReturnType<typeof client>;

  beforeAll(async () => {
    idp = await startOidcProvider(ACCOUNTS);
    server = await startTestServer({ oidc: idp.oidcConfig() });
    await idp.registerTollgate(server.url);
    http = client(server.url);
  });
  afterAll(async () => {
    await server?.stop();
    await idp?.close();
  });

  /** Begins a sign-in as a browser would and returns the jar and the callback URL the provider sent it to. */
  async function begin(account: string, returnTo?: string) {
    const jar = new CookieJar();
    const login = `${server.url}/auth/login${returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : ''}`;
    const callback = await throughProvider(jar, login, account, server.url);
    return { jar, callback };
  }

  async function signIn(account: string, returnTo?: string) {
    const { jar, callback } = await begin(account, returnTo);
    const res = await jar.fetch(callback);
    expect(res.status).toBe(303);
    const csrf = (await (await jar.fetch(`${server.url}/auth/session`)).json()).csrfToken as string;
    return { jar, res, csrf };
  }

  /** The one login cookie a jar holds (each sign-in's is named after its state). */
  function loginName(jar: CookieJar): string {
    const names = jar.names(server.url).filter((n) => n.startsWith('tollgate_login_'));
    expect(names).toHaveLength(1);
    return names[0];
  }

  async function sessionRows(): Promise<number> {
    return Number((await server.dataSource.query('SELECT count(*) AS n FROM web_sessions'))[0].n);
  }

  async function expectRefused(res: Response, status: number, code: string) {
    const html = await res.text();
    expect({ status: res.status, type: res.headers.get('content-type') }).toEqual({
      status,
      type: 'text/html; charset=utf-8',
    });
    expect(html).toContain(`<code data-testid="problem-code">${code}</code>`);
    expect(res.headers.getSetCookie().some((c) => c.startsWith('tollgate_session=') && !/Max-Age=0/.test(c))).toBe(
      false,
    );
  }

  it('describes the provider for the CLI at /auth/config, with the CLI client and no secret', async () => {
    const res = await http.get('/auth/config');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      oidc: { issuer: idp.issuer, clientId: 'tollgate-cli', scopes: ['openid', 'profile', 'email', 'groups'] },
    });
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('offers "Sign in with" the provider on the page and no dev sign-in', async () => {
    expect((await http.get('/ui/config')).body).toEqual({ devSignIn: false, sso: { provider: 'Test IdP' } });
  });

  it('signs a person in with the code flow (PKCE S256, state, nonce) into an HttpOnly, SameSite=Lax session', async () => {
    const jar = new CookieJar();
    const start = await jar.fetch(`${server.url}/auth/login?return_to=${encodeURIComponent('/#/calls/tc_1')}`);
    expect(start.status).toBe(303);
    const authorize = new URL(start.headers.get('location')!);
    expect(authorize.origin).toBe(idp.issuer);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      client_id: 'tollgate-web',
      response_type: 'code',
      redirect_uri: `${server.url}/auth/callback`,
      scope: 'openid profile email groups',
      code_challenge_method: 'S256',
    });
    for (const p of ['state', 'nonce', 'code_challenge']) expect(authorize.searchParams.get(p)).toMatch(/^.{22,}$/);
    const loginCookie = start.headers.getSetCookie().find((c) => c.startsWith('tollgate_login_'))!;
    expect(loginCookie).toMatch(
      /^tollgate_login_[\w-]{16}=[\w-]+; Path=\/auth\/callback; Max-Age=600; HttpOnly; SameSite=Lax$/,
    );
    // Sealed: the state, nonce and verifier are not readable in it.
    expect(loginCookie).not.toContain(authorize.searchParams.get('state')!);

    const callback = await throughProvider(jar, authorize.href, 'ann', server.url);
    const done = await jar.fetch(callback);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/#/calls/tc_1');
    const cookies = done.headers.getSetCookie();
    expect(cookies.find((c) => c.startsWith(loginCookie.split('=')[0] + '='))).toMatch(/Max-Age=0/);
    const session = cookies.find((c) => c.startsWith('tollgate_session='))!;
    expect(session).toMatch(
      /^tollgate_session=acme\.[A-Za-z0-9_-]{43}; Path=\/; Max-Age=3600; HttpOnly; SameSite=Lax$/,
    );
    expect(session).not.toContain('Secure'); // served over http on loopback

    const me = await jar.fetch(`${server.url}/v1/me`);
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({
      id: 'ann',
      tenant: 'acme',
      kind: 'person',
      roles: ['approver'],
      name: 'Ann Lee',
      email: 'ann@acme.example',
    });
    // Only the secret's hash is stored.
    const secret = jar.get(server.url, 'tollgate_session')!.split('.')[1];
    const [row] = await server.dataSource.query('SELECT * FROM web_sessions WHERE person_id = $1', ['ann']);
    expect(JSON.stringify(row)).not.toContain(secret);
  });

  it('refuses a return_to that leaves this server', async () => {
    for (const bad of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)']) {
      const res = await http.get(`/auth/login?return_to=${encodeURIComponent(bad)}`);
      expect({ bad, status: res.status, code: res.body.code }).toEqual({ bad, status: 400, code: 'invalid_return_to' });
    }
  });

  it('answers the page its person and CSRF token at /auth/session, and 401 without a session', async () => {
    const { jar, csrf } = await signIn('ann');
    const res = await jar.fetch(`${server.url}/auth/session`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ sub: 'ann', tenant: 'acme', roles: ['approver'], csrfToken: csrf });
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const none = await http.get('/auth/session');
    expect({ status: none.status, code: none.body.code }).toEqual({ status: 401, code: 'unauthenticated' });
  });

  it('needs the X-CSRF-Token header on every state-changing request made with the cookie (403 csrf_failed)', async () => {
    const { jar, csrf } = await signIn('ann');
    const agent = await server.token('bot', ['agent'], { tenant: 'acme' });
    expect((await http.post('/v1/conversations', agent, { id: 'sso-csrf' })).status).toBe(201);
    const [call] = (
      await http.post('/v1/conversations/sso-csrf/tool-calls', agent, {
        toolCalls: [{ toolName: 'send_email', arguments: { to: 'x@example.com' } }],
      })
    ).body.toolCalls;
    expect(call.status).toBe('pending');
    const decide = (headers: Record<string, string>) =>
      jar.fetch(`${server.url}/v1/tool-calls/${call.id}/decision`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ decision: 'approve' }),
      });
    for (const headers of [{}, { 'x-csrf-token': 'wrong' }, { 'x-csrf-token': '' }] as Record<string, string>[]) {
      const res = await decide(headers);
      expect({ status: res.status, code: (await res.json()).code }).toEqual({ status: 403, code: 'csrf_failed' });
    }
    expect((await http.get(`/v1/tool-calls/${call.id}`, agent)).body.status).toBe('pending');
    // Reads need no token; the live stream answers with the cookie alone.
    expect((await jar.fetch(`${server.url}/v1/approvals`)).status).toBe(200);
    const stream = await jar.fetch(`${server.url}/v1/events/stream`, { signal: AbortSignal.timeout(5000) });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await stream.body?.cancel();

    const ok = await decide({ 'x-csrf-token': csrf, 'x-tollgate-channel': 'web' });
    expect(ok.status).toBe(200);
    const decided = (await http.get(`/v1/tool-calls/${call.id}`, agent)).body;
    expect(decided.status).toBe('approved');
    expect(decided.decision.by).toMatchObject({ id: 'ann', via: 'web' });
  });

  it('signs out: the session row is deleted, the cookie cleared, and the provider told (RP-initiated logout)', async () => {
    const { jar, csrf } = await signIn('ann');
    const cookie = jar.get(server.url, 'tollgate_session')!;
    const before = await sessionRows();
    const refused = await jar.fetch(`${server.url}/auth/logout`, { method: 'POST' });
    expect({ status: refused.status, code: (await refused.json()).code }).toEqual({ status: 403, code: 'csrf_failed' });

    const out = await jar.fetch(`${server.url}/auth/logout`, { method: 'POST', headers: { 'x-csrf-token': csrf } });
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie().find((c) => c.startsWith('tollgate_session='))).toMatch(
      /^tollgate_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax$/,
    );
    const { redirectTo } = (await out.json()) as { redirectTo: string };
    const endSession = new URL(redirectTo);
    expect(endSession.origin).toBe(idp.issuer);
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(`${server.url}/`);
    expect(endSession.searchParams.get('id_token_hint')).toMatch(/^ey/);
    expect(await sessionRows()).toBe(before - 1);
    // The hint is the sign-in's ID token, now in the page's history and the provider's logs: no bearer token.
    const hint = await fetch(`${server.url}/v1/me`, {
      headers: { authorization: `Bearer ${endSession.searchParams.get('id_token_hint')}` },
    });
    expect(hint.status).toBe(401);

    const replay = await fetch(`${server.url}/v1/me`, { headers: { cookie: `tollgate_session=${cookie}` } });
    expect({ status: replay.status, code: (await replay.json()).code }).toEqual({
      status: 401,
      code: 'unauthenticated',
    });
  });

  it('ends a session past its lifetime or idle past the timeout (401)', async () => {
    const lifetime = await signIn('ann');
    const idle = await signIn('ann');
    const hash = async (jar: CookieJar) => {
      const { createHash } = await import('node:crypto');
      return createHash('sha256').update(jar.get(server.url, 'tollgate_session')!.split('.')[1]).digest('base64url');
    };
    expect((await lifetime.jar.fetch(`${server.url}/v1/me`)).status).toBe(200);
    await server.dataSource.query(
      `UPDATE web_sessions SET expires_at = now() - interval '1 second' WHERE id_hash = $1`,
      [await hash(lifetime.jar)],
    );
    await server.dataSource.query(
      `UPDATE web_sessions SET last_seen_at = now() - interval '601 seconds' WHERE id_hash = $1`,
      [await hash(idle.jar)],
    );
    for (const jar of [lifetime.jar, idle.jar]) {
      const res = await jar.fetch(`${server.url}/v1/approvals`);
      expect({ status: res.status, code: (await res.json()).code }).toEqual({ status: 401, code: 'unauthenticated' });
    }
    // Ended sessions are deleted as they are found.
    const left = await server.dataSource.query('SELECT 1 FROM web_sessions WHERE id_hash = ANY($1)', [
      [await hash(lifetime.jar), await hash(idle.jar)],
    ]);
    expect(left).toEqual([]);
  });

  it('refuses a person whose groups map to no role with a plain "no access" page, and makes no session', async () => {
    const before = await sessionRows();
    const { jar, callback } = await begin('ivan');
    const res = await jar.fetch(callback);
    await expectRefused(res, 403, 'no_access');
    expect(await sessionRows()).toBe(before);
  });

  it('never makes an agent of a provider account: "agent" in the groups claim maps to nothing', async () => {
    const { jar, callback } = await begin('agentish');
    await expectRefused(await jar.fetch(callback), 403, 'no_access');
  });

  it('lets sign-ins begun in two tabs of one browser finish in either order', async () => {
    const jar = new CookieJar();
    const first = await throughProvider(jar, `${server.url}/auth/login?return_to=%2F%23first`, 'ann', server.url);
    const second = await throughProvider(jar, `${server.url}/auth/login?return_to=%2F%23second`, 'ann', server.url);
    const a = await jar.fetch(second);
    const b = await jar.fetch(first);
    expect([a.status, a.headers.get('location'), b.status, b.headers.get('location')]).toEqual([
      303,
      '/#second',
      303,
      '/#first',
    ]);
  });

  it('refuses a forged state', async () => {
    const { jar, callback } = await begin('ann');
    const forged = new URL(callback);
    forged.searchParams.set('state', 'forged-state-value-0123456789');
    await expectRefused(await jar.fetch(forged.href), 400, 'state_mismatch');
  });

  it('refuses a callback replayed without the sign-in it belongs to, and the same code twice', async () => {
    const { jar, callback } = await begin('ann');
    const name = loginName(jar);
    const sealed = jar.get(server.url, name)!;
    expect((await jar.fetch(callback)).status).toBe(303);
    // The same browser again: the login cookie went with the first answer.
    await expectRefused(await jar.fetch(callback), 400, 'login_missing');
    // An attacker holding both the URL and the login cookie: the provider takes each code once.
    const thief = new CookieJar();
    thief.set(server.url, name, sealed);
    await expectRefused(await thief.fetch(callback), 400, 'code_refused');
    // Another browser, with no sign-in under way.
    await expectRefused(await new CookieJar().fetch(callback), 400, 'login_missing');
  });

  it('refuses an ID token made for another nonce', async () => {
    const jar = new CookieJar();
    const start = await jar.fetch(`${server.url}/auth/login`);
    const authorize = new URL(start.headers.get('location')!);
    authorize.searchParams.set('nonce', 'a-nonce-this-browser-never-sent-0123');
    const callback = await throughProvider(jar, authorize.href, 'ann', server.url);
    await expectRefused(await jar.fetch(callback), 400, 'nonce_mismatch');
  });

  it('refuses a code issued for another PKCE challenge, and a login cookie that was tampered with', async () => {
    const jar = new CookieJar();
    const start = await jar.fetch(`${server.url}/auth/login`);
    const authorize = new URL(start.headers.get('location')!);
    authorize.searchParams.set('code_challenge', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
    const callback = await throughProvider(jar, authorize.href, 'ann', server.url);
    await expectRefused(await jar.fetch(callback), 400, 'code_refused');

    const other = await begin('ann');
    const sealed = other.jar.get(server.url, loginName(other.jar))!;
    const flipped = sealed.slice(0, 20) + (sealed[20] === 'A' ? 'B' : 'A') + sealed.slice(21);
    other.jar.set(server.url, loginName(other.jar), flipped);
    await expectRefused(await other.jar.fetch(other.callback), 400, 'login_invalid');
  });

  it('keeps tenants apart: a session of one tenant sees nothing of another', async () => {
    const acmeAgent = await server.token('bot', ['agent'], { tenant: 'acme' });
    const globexAgent = await server.token('bot', ['agent'], { tenant: 'globex' });
    expect((await http.post('/v1/conversations', acmeAgent, { id: 'sso-acme' })).status).toBe(201);
    const [acmeCall] = (
      await http.post('/v1/conversations/sso-acme/tool-calls', acmeAgent, {
        toolCalls: [{ toolName: 'send_email', arguments: { to: 'acme@example.com' } }],
      })
    ).body.toolCalls;
    expect((await http.post('/v1/conversations', globexAgent, { id: 'sso-globex' })).status).toBe(201);
    const [globexCall] = (
      await http.post('/v1/conversations/sso-globex/tool-calls', globexAgent, {
        toolCalls: [{ toolName: 'send_email', arguments: { to: 'globex@example.com' } }],
      })
    ).body.toolCalls;

    const bob = await signIn('bob'); // globex, admin
    expect(await (await bob.jar.fetch(`${server.url}/v1/me`)).json()).toMatchObject({
      tenant: 'globex',
      roles: ['admin'],
    });
    const ids = (await (await bob.jar.fetch(`${server.url}/v1/approvals`)).json()).items.map(
      (a: { id: string }) => a.id,
    );
    expect(ids).toContain(globexCall.id);
    expect(ids).not.toContain(acmeCall.id);
    expect((await bob.jar.fetch(`${server.url}/v1/tool-calls/${acmeCall.id}`)).status).toBe(404);
    const across = await bob.jar.fetch(`${server.url}/v1/tool-calls/${acmeCall.id}/decision`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': bob.csrf },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(across.status).toBe(404);
    // A cookie naming another tenant finds no session there: the tenant picks the partition, not a claim.
    const secret = bob.jar.get(server.url, 'tollgate_session')!.split('.')[1];
    const moved = await fetch(`${server.url}/v1/me`, { headers: { cookie: `tollgate_session=acme.${secret}` } });
    expect(moved.status).toBe(401);
  });

  it('maps the provider bearer tokens as sign-in does: roles from groups, tenant from org, never agent', async () => {
    const admin = await idp.sign({ sub: 'carol', groups: ['secops', 'agent'], org: 'acme', roles: ['agent'] });
    const me = await http.get('/v1/me', admin);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: 'carol', tenant: 'acme', kind: 'person', roles: ['admin'] });

    const cli = await idp.sign(
      { sub: 'dan', groups: 'audit payments-leads', org: 'acme' },
      { audience: 'tollgate-cli' },
    );
    expect((await http.get('/v1/me', cli)).body).toMatchObject({ id: 'dan', roles: ['approver', 'auditor'] });

    // Known, but no mapped role: sees no one's calls, decides nothing.
    const intern = await idp.sign({ sub: 'ivan', groups: ['interns'], org: 'acme' });
    expect((await http.get('/v1/me', intern)).body).toMatchObject({ id: 'ivan', roles: [] });
    expect((await http.get('/v1/approvals', intern)).body.items).toEqual([]);
    expect((await http.get('/v1/audit/events', intern)).status).toBe(403);

    for (const [why, token] of [
      ['another audience', await idp.sign({ sub: 'eve', groups: ['secops'], org: 'acme' }, { audience: 'other-app' })],
      // The web client's tokens belong to its sessions; a browser sign-in's ID token carries a nonce.
      ['the web client', await idp.sign({ sub: 'eve', groups: ['secops'], org: 'acme' }, { audience: 'tollgate-web' })],
      ['a nonce', await idp.sign({ sub: 'eve', groups: ['secops'], org: 'acme', nonce: 'n-0S6_WzA2Mj' })],
      ['no tenant claim', await idp.sign({ sub: 'eve', groups: ['secops'] })],
      ['a tenant that is no tenant', await idp.sign({ sub: 'eve', groups: ['secops'], org: 'a/b' })],
    ] as const) {
      const res = await http.get('/v1/me', token);
      expect({ why, status: res.status }).toEqual({ why, status: 401 });
    }
    // Agents keep their own tokens (HS256 here) and stay agents.
    const agent = await server.token('bot', ['agent'], { tenant: 'acme' });
    expect((await http.get('/v1/me', agent)).body).toMatchObject({ kind: 'agent', roles: ['agent'] });
  });
});

describe('single sign-on with a provider that keeps groups in userinfo and has no end_session_endpoint', () => {
  let idp: TestProvider;
  let server: TestServer;

  beforeAll(async () => {
    idp = await startOidcProvider(ACCOUNTS, { claimsInIdToken: false, endSession: false });
    // What resolveAuth makes in embedded dev mode: minted tokens would be on offer, but OIDC turns them off.
    server = await startTestServer({
      oidc: idp.oidcConfig(),
      auth: { secret: 'test-secret-that-is-long-enough-for-hs256-0123456789', devSecret: true },
    });
    await idp.registerTollgate(server.url);
  });
  afterAll(async () => {
    await server?.stop();
    await idp?.close();
  });

  it('turns the dev sign-in off whenever OIDC is configured, even in embedded dev mode', async () => {
    const http = client(server.url);
    expect((await http.get('/ui/config')).body).toEqual({ devSignIn: false, sso: { provider: 'Test IdP' } });
    const minted = await http.post('/ui/dev-token', undefined, { sub: 'mallory', roles: ['admin'] });
    expect({ status: minted.status, code: minted.body.code }).toEqual({ status: 404, code: 'not_found' });
  });

  it('reads the groups and tenant from userinfo when the ID token lacks them', async () => {
    const jar = new CookieJar();
    const callback = await throughProvider(jar, `${server.url}/auth/login`, 'ann', server.url);
    expect((await jar.fetch(callback)).status).toBe(303);
    expect(await (await jar.fetch(`${server.url}/v1/me`)).json()).toMatchObject({
      id: 'ann',
      tenant: 'acme',
      roles: ['approver'],
      name: 'Ann Lee',
    });
  });

  it('signs out back to the inbox when the provider offers no RP-initiated logout', async () => {
    const jar = new CookieJar();
    const callback = await throughProvider(jar, `${server.url}/auth/login`, 'ann', server.url);
    await jar.fetch(callback);
    const { csrfToken } = await (await jar.fetch(`${server.url}/auth/session`)).json();
    const out = await jar.fetch(`${server.url}/auth/logout`, {
      method: 'POST',
      headers: { 'x-csrf-token': csrfToken },
    });
    expect({ status: out.status, body: await out.json() }).toEqual({ status: 200, body: { redirectTo: '/' } });
    expect((await jar.fetch(`${server.url}/v1/me`)).status).toBe(401);
  });
});

describe('single sign-on with the provider out of reach', () => {
  let server: TestServer;
  beforeAll(async () => {
    const idp = await startOidcProvider({});
    const config = idp.oidcConfig();
    await idp.close(); // its port is closed now: nothing answers there
    server = await startTestServer({ oidc: config });
  });
  afterAll(() => server?.stop());

  it('still starts, and answers a sign-in with a plain 503 page, never a 500', async () => {
    const res = await fetch(`${server.url}/auth/login`, { redirect: 'manual' });
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('<code data-testid="problem-code">provider_unavailable</code>');
    expect(res.headers.getSetCookie()).toEqual([]);
  });
});

describe('single sign-on behind an https TOLLGATE_PUBLIC_URL', () => {
  const PUBLIC = 'https://tollgate.example.test';
  let idp: TestProvider;
  let server: TestServer;

  beforeAll(async () => {
    idp = await startOidcProvider(ACCOUNTS);
    server = await startTestServer({ oidc: idp.oidcConfig(), publicUrl: PUBLIC });
    await idp.registerTollgate(PUBLIC); // the provider knows Tollgate by its public address only
  });
  afterAll(async () => {
    await server?.stop();
    await idp?.close();
  });

  it('sends the provider back to <public URL>/auth/callback, marks both cookies Secure, and names the session __Host-', async () => {
    const jar = new CookieJar();
    const start = await jar.fetch(`${server.url}/auth/login`);
    const authorize = new URL(start.headers.get('location')!);
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${PUBLIC}/auth/callback`);
    // The login cookie is __Host- too: a sibling subdomain cannot plant its own sign-in for the victim to finish.
    expect(start.headers.getSetCookie().find((c) => c.includes('tollgate_login_'))).toMatch(
      /^__Host-tollgate_login_[\w-]{16}=[\w-]+; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/,
    );
    // The browser would open the public address; a proxy there forwards to this server.
    const callback = new URL(await throughProvider(jar, authorize.href, 'ann', PUBLIC));
    const sealed = jar.get(
      server.url,
      jar.names(server.url).find((n) => n.startsWith('__Host-tollgate_login_'))!,
    )!;
    const planted = await fetch(`${server.url}${callback.pathname}${callback.search}`, {
      headers: {
        cookie: `${jar
          .names(server.url)
          .find((n) => n.startsWith('__Host-'))!
          .slice(7)}=${sealed}`,
      },
      redirect: 'manual',
    });
    expect(planted.status).toBe(400); // the same sealed sign-in under a name a sibling could set finishes nothing
    const done = await jar.fetch(`${server.url}${callback.pathname}${callback.search}`);
    expect(done.status).toBe(303);
    // Over https the name takes the __Host- prefix: only this host can set it, so no sibling plants a session.
    expect(done.headers.getSetCookie().find((c) => c.includes('tollgate_session='))).toMatch(
      /^__Host-tollgate_session=acme\.[A-Za-z0-9_-]{43}; Path=\/; Max-Age=3600; HttpOnly; SameSite=Lax; Secure$/,
    );
    expect((await jar.fetch(`${server.url}/v1/me`)).status).toBe(200);
    const plain = jar.get(server.url, '__Host-tollgate_session')!;
    const unprefixed = await fetch(`${server.url}/v1/me`, { headers: { cookie: `tollgate_session=${plain}` } });
    expect(unprefixed.status).toBe(401);
    const { csrfToken } = await (await jar.fetch(`${server.url}/auth/session`)).json();
    const out = await jar.fetch(`${server.url}/auth/logout`, {
      method: 'POST',
      headers: { 'x-csrf-token': csrfToken },
    });
    expect(new URL((await out.json()).redirectTo).searchParams.get('post_logout_redirect_uri')).toBe(`${PUBLIC}/`);
  });
});
