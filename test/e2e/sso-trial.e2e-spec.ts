/**
 * Single sign-on as a new user and an operator meet it (review and trial findings of issue 23), over HTTP against a
 * real OpenID provider (oidc-provider) on loopback: a live stream ends with the session or token that opened it; the
 * "no access" page leads somewhere and says why; a missing roles claim is named as such; a sign-in begun at
 * localhost finishes; the dev sign-in says single sign-on turned it off.
 */
import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { SignJWT } from 'jose';
import { startServer } from '../../src/server';
import { CLOCK_TOLERANCE_S, mintToken } from '../../src/infrastructure/auth/jwt-verifier';
import { loadConfig } from '../../src/infrastructure/config/config';
import { freshDatabase, TestDatabase } from '../support/database';
import { client } from '../support/http';
import { CookieJar, startOidcProvider, TestProvider, throughProvider } from '../support/oidc-provider';
import { startTestServer, TEST_SECRET, TestServer } from '../support/server';

const ACCOUNTS = {
  ann: { groups: ['payments-leads'], org: 'acme', name: 'Ann Lee' },
  ivan: { groups: ['interns', 'x'.repeat(300), 'contractors\nforged line'], org: 'acme', name: 'Ivan' },
  nora: { org: 'acme', name: 'Nora' }, // the provider sends no groups claim for her
};

/** An SSE response read as it comes: the events it delivered, and whether (and how) it ended. */
function readStream(url: string, headers: Record<string, string>) {
  const events: string[] = [];
  const abort = new AbortController();
  let status = 0;
  let ended = false;
  const done = (async () => {
    const res = await fetch(url, { headers, signal: abort.signal });
    status = res.status;
    if (!res.ok || !res.body) return;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) break;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const type = /^event: (.+)$/m.exec(buffer.slice(0, cut))?.[1];
        if (type) events.push(type);
        buffer = buffer.slice(cut + 2);
      }
    }
    ended = true;
  })().catch(() => undefined);
  return {
    events,
    status: () => status,
    /** Resolves once the server has ended the stream; rejects after `ms` (the stream stayed open). */
    async ended(ms = 15_000) {
      const timeout = new Promise<never>((_, reject) => {
        const t = setTimeout(() => reject(new Error(`the stream was still open after ${ms} ms`)), ms);
        void done.finally(() => clearTimeout(t));
      });
      await Promise.race([done, timeout]);
      expect(ended).toBe(true);
    },
    async until(pred: () => boolean, ms = 10_000) {
      const end = Date.now() + ms;
      while (!pred()) {
        if (Date.now() > end) throw new Error(`stream did not get there: ${JSON.stringify(events)}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => abort.abort(),
  };
}

describe('single sign-on: what a new user and an operator meet', () => {
  let idp: TestProvider;
  let server: TestServer;
  let http: ReturnType<typeof client>;
  let db: TestDatabase;
  const logLines: string[] = [];

  beforeAll(async () => {
    idp = await startOidcProvider(ACCOUNTS);
    // Started as startTestServer starts it, with its log lines kept: an operator reads why a sign-in was refused.
    db = await freshDatabase();
    const running = await startServer(
      {
        ...loadConfig({}),
        host: '127.0.0.1',
        port: 0,
        grpcPort: undefined,
        databaseUrl: db.url,
        dataDir: db.dataDir,
        auth: { secret: TEST_SECRET, devSecret: false },
        rateLimitPer10s: 0,
        authFailuresPer10s: 0,
        maxWaitsPerToken: 100,
        streamPollMs: 100,
        instanceId: 'test',
        oidc: idp.oidcConfig(),
      },
      {
        logLevels: ['warn'],
        logDestination: new Writable({
          write(chunk: Buffer, _enc, next) {
            logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
            next();
          },
        }),
      },
    );
    server = {
      ...running,
      db,
      token: () => Promise.reject(new Error('unused')),
      stop: async () => {
        await running.close();
        await db.drop();
      },
    };
    await idp.registerTollgate(server.url);
    http = client(server.url);
  });
  afterAll(async () => {
    await server?.stop();
    await idp?.close();
  });

  async function signIn(account: string) {
    const jar = new CookieJar();
    const callback = await throughProvider(jar, `${server.url}/auth/login`, account, server.url);
    expect((await jar.fetch(callback)).status).toBe(303);
    const csrf = (await (await jar.fetch(`${server.url}/auth/session`)).json()).csrfToken as string;
    return { jar, csrf, cookie: `tollgate_session=${jar.get(server.url, 'tollgate_session')}` };
  }

  async function agentToken(sub = 'bot', ttl = '1h') {
    return mintToken(TEST_SECRET, { sub, roles: ['agent'], tenant: 'acme' }, ttl);
  }

  /** An agent's call held for approval in tenant acme. */
  async function propose(conversation: string): Promise<void> {
    const agent = await agentToken();
    expect((await http.post('/v1/conversations', agent, { id: conversation })).status).toBe(201);
    const res = await http.post(`/v1/conversations/${conversation}/tool-calls`, agent, {
      toolCalls: [{ toolName: 'send_email', arguments: { to: 'cfo@acme.example' } }],
    });
    expect(res.body.toolCalls[0].status).toBe('pending');
  }

  describe('the live stream ends when what opened it has ended', () => {
    it('ends a stream opened with the session cookie at sign-out, and delivers nothing after it', async () => {
      const { jar, csrf, cookie } = await signIn('ann');
      const stream = readStream(`${server.url}/v1/events/stream`, { cookie });
      await propose('stream-before-signout');
      await stream.until(() => stream.events.includes('ToolCallProposed'));
      const delivered = stream.events.length;

      const out = await jar.fetch(`${server.url}/auth/logout`, { method: 'POST', headers: { 'x-csrf-token': csrf } });
      expect(out.status).toBe(200);
      await propose('stream-after-signout');
      await stream.ended();
      expect(stream.events.length).toBe(delivered);
      // The client reconnects, and is told to sign in.
      const again = await fetch(`${server.url}/v1/events/stream`, { headers: { cookie } });
      expect(again.status).toBe(401);
    });

    it("ends a session's stream at the session's end of life, though nothing else happens", async () => {
      const { cookie } = await signIn('ann');
      // The session ends in two seconds (as one whose lifetime or idle timeout runs out would).
      const secret = cookie.split('.')[1];
      const { createHash } = await import('node:crypto');
      await server.dataSource.query(
        `UPDATE web_sessions SET expires_at = now() + interval '2 seconds' WHERE id_hash = $1`,
        [createHash('sha256').update(secret).digest('base64url')],
      );
      const stream = readStream(`${server.url}/v1/events/stream`, { cookie });
      await stream.until(() => stream.status() === 200);
      await stream.ended();
      expect((await fetch(`${server.url}/v1/events/stream`, { headers: { cookie } })).status).toBe(401);
    });

    it("ends a bearer token's stream when the token is no longer accepted (exp, and the clock tolerance)", async () => {
      // Past its exp but still inside the tolerance the verifier grants for clock skew: accepted for 2 s more.
      const now = Math.floor(Date.now() / 1000);
      const ann = await new SignJWT({ roles: ['approver'], tenant: 'acme' })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject('ann')
        .setIssuedAt(now - 60)
        .setExpirationTime(now - CLOCK_TOLERANCE_S + 2)
        .sign(new TextEncoder().encode(TEST_SECRET));
      const stream = readStream(`${server.url}/v1/events/stream`, { authorization: `Bearer ${ann}` });
      await stream.until(() => stream.status() === 200);
      await stream.ended();
      expect(
        (await fetch(`${server.url}/v1/events/stream`, { headers: { authorization: `Bearer ${ann}` } })).status,
      ).toBe(401);
    });

    it('keeps a stream open while its session lives', async () => {
      const { cookie } = await signIn('ann');
      const stream = readStream(`${server.url}/v1/events/stream`, { cookie });
      await propose('stream-session-lives');
      await stream.until(() => stream.events.includes('ToolCallProposed'));
      await propose('stream-session-lives-2');
      await stream.until(() => stream.events.filter((e) => e === 'ToolCallProposed').length === 2);
      stream.close();
    });
  });

  describe('the "no access" page', () => {
    async function refused(account: string) {
      const jar = new CookieJar();
      const callback = await throughProvider(jar, `${server.url}/auth/login`, account, server.url);
      const res = await jar.fetch(callback);
      const html = await res.text();
      const links = Object.fromEntries(
        [...html.matchAll(/<a href="([^"]*)" data-testid="([^"]+)">/g)].map((m) => [m[2], m[1].replace(/&amp;/g, '&')]),
      );
      return { jar, res, html, links, code: /data-testid="problem-code">([^<]+)</.exec(html)?.[1] };
    }

    it('offers "Sign in with another account" (the provider signs its session out first) and the sign-in page', async () => {
      const { jar, res, html, links, code } = await refused('ivan');
      expect({ status: res.status, code }).toEqual({ status: 403, code: 'no_access' });
      expect(html).toContain('>Sign in with another account</a>');
      expect(html).toContain('>Back to the sign-in page</a>');
      expect(links['back-to-sign-in']).toBe('/');
      const another = new URL(links['another-account']);
      expect(another.origin).toBe(idp.issuer);
      expect(another.searchParams.get('post_logout_redirect_uri')).toBe(`${server.url}/`);
      expect(another.searchParams.get('id_token_hint')).toMatch(/^ey/);
      // The provider's logout page (which sends the browser back to the sign-in page) for its session.
      const logouts = idp.logouts;
      expect((await jar.fetch(another.href)).status).toBe(200);
      expect(idp.logouts).toBe(logouts + 1);
    });

    it("logs who was refused and the claim's values as received, bounded", async () => {
      const { code } = await refused('ivan');
      expect(code).toBe('no_access');
      const line = logLines.map((l) => JSON.parse(l) as { msg: string }).find((l) => /no_access/.test(l.msg));
      expect(line?.msg).toContain('sub "ivan" of tenant acme');
      expect(line?.msg).toContain(`claim "groups": ["interns","${'x'.repeat(64)}","contractors?forged line"]`);
      expect(line?.msg).not.toContain('x'.repeat(65));
    });

    it('says so when the roles claim is absent from the ID token and userinfo', async () => {
      const { res, html, links, code } = await refused('nora');
      expect({ status: res.status, code }).toEqual({ status: 403, code: 'no_roles_claim' });
      expect(html).toContain(
        'The ID token and userinfo had no &quot;groups&quot; claim: make the provider put it in the ID token, and request its scope in TOLLGATE_OIDC_SCOPES',
      );
      expect(html).not.toContain('None of the groups');
      expect(Object.keys(links).sort()).toEqual(['another-account', 'back-to-sign-in']);
      const line = logLines.map((l) => JSON.parse(l) as { msg: string }).find((l) => /no_roles_claim/.test(l.msg));
      expect(line?.msg).toMatch(/sub "nora" of tenant acme, no claim "groups" among \[.*"sub".*\]/);
    });
  });

  describe('a sign-in begun at another name of this server', () => {
    /** GET with a Host header of our choosing (fetch would send the URL's). */
    function getWithHost(path: string, host: string) {
      const u = new URL(server.url);
      return new Promise<{ status: number; location?: string; cookies: string[] }>((resolve, reject) => {
        httpRequest({ host: u.hostname, port: u.port, path, headers: { host } }, (res) => {
          res.resume();
          resolve({
            status: res.statusCode!,
            location: res.headers.location,
            cookies: res.headers['set-cookie'] ?? [],
          });
        })
          .on('error', reject)
          .end();
      });
    }

    it('goes first to the address the provider sends the browser back to, so the login cookie is set there', async () => {
      const port = new URL(server.url).port;
      const at = await getWithHost('/auth/login?return_to=%2F%23%2Fcalls%2Ftc_1', `localhost:${port}`);
      expect(at).toEqual({
        status: 303,
        location: `${server.url}/auth/login?return_to=%2F%23%2Fcalls%2Ftc_1`,
        cookies: [],
      });
      // There, the sign-in starts as usual and finishes.
      const jar = new CookieJar();
      const callback = await throughProvider(jar, at.location!, 'ann', server.url);
      const done = await jar.fetch(callback);
      expect({ status: done.status, location: done.headers.get('location') }).toEqual({
        status: 303,
        location: '/#/calls/tc_1',
      });
      const direct = await getWithHost('/auth/login', `127.0.0.1:${port}`);
      expect(new URL(direct.location!).origin).toBe(idp.issuer);
    });

    it('names the address sign-ins finish at when a callback finds no sign-in under way', async () => {
      const res = await fetch(`${server.url}/auth/callback?code=c&state=s`);
      const html = await res.text();
      expect({ status: res.status, code: /data-testid="problem-code">([^<]+)</.exec(html)?.[1] }).toEqual({
        status: 400,
        code: 'login_missing',
      });
      expect(html).toContain(`no sign-in under way at ${server.url} `);
      expect(html).toContain(`Sign in again from ${server.url}/.`);
    });
  });
});

describe('single sign-on with a provider that has no end_session_endpoint, in embedded dev mode', () => {
  let idp: TestProvider;
  let server: TestServer;

  beforeAll(async () => {
    idp = await startOidcProvider(ACCOUNTS, { endSession: false });
    server = await startTestServer({
      oidc: idp.oidcConfig(),
      auth: { secret: TEST_SECRET, devSecret: true },
    });
    await idp.registerTollgate(server.url);
  });
  afterAll(async () => {
    await server?.stop();
    await idp?.close();
  });

  it('offers another account through a sign-in with prompt=login, which the provider does not answer silently', async () => {
    const jar = new CookieJar();
    const callback = await throughProvider(jar, `${server.url}/auth/login`, 'ivan', server.url);
    const html = await (await jar.fetch(callback)).text();
    const href = /<a href="([^"]*)" data-testid="another-account">/.exec(html)?.[1].replace(/&amp;/g, '&');
    expect(href).toBe('/auth/login?prompt=login');
    // Signing in again without it: the provider's session answers for ivan, no one is asked.
    const logins = idp.logins.length;
    const silent = await throughProvider(jar, `${server.url}/auth/login`, 'unused', server.url);
    expect(idp.logins.length).toBe(logins);
    expect((await jar.fetch(silent)).status).toBe(403);
    // With it: the provider asks who signs in, and another account gets in.
    const start = await jar.fetch(new URL(href!, server.url).href);
    expect(new URL(start.headers.get('location')!).searchParams.get('prompt')).toBe('login');
    const asked = await throughProvider(jar, start.headers.get('location')!, 'ann', server.url);
    expect(idp.logins.slice(logins)).toEqual(['ann']);
    expect((await jar.fetch(asked)).status).toBe(303);
    expect(await (await jar.fetch(`${server.url}/v1/me`)).json()).toMatchObject({ id: 'ann', roles: ['approver'] });
  });

  it('refuses any other prompt', async () => {
    for (const prompt of ['none', 'consent', 'login login', ''])
      expect((await client(server.url).get(`/auth/login?prompt=${encodeURIComponent(prompt)}`)).body.code).toBe(
        'invalid_prompt',
      );
  });

  it('says the dev sign-in is off because single sign-on is configured', async () => {
    const minted = await client(server.url).post('/ui/dev-token', undefined, { sub: 'mallory', roles: ['admin'] });
    expect({ status: minted.status, code: minted.body.code, detail: minted.body.detail }).toEqual({
      status: 404,
      code: 'not_found',
      detail:
        'Dev sign-in is off because single sign-on (TOLLGATE_OIDC_ISSUER) is configured: sign in with Test IdP (GET /auth/login)',
    });
  });
});

// Two instances share a PostgreSQL database (embedded PGlite is one process's own).
const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;

onPostgres('a session signed out on another instance', () => {
  let idp: TestProvider;
  let db: TestDatabase;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    idp = await startOidcProvider(ACCOUNTS);
    db = await freshDatabase();
    a = await startTestServer({ oidc: idp.oidcConfig(), instanceId: 'a' }, { db });
    b = await startTestServer({ oidc: idp.oidcConfig(), instanceId: 'b' }, { db });
    await idp.registerTollgate(a.url);
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await db?.drop();
    await idp?.close();
  });

  it("ends this instance's stream of it by the next keep-alive", async () => {
    const jar = new CookieJar();
    const callback = await throughProvider(jar, `${a.url}/auth/login`, 'ann', a.url);
    expect((await jar.fetch(callback)).status).toBe(303);
    const { csrfToken } = await (await jar.fetch(`${a.url}/auth/session`)).json();
    const cookie = `tollgate_session=${jar.get(a.url, 'tollgate_session')}`;
    const stream = readStream(`${a.url}/v1/events/stream`, { cookie });
    await stream.until(() => stream.status() === 200);
    // The same browser's cookie, signed out through instance b (the load balancer sent it there).
    const out = await fetch(`${b.url}/auth/logout`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrfToken } });
    expect(out.status).toBe(200);
    await stream.ended(30_000); // instance a looks at the session again at each keep-alive (every 15 s)
  }, 45_000);
});
