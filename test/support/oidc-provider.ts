/**
 * A real OpenID provider for the tests (oidc-provider, a certified implementation) on loopback, with a login page of
 * one field (the account id) and consent given in advance. Its port is known before Tollgate starts (Tollgate reads
 * the discovery document on first use), and the clients are registered once Tollgate's address is known:
 *
 *   const idp = await startOidcProvider({ ann: { groups: ['payments-leads'], org: 'acme' } });
 *   const server = await startTestServer({ oidc: idp.oidcConfig() });
 *   await idp.registerTollgate(server.url);
 */
import { randomUUID } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import type { OidcConfig } from '../../src/infrastructure/config/config';

// Unique text: V8 would reuse a Function compiled by an earlier test file, with that file's (torn down) import context.
const importEsm = new Function('s', `return import(s) // ${randomUUID()}`) as (s: string) => Promise<any>;

export const WEB_CLIENT_ID = 'tollgate-web';
export const WEB_CLIENT_SECRET = 'tollgate-web-secret-for-the-tests-0123456789';
export const CLI_CLIENT_ID = 'tollgate-cli';

/** An account's claims besides `sub` (groups, org, name, email: whatever the test maps). */
export type Accounts = Record<string, Record<string, unknown>>;

export interface TestProvider {
  issuer: string;
  accounts: Accounts;
  /** Settings for Tollgate: this provider, its web and CLI clients, roles from `groups`, the tenant from `org`. */
  oidcConfig(overrides?: Partial<OidcConfig>): OidcConfig;
  /** Registers Tollgate's redirect URI (`<url>/auth/callback`) and post-logout URI (`<url>/`). */
  registerTollgate(url: string): Promise<void>;
  /** A token signed with the provider's own key (the one its jwks_uri serves), as it would issue one. */
  sign(
    claims: Record<string, unknown>,
    opts?: { audience?: string; issuer?: string; ttlSeconds?: number },
  ): Promise<string>;
  /** Sign-ins the provider finished (account ids), in order. */
  logins: string[];
  /** RP-initiated logouts the provider received. */
  logouts: number;
  close(): Promise<void>;
}

export interface ProviderOptions {
  /** Put groups and org in the ID token (default), or, as Okta and Google do by default, only in userinfo. */
  claimsInIdToken?: boolean;
  /** Offer an end_session_endpoint (RP-initiated logout; default yes). */
  endSession?: boolean;
}

export async function startOidcProvider(accounts: Accounts, options: ProviderOptions = {}): Promise<TestProvider> {
  const { default: Provider } = await importEsm('oidc-provider');
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  let provider: any;
  const logins: string[] = [];
  const state = { logouts: 0 };
  const server: Server = createServer((req, res) => {
    if (!provider) {
      res.writeHead(503).end('not configured yet');
      return;
    }
    void handle(provider, req, res, logins).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(e));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    issuer,
    accounts,
    logins,
    get logouts() {
      return state.logouts;
    },
    oidcConfig: (overrides = {}) => ({
      issuer,
      providerName: 'Test IdP',
      clientId: WEB_CLIENT_ID,
      clientSecret: WEB_CLIENT_SECRET,
      cliClientId: CLI_CLIENT_ID,
      scopes: ['openid', 'profile', 'email', 'groups'],
      rolesClaim: 'groups',
      roleMap: { 'payments-leads': ['approver'], secops: ['admin'], audit: ['auditor'] },
      tenant: { claim: 'org' },
      sessionTtlSeconds: 3600,
      sessionIdleSeconds: 600,
      ...overrides,
    }),
    async registerTollgate(url: string) {
      provider = new Provider(issuer, {
        clients: [
          {
            client_id: WEB_CLIENT_ID,
            client_secret: WEB_CLIENT_SECRET,
            redirect_uris: [`${url}/auth/callback`],
            post_logout_redirect_uris: [`${url}/`],
            grant_types: ['authorization_code'],
            response_types: ['code'],
          },
          {
            client_id: CLI_CLIENT_ID,
            token_endpoint_auth_method: 'none',
            grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
            response_types: [],
            redirect_uris: [],
          },
        ],
        jwks: { keys: [jwk] },
        cookies: { keys: ['test-cookie-key-0123456789'] },
        pkce: { required: () => true },
        // Custom claims (groups, org) go into the ID token, as Keycloak's and Okta's mappers put them; conformant:
        // only into userinfo, once an access token is issued.
        conformIdTokenClaims: options.claimsInIdToken === false,
        ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, DeviceCode: 600 },
        claims: { openid: ['sub'], groups: ['groups', 'org'], profile: ['name'], email: ['email'] },
        features: {
          devInteractions: { enabled: false },
          deviceFlow: { enabled: true },
          rpInitiatedLogout: {
            enabled: options.endSession !== false,
            // No confirmation page: the browser goes straight back to Tollgate, as most providers do for an RP, and
            // the provider's own session ends with it (`logout=yes`), as Keycloak's and Okta's do.
            logoutSource: async (ctx: any, form: string) => {
              state.logouts += 1;
              const all = form.replace('</form>', '<input type="hidden" name="logout" value="yes"/></form>');
              ctx.body = `<!doctype html><html><body>${all}<script>document.forms[0].submit()</script></body></html>`;
            },
          },
        },
        findAccount: async (_ctx: unknown, sub: string) =>
          accounts[sub] ? { accountId: sub, claims: async () => ({ sub, ...accounts[sub] }) } : undefined,
        // Consent is given in advance for every client and scope: the tests are about Tollgate, not consent.
        loadExistingGrant: async (ctx: any) => {
          // The session's grant for the client when it has one: a new one would drop the codes issued under the old.
          const existing = ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
          if (existing) {
            const found = await ctx.oidc.provider.Grant.find(existing);
            // Another account signing in on the same provider session (prompt=login) gets a grant of its own.
            if (found && found.accountId === ctx.oidc.session.accountId) return found;
          }
          const grant = new ctx.oidc.provider.Grant({
            clientId: ctx.oidc.client.clientId,
            accountId: ctx.oidc.session.accountId,
          });
          grant.addOIDCScope('openid profile email groups');
          grant.addOIDCClaims(['groups', 'org', 'name', 'email']);
          await grant.save();
          return grant;
        },
        renderError: async (ctx: any, out: Record<string, string>) => {
          ctx.type = 'html';
          ctx.body = `<!doctype html><h1>Provider error</h1><p id="error">${out.error}: ${out.error_description}</p>`;
        },
      });
      provider.on('server_error', () => undefined);
    },
    sign: async (claims, opts = {}) => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'test-key' })
        .setIssuer(opts.issuer ?? issuer)
        .setAudience(opts.audience ?? CLI_CLIENT_ID)
        .setIssuedAt(now)
        .setExpirationTime(now + (opts.ttlSeconds ?? 600))
        .sign(privateKey);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The login page (one field, the account id) and its answer; everything else is the provider's. */
async function handle(provider: any, req: IncomingMessage, res: ServerResponse, logins: string[]): Promise<void> {
  const m = /^\/interaction\/([A-Za-z0-9_-]+)$/.exec(req.url ?? '');
  if (!m) return provider.callback()(req, res);
  const details = await provider.interactionDetails(req, res);
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>Test IdP sign-in</title></head><body>
<h1>Sign in to the test identity provider</h1>
<form method="post" action="/interaction/${details.uid}">
<label for="login">Account</label> <input id="login" name="login" autocomplete="off">
<button type="submit">Sign in</button>
</form></body></html>`);
    return;
  }
  const body = await new Promise<string>((resolve) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => resolve(data));
  });
  const accountId = new URLSearchParams(body).get('login') ?? '';
  logins.push(accountId);
  await provider.interactionFinished(req, res, { login: { accountId } }, { mergeWithLastSubmission: false });
}

/**
 * A cookie jar for driving the flow with fetch: one per browser being imitated. Cookies are kept per host and sent
 * to every path of it (enough here: the names do not collide).
 */
export class CookieJar {
  private readonly byHost = new Map<string, Map<string, string>>();

  header(url: string): string {
    const jar = this.byHost.get(new URL(url).host);
    return jar ? [...jar].map(([k, v]) => `${k}=${v}`).join('; ') : '';
  }

  names(url: string): string[] {
    return [...(this.byHost.get(new URL(url).host)?.keys() ?? [])];
  }

  get(url: string, name: string): string | undefined {
    return this.byHost.get(new URL(url).host)?.get(name);
  }

  set(url: string, name: string, value: string | undefined): void {
    const host = new URL(url).host;
    const jar = this.byHost.get(host) ?? new Map<string, string>();
    this.byHost.set(host, jar);
    if (value === undefined) jar.delete(name);
    else jar.set(name, value);
  }

  take(url: string, res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const gone = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      this.set(url, name, gone || value === '' ? undefined : value);
    }
  }

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = this.header(url);
    if (cookie) headers.set('cookie', cookie);
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    this.take(url, res);
    return res;
  }
}

/**
 * Follows a sign-in from `start` (Tollgate's /auth/login, or an authorization URL) through the provider's login page
 * as `account`, and stops at the redirect back to Tollgate's callback, unopened: the URL the browser would open next.
 */
export async function throughProvider(jar: CookieJar, start: string, account: string, tollgateUrl: string) {
  let url = start;
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(`${tollgateUrl}/auth/callback`)) return url;
    const res = await jar.fetch(url);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url).href;
      continue;
    }
    const html = await res.text();
    const form = /<form method="post" action="([^"]+)"/.exec(html);
    if (res.status !== 200 || !form)
      throw new Error(`Unexpected page at ${url} (${res.status}): ${html.slice(0, 300)}`);
    // The login page asks for the account; any other form is one the provider submits by script (ending its session
    // of another account before this one signs in): its hidden fields are posted as the browser would.
    const hidden = [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1], m[2]]);
    const fields = /name="login"/.test(html) ? [['login', account]] : hidden;
    const posted = await jar.fetch(new URL(form[1], url).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
    url = new URL(posted.headers.get('location')!, url).href;
  }
  throw new Error('Too many redirects on the way to the callback');
}
