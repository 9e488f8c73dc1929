import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN } from '../support/process';
import { cliEnv, runCli } from '../support/pty';
import { startTestServer, TestServer } from '../support/server';
import { DeviceProvider, openVerificationPage, startDeviceProvider } from '../support/device-provider';

/**
 * `tollgate login` / `tollgate logout`: the built CLI reads the server's GET /auth/config, signs in with a real
 * OpenID provider (oidc-provider on loopback) through the device authorization grant, and the real server, set up
 * for that provider (TOLLGATE_OIDC_*), takes its tokens.
 */
describe('tollgate login (device flow, spawned CLI)', () => {
  let provider: DeviceProvider;
  let server: TestServer;
  let config: string; // XDG_CONFIG_HOME of the person's machine
  const file = () => join(config, 'tollgate', 'credentials.json');
  const stored = () => JSON.parse(readFileSync(file(), 'utf8')).logins[0];
  // No TOLLGATE_TOKEN: the CLI has only what `tollgate login` stored.
  const env = (extra: Record<string, string> = {}) =>
    cliEnv({ url: server.url, XDG_CONFIG_HOME: config, HOME: config, ...extra });

  beforeAll(async () => {
    // Access tokens live 4 s, so a refresh is due within the test.
    provider = await startDeviceProvider({ accessTokenTtl: 4 });
    await provider.set({
      accounts: [
        { id: 'ann', name: 'Ann', email: 'ann@example.test', roles: ['admin'] },
        { id: 'bob', name: 'Bob', email: 'bob@example.test', roles: ['approver'] },
        { id: 'ivy', name: 'Ivy', email: 'ivy@example.test', roles: ['intern'] },
      ],
    });
    server = await startTestServer({ oidc: provider.oidcConfig() });
  });
  afterAll(async () => {
    await server?.stop();
    await provider?.stop();
  });
  beforeEach(() => (config = mkdtempSync(join(tmpdir(), 'tollgate-login-'))));
  afterEach(() => rmSync(config, { recursive: true, force: true }));

  /** Runs `tollgate login …`; `person` does what the person does at the verification URI once it is printed. */
  function login(
    args: string[],
    person?: (uri: string, child: ReturnType<typeof spawn>) => Promise<unknown>,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, 'login', ...args], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      let acted = false;
      child.stdout!.on('data', (d) => {
        stdout += d;
        const uri = /^\s+(http\S+)$/m.exec(stdout)?.[1];
        if (uri && /Waiting/.test(stdout) && person && !acted) {
          acted = true;
          person(uri, child).catch(reject);
        }
      });
      child.stderr!.on('data', (d) => (stderr += d));
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    });
  }

  async function signIn(who: string): Promise<string> {
    await provider.set({ signInAs: who });
    const r = await login([], (uri) => openVerificationPage(uri));
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    return r.stdout;
  }

  it('signs in with the device flow, keeps the login 0600 in the config dir, and later commands act as the person', async () => {
    await provider.set({ signInAs: 'ann' });
    const r = await login([], (uri) => openVerificationPage(uri));
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(
      /To sign in to http:\/\/127\.0\.0\.1:\d+, open\n\n\s+http:\/\/127\.0\.0\.1:\d+\/device\?user_code=/,
    );
    expect(r.stdout).toMatch(/and check that it shows the code [A-Z]{4}-[A-Z]{4}\./);
    expect(r.stdout).toMatch(/Signed in to http:\/\/127\.0\.0\.1:\d+ as Ann \(ann; admin\)\./);

    expect(statSync(file()).mode & 0o777).toBe(0o600);
    expect(statSync(join(config, 'tollgate')).mode & 0o777).toBe(0o700);
    const login0 = stored();
    expect(login0).toMatchObject({ url: server.url, issuer: provider.issuer, clientId: 'tollgate-cli' });
    expect(login0.access_token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(typeof login0.refresh_token).toBe('string');
    expect(login0.expires_at).toBeGreaterThan(login0.obtained_at);
    // The tokens are never printed.
    expect(r.stdout).not.toContain(login0.access_token);
    expect(r.stdout).not.toContain(login0.refresh_token);

    const halt = await runCli(['halt', '--reason', 'drill', '--json'], env());
    expect({ code: halt.code, stderr: halt.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(halt.stdout).by).toMatchObject({ id: 'ann', via: 'cli' });
    expect((await runCli(['resume'], env())).stdout).toMatch(/Resumed the tenant/);

    // A token given explicitly still wins over the stored login.
    const explicit = await runCli(['tools'], env({ TOLLGATE_TOKEN: 'not-a-token' }));
    expect(explicit.code).toBe(1);
    expect(explicit.stderr).toMatch(/^unauthenticated: /);
  });

  it('refreshes the login shortly before expiry and writes the new tokens back', async () => {
    await signIn('bob');
    const before = stored();
    const { refreshes } = await provider.state();
    // Wait (no timing asserted) until the stored access token is due for a refresh.
    while (Date.now() / 1000 < before.expires_at) await new Promise((r) => setTimeout(r, 250));

    const r = await runCli(['pending', '--json'], env());
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const after = stored();
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.refresh_token).not.toBe(before.refresh_token); // the provider rotates them
    expect(after.expires_at).toBeGreaterThan(before.expires_at);
    expect((await provider.state()).refreshes).toBeGreaterThan(refreshes);
    expect(statSync(file()).mode & 0o777).toBe(0o600);
  });

  it("commands due for a refresh at once refresh once (the later ones take the first one's tokens)", async () => {
    await signIn('bob');
    const before = stored();
    const { refreshes } = await provider.state();
    while (Date.now() / 1000 < before.expires_at) await new Promise((r) => setTimeout(r, 250));

    // With rotating refresh tokens, a second refresh with the spent token would be refused (and end the grant).
    const runs = await Promise.all([1, 2, 3].map(() => runCli(['pending', '--json'], env())));
    expect(runs.map((r) => ({ code: r.code, stderr: r.stderr }))).toEqual(
      [1, 2, 3].map(() => ({ code: 0, stderr: '' })),
    );
    expect((await provider.state()).refreshes).toBe(refreshes + 1);
    expect(existsSync(`${file()}.lock`)).toBe(false);
  });

  it('refreshes once when the server refuses the stored token, and says to log in again when refresh fails', async () => {
    await signIn('bob');
    // A token the server no longer takes (its signature broken), though not yet expired.
    const refused = (token: string) => `${token.slice(0, -4)}${token.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    const entry = stored();
    writeFileSync(
      file(),
      JSON.stringify({ version: 1, logins: [{ ...entry, access_token: refused(entry.access_token) }] }),
    );
    const ok = await runCli(['pending', '--json'], env());
    expect({ code: ok.code, stderr: ok.stderr }).toEqual({ code: 0, stderr: '' });
    expect(stored().access_token).not.toBe(refused(entry.access_token));

    // The refresh token revoked at the provider: the next refusal cannot be cured.
    const now = stored();
    const revoke = await fetch(`${provider.issuer}/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: now.refresh_token, client_id: 'tollgate-cli' }).toString(),
    });
    expect(revoke.status).toBe(200);
    writeFileSync(
      file(),
      JSON.stringify({ version: 1, logins: [{ ...now, access_token: refused(now.access_token) }] }),
    );
    const failed = await runCli(['pending'], env());
    expect(failed.code).toBe(2);
    expect(failed.stderr).toMatch(/could not be refreshed .*: run tollgate login again/);
  });

  it('logout revokes the tokens at the provider and forgets the login', async () => {
    await signIn('ann');
    const { revoked } = await provider.state();
    const { refresh_token } = stored();
    const r = await runCli(['logout'], env());
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/Logged out of http:\/\/127\.0\.0\.1:\d+; the tokens were revoked at the provider\./);
    expect(existsSync(file())).toBe(false);
    // The refresh token, and with it the grant (its JWT access tokens lapse at their expiry): no more refreshes.
    expect((await provider.state()).revoked).toHaveLength(revoked.length + 1);
    const refresh = await fetch(`${provider.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token, client_id: 'tollgate-cli' }).toString(),
    });
    expect({ status: refresh.status, error: ((await refresh.json()) as { error: string }).error }).toEqual({
      status: 400,
      error: 'invalid_grant',
    });

    const after = await runCli(['tools'], env());
    expect(after.code).toBe(2);
    expect(after.stderr).toMatch(/No token: run tollgate login --url/);
    expect((await runCli(['logout'], env())).stdout).toMatch(/not logged in/);
  });

  it('tells a person the server gives no role that they can do nothing yet', async () => {
    const out = await signIn('ivy');
    expect(out).toMatch(
      /as Ivy \(ivy; no roles\)\.\nYou hold no role at this server, so you can see and decide nothing yet/,
    );
    // Signed in all the same: the server knows the person, and refuses what needs a role.
    const r = await runCli(['grants'], env());
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^forbidden: /);
  });

  it('reports a sign-in the person refused at the provider, and stores nothing', async () => {
    await provider.set({ signInAs: 'ann' });
    const r = await login([], (uri) => openVerificationPage(uri, { abort: true }));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the sign-in was denied at the provider; nothing was stored \(.*access_denied/);
    expect(existsSync(file())).toBe(false);
  });

  it('Ctrl-C while waiting cancels the login', async () => {
    const r = await login([], async (_uri, child) => child.kill('SIGINT'));
    expect({ code: r.code, signal: r.signal }).toEqual({ code: 130, signal: null });
    expect(r.stderr).toMatch(/login cancelled; nothing was stored/);
    expect(existsSync(file())).toBe(false);
  });

  it.each([
    ['opaque (as Google’s)', { opaqueAccessTokens: true }],
    ['for another API (as Entra ID’s for Microsoft Graph)', { accessTokenAudience: 'api://graph' }],
  ])("sends the ID token where the provider's access tokens are %s", async (_what, kind) => {
    const idp = await startDeviceProvider(kind);
    const other = await startTestServer({ oidc: idp.oidcConfig() });
    try {
      await idp.set({ accounts: [{ id: 'cat', name: 'Cat', email: 'cat@example.test', roles: ['admin'] }] });
      await idp.set({ signInAs: 'cat' });
      const r = await login(['--url', other.url], (uri) => openVerificationPage(uri));
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      expect(r.stdout).toMatch(/as Cat \(cat; admin\)\./);
      expect(stored().id_token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      const halt = await runCli(['halt', '--reason', 'drill', '--json'], env({ TOLLGATE_URL: other.url }));
      expect({ code: halt.code, stderr: halt.stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(halt.stdout).by).toMatchObject({ id: 'cat', via: 'cli' });
    } finally {
      await other.stop();
      await idp.stop();
    }
  });

  it('logout still forgets the login when the provider cannot be reached, and says so', async () => {
    const gone = await startDeviceProvider();
    const other = await startTestServer({ oidc: gone.oidcConfig() });
    try {
      await gone.set({ accounts: [{ id: 'dee', name: 'Dee', email: 'dee@example.test', roles: ['approver'] }] });
      await gone.set({ signInAs: 'dee' });
      const r = await login(['--url', other.url], (uri) => openVerificationPage(uri));
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      await gone.stop();
      const out = await runCli(['logout', '--url', other.url], env());
      expect(out.code).toBe(0);
      expect(out.stdout).toMatch(/^Logged out of http:\/\/127\.0\.0\.1:\d+\.$/m);
      expect(out.stderr).toMatch(/^tollgate: warning: could not revoke the tokens at the provider: /);
      expect(existsSync(file())).toBe(false);
    } finally {
      await other.stop();
      await gone.stop();
    }
  });

  it('says the code expired when nobody confirmed it in time, and stores nothing', async () => {
    const quick = await startDeviceProvider({ deviceCodeTtl: 2 });
    const other = await startTestServer({ oidc: quick.oidcConfig() });
    try {
      const r = await login(['--url', other.url]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/the code expired before it was confirmed; run tollgate login again/);
      expect(existsSync(file())).toBe(false);
    } finally {
      await other.stop();
      await quick.stop();
    }
  });

  it('says plainly when the provider has no device flow', async () => {
    const plain = await startDeviceProvider({ deviceFlow: false });
    const other = await startTestServer({ oidc: plain.oidcConfig() });
    try {
      const r = await login(['--url', other.url]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/does not offer the device authorization grant \(RFC 8628\)/);
      expect(r.stderr).toMatch(/TOLLGATE_TOKEN/);
    } finally {
      await other.stop();
      await plain.stop();
    }
  });

  it('says how to use a token instead when the server has no single sign-on', async () => {
    const other = await startTestServer();
    try {
      const r = await login(['--url', other.url]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/has no single sign-on configured; use a token instead: set TOLLGATE_TOKEN/);
    } finally {
      await other.stop();
    }
  });
});
