// A real OpenID provider (oidc-provider) for the CLI login tests, run as its own process: oidc-provider is an ES
// module, which Jest's CommonJS runtime cannot load. test/support/device-provider.ts starts and drives it.
// Options come as JSON in argv[2]; it prints {"issuer"} on its first stdout line once it listens.
import { exportJWK, generateKeyPair } from 'jose';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const o = JSON.parse(process.argv[2] ?? '{}');
const CLIENT_ID = 'tollgate-cli';
const RESOURCE = 'urn:tollgate';
/** Where the access token is not for Tollgate, the ID token is what Tollgate gets, so it carries the claims. */
const idTokenClaims = Boolean(o.opaqueAccessTokens || o.accessTokenAudience);

/** The test's account store and what the test reads back. */
const state = { accounts: new Map(), signInAs: '', revoked: [], refreshes: 0 };

const server = createServer();
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const issuer = `http://127.0.0.1:${server.address().port}`;
const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), kid: 'test-rs256', alg: 'RS256', use: 'sig' };

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: CLIENT_ID,
      token_endpoint_auth_method: 'none',
      grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
      response_types: [],
      redirect_uris: [],
    },
  ],
  jwks: { keys: [jwk] },
  cookies: { keys: ['device-provider-test-cookie-key'] },
  scopes: ['openid', 'offline_access', 'profile', 'email'],
  claims: { openid: idTokenClaims ? ['sub', 'roles'] : ['sub'], profile: ['name'], email: ['email'] },
  conformIdTokenClaims: !idTokenClaims,
  findAccount: (_ctx, id) => {
    const a = state.accounts.get(id);
    return a && { accountId: id, claims: () => ({ sub: id, name: a.name, email: a.email, roles: a.roles }) };
  },
  features: {
    devInteractions: { enabled: false },
    deviceFlow: { enabled: o.deviceFlow ?? true },
    revocation: { enabled: true },
    // Without a resource, oidc-provider's access tokens are opaque (as Google's are).
    resourceIndicators: {
      enabled: !o.opaqueAccessTokens,
      defaultResource: () => RESOURCE,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: 'tollgate',
        // By default the CLI's client id, one of the audiences Tollgate accepts from its provider; or another API's.
        audience: o.accessTokenAudience ?? CLIENT_ID,
        accessTokenTTL: o.accessTokenTtl ?? 3600,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  // The claims Tollgate reads from a bearer token: roles; name and email for GET /v1/me.
  extraTokenClaims: (_ctx, token) => {
    const a = token.accountId ? state.accounts.get(token.accountId) : undefined;
    if (!a) return {};
    return { roles: a.roles, name: a.name, email: a.email };
  },
  issueRefreshToken: () => true,
  rotateRefreshToken: true,
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  ttl: {
    DeviceCode: o.deviceCodeTtl ?? 600,
    Interaction: 600,
    Session: 3600,
    Grant: 3600,
    IdToken: 3600,
    RefreshToken: 3600,
  },
});
provider.on('grant.success', (ctx) => {
  if (ctx.oidc?.params?.grant_type === 'refresh_token') state.refreshes++;
});
provider.on('grant.revoked', (_ctx, grantId) => state.revoked.push(grantId));

const callback = provider.callback();
server.on('request', (req, res) => {
  if (req.url.startsWith('/interaction/')) return void signIn(req, res).catch((e) => res.writeHead(500).end(String(e)));
  if (req.url.startsWith('/__test/')) return void control(req, res);
  callback(req, res);
});

/** The provider's sign-in and consent, answered at once for the account the test named. */
async function signIn(req, res) {
  const details = await provider.interactionDetails(req, res);
  const accountId = state.signInAs;
  if (!state.accounts.has(accountId)) {
    await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'no such account' });
    return;
  }
  const grant = new provider.Grant({ accountId, clientId: details.params.client_id });
  grant.addOIDCScope(String(details.params.scope ?? 'openid'));
  if (!o.opaqueAccessTokens) grant.addResourceScope(RESOURCE, 'tollgate');
  const grantId = await grant.save();
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
}

/** The test's controls: POST /__test/state with {accounts?, signInAs?}; GET it back. */
async function control(req, res) {
  if (req.method === 'POST') {
    let body = '';
    for await (const chunk of req) body += chunk;
    const p = JSON.parse(body);
    if (p.accounts) for (const a of p.accounts) state.accounts.set(a.id, a);
    if ('signInAs' in p) state.signInAs = p.signInAs;
  }
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ revoked: state.revoked, refreshes: state.refreshes, signInAs: state.signInAs }));
}

process.stdout.write(`${JSON.stringify({ issuer })}\n`);
