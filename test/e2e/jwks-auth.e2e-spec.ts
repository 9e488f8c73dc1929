import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { mintToken } from '../../src/infrastructure/auth/jwt-verifier';
import { client } from '../support/http';
import { startOidcProvider, TestProvider } from '../support/oidc-provider';
import { startTestServer, TEST_SECRET, TestServer } from '../support/server';

/** Tokens from an identity provider: verified against its JWKS, issuer and audience, algorithms pinned. */
describe('authentication with TOLLGATE_JWKS_URL', () => {
  let idp: Server;
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let rsa: Awaited<ReturnType<typeof generateKeyPair>>;
  let ec: Awaited<ReturnType<typeof generateKeyPair>>;
  const ISSUER = 'https://idp.example.test/';
  const AUDIENCE = 'tollgate';

  function sign(
    key: CryptoKey,
    alg: string,
    kid: string,
    claims: Record<string, unknown>,
    opts: { iss?: string; aud?: string; exp?: string | false } = {},
  ) {
    let jwt = new SignJWT(claims)
      .setProtectedHeader({ alg, kid })
      .setSubject('alice')
      .setIssuer(opts.iss ?? ISSUER)
      .setAudience(opts.aud ?? AUDIENCE)
      .setIssuedAt();
    if (opts.exp !== false) jwt = jwt.setExpirationTime(opts.exp ?? '10m');
    return jwt.sign(key);
  }

  beforeAll(async () => {
    rsa = await generateKeyPair('RS256', { extractable: true });
    ec = await generateKeyPair('ES256', { extractable: true });
    const keys = [
      { ...(await exportJWK(rsa.publicKey)), kid: 'rsa-1', alg: 'RS256', use: 'sig' },
      { ...(await exportJWK(ec.publicKey)), kid: 'ec-1', alg: 'ES256', use: 'sig' },
    ];
    idp = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys })),
    );
    await new Promise<void>((r) => idp.listen(0, '127.0.0.1', r));
    const jwksUrl = `http://127.0.0.1:${(idp.address() as AddressInfo).port}/jwks.json`;
    server = await startTestServer({ auth: { jwksUrl, issuer: ISSUER, audience: AUDIENCE, devSecret: false } });
    api = client(server.url);
  });

  afterAll(async () => {
    await server.stop();
    await new Promise((r) => idp.close(r));
  });

  it('accepts RS256 and ES256 tokens from the identity provider', async () => {
    for (const token of [
      await sign(rsa.privateKey, 'RS256', 'rsa-1', { roles: ['admin'] }),
      await sign(ec.privateKey, 'ES256', 'ec-1', { roles: ['admin'] }),
    ]) {
      expect((await api.get('/v1/tools', token)).status).toBe(200);
    }
  });

  it('refuses a token for another audience or from another issuer', async () => {
    expect(
      (
        await api.get(
          '/v1/tools',
          await sign(rsa.privateKey, 'RS256', 'rsa-1', { roles: ['admin'] }, { aud: 'someone-else' }),
        )
      ).status,
    ).toBe(401);
    expect(
      (
        await api.get(
          '/v1/tools',
          await sign(rsa.privateKey, 'RS256', 'rsa-1', { roles: ['admin'] }, { iss: 'https://evil.test/' }),
        )
      ).status,
    ).toBe(401);
  });

  it('refuses a token without exp, and an expired one', async () => {
    expect(
      (await api.get('/v1/tools', await sign(rsa.privateKey, 'RS256', 'rsa-1', { roles: ['admin'] }, { exp: false })))
        .status,
    ).toBe(401);
    const old = await new SignJWT({ roles: ['admin'] })
      .setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' })
      .setSubject('alice')
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(rsa.privateKey);
    expect((await api.get('/v1/tools', old)).status).toBe(401);
  });

  it('refuses a token that lives longer than the maximum (24 h by default) or was issued in the future', async () => {
    const t = Math.floor(Date.now() / 1000);
    const token = (iat: number | undefined, exp: number) => {
      let jwt = new SignJWT({ roles: ['admin'] })
        .setProtectedHeader({ alg: 'ES256', kid: 'ec-1' })
        .setSubject('alice')
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setExpirationTime(exp);
      if (iat !== undefined) jwt = jwt.setIssuedAt(iat);
      return jwt.sign(ec.privateKey);
    };
    expect((await api.get('/v1/tools', await token(t, t + 24 * 3600))).status).toBe(200);
    for (const [iat, exp] of [
      [t, t + 7 * 24 * 3600],
      [undefined, t + 7 * 24 * 3600],
      [t + 3600, t + 7200],
    ]) {
      const r = await api.get('/v1/tools', await token(iat, exp!));
      expect({ iat, exp, status: r.status, code: r.body.code }).toEqual({
        iat,
        exp,
        status: 401,
        code: 'unauthenticated',
      });
    }
  });

  it('refuses an HS256 token signed with the public key (no key confusion) and alg none', async () => {
    const publicPem = JSON.stringify(await exportJWK(rsa.publicKey));
    const confused = await new SignJWT({ roles: ['admin'] })
      .setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' })
      .setSubject('alice')
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode(publicPem));
    expect((await api.get('/v1/tools', confused)).status).toBe(401);
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'alice', roles: ['admin'], iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 600 })}.`;
    const r = await api.get('/v1/tools', none);
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('unauthenticated');
  });
});

/**
 * TOLLGATE_JWKS_URL serving the single sign-on provider's own issuer: its tokens are people's tokens, mapped through
 * TOLLGATE_OIDC_ROLE_MAP and the tenant claim as at web sign-in, and never agents.
 */
describe('TOLLGATE_JWKS_URL for the single sign-on provider', () => {
  let idp: TestProvider;
  let server: TestServer;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    idp = await startOidcProvider({});
    server = await startTestServer({
      auth: { jwksUrl: `${idp.issuer}/jwks`, issuer: idp.issuer, audience: 'tollgate-api', devSecret: false },
      oidc: idp.oidcConfig(),
    });
    await idp.registerTollgate(server.url);
    api = client(server.url);
  });
  afterAll(async () => {
    await server?.stop();
    await idp?.close();
  });

  it('maps the provider tokens: roles from the groups claim, tenant from its claim, agent never', async () => {
    for (const audience of ['tollgate-api', 'tollgate-cli']) {
      const token = await idp.sign(
        { sub: 'ann', groups: ['secops', 'agent'], org: 'acme', roles: ['agent'] },
        { audience },
      );
      const me = await api.get('/v1/me', token);
      expect({ audience, status: me.status, me: me.body }).toMatchObject({
        audience,
        status: 200,
        me: { id: 'ann', tenant: 'acme', kind: 'person', roles: ['admin'] },
      });
    }
    // The web client's tokens stay with its sessions.
    for (const audience of ['someone-else', 'tollgate-web']) {
      const other = await idp.sign({ sub: 'ann', groups: ['secops'], org: 'acme' }, { audience });
      expect({ audience, status: (await api.get('/v1/me', other)).status }).toEqual({ audience, status: 401 });
    }
  });

  it('refuses an HS256 token naming the provider as issuer (its keys are asymmetric only)', async () => {
    const hs = await mintToken(TEST_SECRET, { sub: 'mallory', roles: ['admin'], tenant: 'acme' }, '10m', {
      issuer: idp.issuer,
      audience: 'tollgate-web',
    });
    expect((await api.get('/v1/me', hs)).status).toBe(401);
  });
});
