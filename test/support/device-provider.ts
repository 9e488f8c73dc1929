import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { oidcConfig, type OidcConfig } from '../../src/infrastructure/config/oidc-config';

/**
 * A real OpenID provider (oidc-provider, certified) on loopback for the CLI's device flow, in its own process
 * (device-provider-process.mjs: oidc-provider is an ES module Jest's runtime cannot load): a public client `tollgate-cli`,
 * JWT access tokens for the resource `urn:tollgate` (audience: the CLI's client id) carrying the account's roles, rotating
 * refresh tokens, revocation. Its sign-in is the test's: the interaction signs in whoever `signInAs` names, from
 * the test's own accounts, and `openVerificationPage` plays the person's browser.
 */

export interface Account {
  id: string;
  name: string;
  email: string;
  roles: unknown;
}

export interface DeviceProviderOptions {
  /** false: a provider without the device authorization grant. Default true. */
  deviceFlow?: boolean;
  /** Access token lifetime, seconds. Default 3600. */
  accessTokenTtl?: number;
  /** How long a device code lives, seconds. Default 600. */
  deviceCodeTtl?: number;
  /** The access tokens' audience (another API's, as Entra ID's for Graph); the ID token then carries the claims. */
  accessTokenAudience?: string;
  /** Opaque access tokens (no resource indicator), so the ID token carries the claims. Default false: JWTs. */
  opaqueAccessTokens?: boolean;
}

export interface ProviderState {
  /** The grants revoked (by revoking a token of theirs), in order. */
  revoked: string[];
  /** Refresh token grants it answered. */
  refreshes: number;
}

export interface DeviceProvider {
  issuer: string;
  jwksUrl: string;
  clientId: string;
  /** Tollgate's single sign-on settings for this provider, as TOLLGATE_OIDC_* would give them (roles from `roles`). */
  oidcConfig(): OidcConfig;
  /** Adds accounts and/or names who signs in next. */
  set(p: { accounts?: Account[]; signInAs?: string }): Promise<ProviderState>;
  state(): Promise<ProviderState>;
  stop(): Promise<void>;
}

export async function startDeviceProvider(o: DeviceProviderOptions = {}): Promise<DeviceProvider> {
  const child: ChildProcess = spawn(
    process.execPath,
    [join(__dirname, 'device-provider-process.mjs'), JSON.stringify(o)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const first = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the test provider exited with ${code}: ${stderr}`)));
  });
  const { issuer } = JSON.parse(first) as { issuer: string };
  const control = async (body?: unknown): Promise<ProviderState> => {
    const res = await fetch(`${issuer}/__test/state`, {
      method: body ? 'POST' : 'GET',
      headers: { 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    return (await res.json()) as ProviderState;
  };
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    clientId: 'tollgate-cli',
    oidcConfig: () =>
      oidcConfig({
        TOLLGATE_OIDC_ISSUER: issuer,
        // The web inbox's client is not registered here: these tests sign in with the CLI's only.
        TOLLGATE_OIDC_CLIENT_ID: 'tollgate-web',
        TOLLGATE_OIDC_CLIENT_SECRET: 'unused-web-client-secret-0123456789',
        TOLLGATE_OIDC_CLI_CLIENT_ID: 'tollgate-cli',
      })!,
    set: (p) => control(p),
    state: () => control(),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
    },
  };
}

/**
 * The person's browser at the verification URI (the complete one, carrying the user code): it follows the
 * provider's pages — the auto-submitted form, the confirmation ("Continue", or "Abort" to refuse), the sign-in —
 * with cookies, as a browser would. Answers the final page's text.
 */
export async function openVerificationPage(uri: string, o: { abort?: boolean } = {}): Promise<string> {
  const jar = new Map<string, string>();
  let next: { url: string; method: 'GET' | 'POST'; form?: Record<string, string> } = { url: uri, method: 'GET' };
  for (let hop = 0; hop < 20; hop++) {
    const res = await fetch(next.url, {
      method: next.method,
      redirect: 'manual',
      headers: {
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(next.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: next.form ? new URLSearchParams(next.form).toString() : undefined,
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const at = pair.indexOf('=');
      const value = pair.slice(at + 1);
      if (/expires=Thu, 01 Jan 1970/i.test(c) || value === '') jar.delete(pair.slice(0, at));
      else jar.set(pair.slice(0, at), value);
    }
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      next = { url: new URL(location, next.url).toString(), method: 'GET' };
      continue;
    }
    const html = await res.text();
    if (next.form?.abort) return html; // the provider's answer to "Abort": its code-entry page again
    const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
    if (!form) return html;
    const fields: Record<string, string> = {};
    for (const m of form[2].matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g))
      fields[m[1]] = unescapeHtml(m[2]);
    if (fields.confirm === 'yes' && o.abort) {
      delete fields.confirm;
      fields.abort = 'yes';
    }
    next = { url: new URL(unescapeHtml(form[1]), next.url).toString(), method: 'POST', form: fields };
  }
  throw new Error('the verification pages did not end');
}

function unescapeHtml(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
