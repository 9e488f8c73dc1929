/**
 * Single sign-on in real headless Chromium against a real OpenID provider (oidc-provider) on loopback: sign in with
 * the provider, see the inbox, approve a call (the live stream and the decision go with the session cookie and the
 * CSRF token), sign out (session row gone, cookie cleared, the provider told); a person whose groups map to no role
 * sees a plain "no access" page; a link to a card survives the trip to the provider.
 */
import type { Browser } from 'playwright-core';
import { describeBrowser, launchBrowser, openPage, waitLive } from '../support/browser';
import { client } from '../support/http';
import { startOidcProvider, TestProvider } from '../support/oidc-provider';
import { startTestServer, TestServer } from '../support/server';

let browser: Browser;
let idp: TestProvider;
let server: TestServer;
let http: ReturnType<typeof client>;

beforeAll(async () => {
  idp = await startOidcProvider({
    ann: { groups: ['payments-leads'], org: 'acme', name: 'Ann Lee', email: 'ann@acme.example' },
    ivan: { groups: ['interns'], org: 'acme', name: 'Ivan' },
  });
  [browser, server] = await Promise.all([launchBrowser(), startTestServer({ oidc: idp.oidcConfig() })]);
  await idp.registerTollgate(server.url);
  http = client(server.url);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await idp?.close();
});

async function pendingCall(conv: string, title: string): Promise<{ id: string }> {
  const agent = await server.token('bot', ['agent'], { tenant: 'acme' });
  expect((await http.post('/v1/conversations', agent, { id: conv, title: 'Payments' })).status).toBe(201);
  const res = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ toolName: 'send_email', arguments: { to: 'cfo@acme.example' }, display: { title } }],
  });
  expect(res.body.toolCalls[0].status).toBe('pending');
  return res.body.toolCalls[0];
}

async function sessionsOf(person: string): Promise<number> {
  return Number(
    (await server.dataSource.query('SELECT count(*) AS n FROM web_sessions WHERE person_id = $1', [person]))[0].n,
  );
}

/** The provider's login page: one field, the account. */
async function atProvider(page: import('playwright-core').Page, account: string): Promise<void> {
  await page.getByRole('heading', { name: 'Sign in to the test identity provider' }).waitFor();
  expect(new URL(page.url()).origin).toBe(idp.issuer);
  await page.getByLabel('Account').fill(account);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describeBrowser('single sign-on in the web inbox', () => {
  it('signs in with the provider, shows the inbox, approves a call, and signs out everywhere', async () => {
    const call = await pendingCall('sso-browser', 'Email the CFO');
    const { page, context, errors } = await openPage(browser);
    const missing: string[] = [];
    page.on('response', (r) => {
      if (r.status() === 404) missing.push(r.url());
    });
    await page.goto(`${server.url}/`);
    const sso = page.getByTestId('sso-sign-in');
    await sso.waitFor();
    expect(await page.getByTestId('dev-sign-in').count()).toBe(0); // OIDC configured: no minted tokens
    await sso.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await atProvider(page, 'ann');

    await page.getByRole('heading', { name: /Waiting for you/ }).waitFor();
    expect(new URL(page.url()).origin).toBe(server.url);
    expect(await page.locator('.topbar').innerText()).toMatch(/Ann Lee\s+approver · acme/);
    const cookies = await context.cookies(server.url);
    expect(cookies.find((c) => c.name === 'tollgate_session')).toMatchObject({
      httpOnly: true,
      sameSite: 'Lax',
      secure: false,
      path: '/',
    });
    expect(cookies.some((c) => c.name.startsWith('tollgate_login'))).toBe(false);
    // Nothing of the session is readable by the page.
    expect(await page.evaluate(() => document.cookie)).toBe('');
    expect(
      await page.evaluate(() => [sessionStorage.getItem('tollgate.token'), localStorage.getItem('tollgate.token')]),
    ).toEqual([null, null]);

    await waitLive(page); // the event stream, with the cookie alone
    const row = page.locator(`li[data-call-id="${call.id}"]`);
    await row.getByText('Email the CFO').waitFor();
    await row.locator('.row-main').click();
    const card = page.locator('dialog.card');
    await card.waitFor();
    await card.getByRole('button', { name: /^Approve/ }).click();
    await card.waitFor({ state: 'detached' });
    const decided = (
      await http.get(`/v1/tool-calls/${call.id}`, await server.token('bot', ['agent'], { tenant: 'acme' }))
    ).body;
    expect(decided.status).toBe('approved');
    expect(decided.decision.by).toMatchObject({ id: 'ann', name: 'Ann Lee', via: 'web' });

    await page.reload(); // the session outlives a reload: the cookie, not the tab, holds it
    await page.getByRole('heading', { name: /Waiting for you/ }).waitFor();

    expect(await sessionsOf('ann')).toBe(1);
    const logoutsBefore = idp.logouts;
    await page.getByRole('button', { name: 'Sign out' }).click();
    // Through the provider's end_session_endpoint and back to the sign-in page.
    await page.getByTestId('sso-sign-in').waitFor();
    expect(new URL(page.url()).origin).toBe(server.url);
    expect(idp.logouts).toBe(logoutsBefore + 1);
    expect((await context.cookies(server.url)).some((c) => c.name === 'tollgate_session')).toBe(false);
    expect(await sessionsOf('ann')).toBe(0);
    // The console's "failed to load" lines are /auth/session's 401 before sign-in and the favicon Chromium asks for.
    expect({ errors: errors.filter((e) => !/^Failed to load resource/.test(e)), missing }).toEqual({
      errors: [],
      missing: [],
    });
    await context.close();
  });

  it('shows a person whose groups map to no role a plain "no access" page, and makes no session', async () => {
    const { page, context } = await openPage(browser);
    await page.goto(`${server.url}/`);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    const answer = page.waitForResponse((r) => r.url().startsWith(`${server.url}/auth/callback`));
    await atProvider(page, 'ivan');
    expect((await answer).status()).toBe(403);
    await page.getByRole('heading', { name: 'No access' }).waitFor();
    expect(await page.getByTestId('problem-code').innerText()).toBe('no_access');
    expect((await context.cookies(server.url)).some((c) => c.name === 'tollgate_session')).toBe(false);
    expect(await sessionsOf('ivan')).toBe(0);
    await context.close();
  });

  it('brings a person who followed a link to a card back to that card after signing in', async () => {
    const call = await pendingCall('sso-link', 'Pay the invoice');
    const { page, context } = await openPage(browser);
    await page.goto(`${server.url}/#/calls/${call.id}`);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await atProvider(page, 'ann');
    await page.locator('dialog.card').getByRole('heading', { name: 'Pay the invoice' }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#/calls/${call.id}`);
    await context.close();
  });
});
