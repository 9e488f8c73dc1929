/**
 * The web inbox as HTTP sees it: the page and its assets with a strict CSP, caching by content hash, and the
 * dev sign-in, which exists only in embedded dev mode and never when real authentication is configured.
 * (What the page does in a browser: test/browser.)
 */
import { request } from 'node:http';
import { isLoopback } from '../../src/adapters/web/web.controller';
import { client } from '../support/http';
import { startTestServer, TEST_SECRET, TestServer } from '../support/server';

describe('web inbox with authentication configured', () => {
  let server: TestServer;
  let http: ReturnType<typeof client>;
  beforeAll(async () => {
    server = await startTestServer(); // TOLLGATE_JWT_SECRET set: real auth
    http = client(server.url);
  });
  afterAll(() => server?.stop());

  it('serves the page at / without a token, with a CSP that allows no inline script and no other origin', async () => {
    const res = await fetch(`${server.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const html = await res.text();
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]+<\/script>|style=/); // nothing inline
    expect(html).not.toMatch(/https?:\/\//); // no CDN, no font service
    const again = await fetch(`${server.url}/`, { headers: { 'if-none-match': res.headers.get('etag')! } });
    expect(again.status).toBe(304);
  });

  it('serves each hashed asset with its type and a year of immutable caching', async () => {
    const html = await (await fetch(`${server.url}/`)).text();
    const names = [...html.matchAll(/\/assets\/([\w.-]+)/g)].map((m) => m[1]);
    expect(names).toEqual(
      expect.arrayContaining([expect.stringMatching(/^app-\w+\.js$/), expect.stringMatching(/^app-\w+\.css$/)]),
    );
    for (const name of names) {
      const res = await fetch(`${server.url}/assets/${name}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(
        name.endsWith('.js') ? /^text\/javascript/ : name.endsWith('.css') ? /^text\/css/ : /^image\/svg\+xml/,
      );
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('answers 404 problems for unknown assets and paths that try to leave the folder', async () => {
    for (const path of [
      '/assets/app-NOPE.js',
      '/assets/..%2Fpackage.json',
      '/assets/%2e%2e%2F%2e%2e%2Fpackage.json',
      '/assets/index.html',
    ]) {
      const res = await http.get(path);
      expect({ path, status: res.status, code: res.body?.code }).toEqual({ path, status: 404, code: 'not_found' });
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
  });

  it('offers no dev sign-in and answers 404 to its endpoint', async () => {
    const config = await http.get('/ui/config');
    expect(config.status).toBe(200);
    expect(config.body).toEqual({ devSignIn: false, sso: null });
    const minted = await http.post('/ui/dev-token', undefined, { sub: 'mallory', roles: ['admin'] });
    expect(minted.status).toBe(404);
    expect(minted.body.code).toBe('not_found');
  });

  it('leaves the API as it was: /v1 still needs a token', async () => {
    expect((await http.get('/v1/approvals')).status).toBe(401);
  });

  it('has no single sign-on without TOLLGATE_OIDC_ISSUER: /auth/config says so, the other /auth routes are 404', async () => {
    const config = await http.get('/auth/config');
    expect({ status: config.status, body: config.body }).toEqual({ status: 200, body: { oidc: null } });
    for (const path of ['/auth/login', '/auth/callback?code=x&state=y']) {
      const res = await http.get(path);
      expect({ path, status: res.status, code: res.body?.code }).toEqual({ path, status: 404, code: 'not_found' });
    }
    expect((await http.post('/auth/logout', undefined)).status).toBe(404);
    // A cookie is never read: no session can exist.
    const res = await fetch(`${server.url}/v1/me`, {
      headers: { cookie: 'tollgate_session=default.' + 'a'.repeat(43) },
    });
    expect(res.status).toBe(401);
  });
});

describe('web inbox in embedded dev mode', () => {
  let server: TestServer;
  let http: ReturnType<typeof client>;
  beforeAll(async () => {
    // What resolveAuth makes when neither TOLLGATE_JWT_SECRET nor TOLLGATE_JWKS_URL is set and there is no DATABASE_URL.
    server = await startTestServer({ auth: { secret: TEST_SECRET, devSecret: true } });
    http = client(server.url);
  });
  afterAll(() => server?.stop());

  it('offers the dev sign-in and mints a working token for the chosen name and roles', async () => {
    expect((await http.get('/ui/config')).body).toEqual({ devSignIn: true, sso: null });
    const minted = await http.post('/ui/dev-token', undefined, {
      sub: 'ann',
      name: 'Ann',
      roles: ['approver'],
      tenant: 'acme',
    });
    expect(minted.status).toBe(201);
    expect(minted.headers.get('cache-control')).toBe('no-store');
    const claims = JSON.parse(Buffer.from(minted.body.token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ sub: 'ann', name: 'Ann', roles: ['approver'], tenant: 'acme' });
    expect(claims.exp - claims.iat).toBe(8 * 3600);
    expect((await http.get('/v1/approvals', minted.body.token)).status).toBe(200);
  });

  it('never mints an agent token, and refuses bad names and unknown fields', async () => {
    for (const body of [
      { sub: 'bot', roles: ['agent'] },
      { sub: 'ann', roles: [] },
      { sub: 'a b', roles: ['approver'] },
      { sub: 'ann', roles: ['approver'], exp: 9e9 },
    ]) {
      const res = await http.post('/ui/dev-token', undefined, body);
      expect({ body, status: res.status, code: res.body.code }).toEqual({
        body,
        status: 400,
        code: 'validation_failed',
      });
    }
  });

  /** A request with exactly these Host and Origin headers (fetch would set Host itself). */
  function devToken(
    headers: Record<string, string>,
    path = '/ui/dev-token',
  ): Promise<{ status: number; type?: string; body: any }> {
    const url = new URL(server.url);
    const payload = JSON.stringify({ sub: 'mallory', roles: ['admin'] });
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path,
          method: path === '/ui/dev-token' ? 'POST' : 'GET',
          headers: { 'content-type': 'application/json', ...headers },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              type: res.headers['content-type'],
              body: text ? JSON.parse(text) : undefined,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(path === '/ui/dev-token' ? payload : undefined);
    });
  }

  it('refuses a page of another host that rebinds its name to loopback (Host or Origin not this server)', async () => {
    const port = new URL(server.url).port;
    for (const headers of <Record<string, string>[]>[
      { host: 'attacker.example' },
      { host: `attacker.example:${port}` },
      { host: `127.0.0.1:${Number(port) === 1 ? 2 : Number(port) - 1}` }, // another port is another server
      { host: `localhost:${port}.attacker.example` },
      { host: `127.0.0.1:${port}`, origin: 'http://attacker.example' },
      { host: `127.0.0.1:${port}`, origin: `http://attacker.example:${port}` },
      { host: `127.0.0.1:${port}`, origin: 'null' },
    ]) {
      const res = await devToken(headers);
      expect({ headers, status: res.status, code: res.body?.code }).toEqual({
        headers,
        status: 403,
        code: 'forbidden',
      });
      expect(res.type).toMatch(/^application\/problem\+json/);
      expect(res.body.token).toBeUndefined();
      expect((await devToken(headers, '/ui/config')).body).toEqual({ devSignIn: false, sso: null });
    }
  });

  it('answers a page of this server under any loopback name', async () => {
    const port = new URL(server.url).port;
    for (const headers of <Record<string, string>[]>[
      { host: `127.0.0.1:${port}` },
      { host: `localhost:${port}`, origin: `http://localhost:${port}` },
      { host: `[::1]:${port}`, origin: `http://[::1]:${port}` },
      { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` },
    ]) {
      const res = await devToken(headers);
      expect({ headers, status: res.status }).toEqual({ headers, status: 201 });
      expect(typeof res.body.token).toBe('string');
    }
  });

  it('answers only browsers on this machine', () => {
    expect(['127.0.0.1', '::1', '::ffff:127.0.0.1', '127.3.4.5'].every(isLoopback)).toBe(true);
    expect(['10.0.0.7', '::ffff:192.168.1.2', '2001:db8::1', undefined].some(isLoopback)).toBe(false);
  });
});

describe('web inbox in embedded dev mode with a shorter token lifetime, an issuer and an audience', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      auth: {
        secret: TEST_SECRET,
        devSecret: true,
        maxTtlSeconds: 3600,
        issuer: 'dev-issuer',
        audience: 'dev-audience',
      },
    });
  });
  afterAll(() => server?.stop());

  it('mints dev tokens the server accepts: within the lifetime cap, with the issuer and audience', async () => {
    const http = client(server.url);
    const minted = await http.post('/ui/dev-token', undefined, { sub: 'ann', roles: ['approver'] });
    expect(minted.status).toBe(201);
    const claims = JSON.parse(Buffer.from(minted.body.token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ iss: 'dev-issuer', aud: 'dev-audience' });
    expect(claims.exp - claims.iat).toBe(3600);
    expect((await http.get('/v1/approvals', minted.body.token)).status).toBe(200);
  });
});
