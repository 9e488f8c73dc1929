import type { Command } from 'commander';
import { Tollgate, TollgateError, type Me } from '@tollgate/sdk';
import {
  ApiClient,
  CliError,
  cliError,
  DEFAULT_URL,
  EXIT,
  ProblemError,
  refuseInsecureLogin,
  serverUrl,
} from '../client/api-client';
import {
  credentialsPath,
  CredentialsError,
  readLogins,
  removeLogin,
  saveLogin,
  withCredentialsLock,
} from './credentials';
import {
  awaitDeviceTokens,
  checkIssuer,
  discover,
  ProviderError,
  revoke,
  scopesFor,
  startDeviceFlow,
  supportsDeviceFlow,
  toEntry,
} from './provider';
import { printable } from '../safe-text';
import { StoredLogin } from './session';

/** What GET /auth/config tells a client about the server's single sign-on. */
interface SsoConfig {
  issuer: string;
  clientId: string;
  scopes: string[];
}

/** RFC 6749 §3.3 scope-token characters, at most 256 of them. */
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]{1,256}$/;

const HOW_TO_USE_A_TOKEN =
  'use a token instead: set TOLLGATE_TOKEN (or pass --token) to one your administrator gives you, or one from your identity provider that the server accepts';

/** `tollgate login` and `tollgate logout`: sign in with the organisation's provider (device flow), and forget it. */
export function addLoginCommands(program: Command): void {
  program
    .command('login')
    .description(
      "Sign in with the server's identity provider (OAuth device flow): open the link shown, confirm the code, and the CLI keeps the login (refreshed) for later commands",
    )
    .option(
      '--url <url>',
      'Tollgate base URL, https:// (plain http only on this machine) (default: TOLLGATE_URL or http://127.0.0.1:8080)',
    )
    .action((o: { url?: string }) => login(o));

  program
    .command('logout')
    .description('Forget the stored login for a server (and revoke its tokens at the provider where it can)')
    .option('--url <url>', 'Tollgate base URL (default: TOLLGATE_URL, or your only login)')
    .action((o: { url?: string }) => logout(o));
}

async function login(o: { url?: string }): Promise<void> {
  const url = serverUrl(o.url ?? process.env.TOLLGATE_URL ?? DEFAULT_URL);
  // Before anything is asked of the server: its answer names the provider the person would sign in with.
  refuseInsecureLogin(url);
  const sso = await ssoConfig(url);
  const config = await orUnreachable(() => discover(sso.issuer, sso.clientId));
  if (!supportsDeviceFlow(config))
    throw new CliError(
      `the identity provider ${sso.issuer} does not offer the device authorization grant (RFC 8628), which tollgate login needs; ask your administrator to enable it for the client "${sso.clientId}", or ${HOW_TO_USE_A_TOKEN}`,
      EXIT.usage,
    );
  const started = await orRefused(() => startDeviceFlow(config, scopesFor(config, sso.scopes)));
  // Ctrl-C cancels (a second one kills at once); set before the prompt, which a person may answer with it.
  const cancel = new AbortController();
  const onInterrupt = () => cancel.abort();
  process.once('SIGINT', onInterrupt);
  const out = process.stdout;
  const code = printable(started.user_code, 64);
  if (started.verification_uri_complete) {
    out.write(`To sign in to ${url}, open\n\n  ${printable(started.verification_uri_complete)}\n\n`);
    out.write(`and check that it shows the code ${code}.\n`);
  } else {
    out.write(`To sign in to ${url}, open\n\n  ${printable(started.verification_uri)}\n\nand enter the code ${code}\n`);
  }
  out.write('Waiting for you to confirm there (Ctrl-C cancels)…\n');

  let tokens;
  try {
    tokens = await awaitDeviceTokens(config, started, cancel.signal);
  } catch (e) {
    if (e instanceof ProviderError && e.code === 'cancelled')
      throw new CliError('login cancelled; nothing was stored', 130);
    if (e instanceof ProviderError && e.code === 'access_denied')
      throw new CliError(`the sign-in was denied at the provider; nothing was stored (${e.message})`, EXIT.refused);
    if (e instanceof ProviderError && e.code === 'expired_token')
      throw new CliError('the code expired before it was confirmed; run tollgate login again', EXIT.refused);
    throw new CliError((e as Error).message, EXIT.refused);
  } finally {
    process.removeListener('SIGINT', onInterrupt);
  }

  const entry = toEntry({ url, issuer: sso.issuer, clientId: sso.clientId }, tokens);
  await stored(() => saveLogin(entry));
  const api = new ApiClient({ url, token: '', login: new StoredLogin(entry) });
  let me: Me;
  try {
    me = await api.call((t) => t.me());
  } catch (e) {
    // Signed in at the provider, but this server does not take the person (no mapped role, an agent, …):
    // a login that cannot be used is not kept.
    if (e instanceof ProblemError && e.exitCode === EXIT.refused) await stored(() => removeLogin(url));
    throw e;
  }
  const roles = me.roles.length > 0 ? me.roles.join(', ') : 'no roles';
  const tenant = me.tenant !== 'default' ? `, tenant ${me.tenant}` : '';
  out.write(
    `Signed in to ${url} as ${printable(me.name ?? me.id)} (${printable(me.id)}${printable(tenant)}; ${roles}).\n`,
  );
  if (me.roles.length === 0)
    out.write(
      'You hold no role at this server, so you can see and decide nothing yet: ask its administrator to map one of your groups to a role (TOLLGATE_OIDC_ROLE_MAP).\n',
    );
  out.write(`Your login is kept in ${credentialsPath()}; tollgate logout forgets it.\n`);
}

async function logout(o: { url?: string }): Promise<void> {
  const given = o.url ?? process.env.TOLLGATE_URL;
  const logins = store(() => readLogins());
  let url: string;
  if (given !== undefined) url = serverUrl(given);
  else if (logins.length === 1) url = logins[0].url;
  else if (logins.length === 0) {
    process.stdout.write('You are not logged in anywhere.\n');
    return;
  } else
    throw new CliError(`you are logged in to ${logins.map((l) => l.url).join(', ')}: say which with --url`, EXIT.usage);
  const entry = logins.find((l) => l.url === url);
  if (!entry) {
    process.stdout.write(`You are not logged in to ${url}.\n`);
    return;
  }
  // Revocation is best effort: the local copy goes whatever the provider says, so a dead provider cannot keep
  // a login on this machine.
  let revokeFailure: string | undefined;
  let revoked = false;
  try {
    revoked = await revoke(await discover(entry.issuer, entry.clientId), entry);
  } catch (e) {
    revokeFailure = e instanceof ProviderError ? e.message : String(e);
  }
  await stored(() => removeLogin(url));
  process.stdout.write(`Logged out of ${url}${revoked ? '; the tokens were revoked at the provider' : ''}.\n`);
  if (revokeFailure) {
    // A warning, not a failure: what logout promises (no login left on this machine) is done.
    process.stderr.write(`tollgate: warning: could not revoke the tokens at the provider: ${revokeFailure}\n`);
  }
}

/** GET /auth/config: the provider and the CLI's client id, or null when the server has no single sign-on. */
async function ssoConfig(url: string): Promise<SsoConfig> {
  const tollgate = new Tollgate({ url, retry: { maxAttempts: 1 }, headers: { 'user-agent': 'tollgate-cli' } });
  let body: { oidc?: unknown };
  try {
    body = await tollgate.request<{ oidc?: unknown }>('GET', '/auth/config', { timeoutMs: 15_000 });
  } catch (e) {
    if (e instanceof TollgateError && e.status === 404) throw noSso(url);
    throw cliError(e);
  }
  if (body?.oidc === null) throw noSso(url);
  const oidc = body?.oidc as Partial<SsoConfig> | undefined;
  const bounded = (s: unknown) => typeof s === 'string' && s.length > 0 && s.length <= 2048;
  if (
    !oidc ||
    !bounded(oidc.issuer) ||
    !bounded(oidc.clientId) ||
    !Array.isArray(oidc.scopes) ||
    oidc.scopes.length > 50 ||
    !oidc.scopes.every((s) => typeof s === 'string' && SCOPE.test(s))
  )
    throw new CliError(`${url}/auth/config did not answer a single sign-on configuration`, EXIT.unavailable);
  try {
    checkIssuer(oidc.issuer!);
  } catch (e) {
    throw new CliError(`${url}/auth/config names ${(e as Error).message}`, EXIT.usage);
  }
  return oidc as SsoConfig;
}

function noSso(url: string): CliError {
  return new CliError(`the server at ${url} has no single sign-on configured; ${HOW_TO_USE_A_TOKEN}`, EXIT.usage);
}

async function orUnreachable<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof ProviderError) throw new CliError(e.message, EXIT.unavailable);
    throw e;
  }
}

async function orRefused<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof ProviderError) throw new CliError(e.message, EXIT.refused);
    throw e;
  }
}

/** A change to the credentials file, under its lock (a refresh by another command may be writing it). */
async function stored<T>(work: () => T): Promise<T> {
  try {
    return await withCredentialsLock(async () => work());
  } catch (e) {
    if (e instanceof CredentialsError) throw new CliError(e.message, EXIT.usage);
    throw e;
  }
}

function store<T>(work: () => T): T {
  try {
    return work();
  } catch (e) {
    if (e instanceof CredentialsError) throw new CliError(e.message, EXIT.usage);
    throw e;
  }
}
