/**
 * Single sign-on as a new user meets it, in real headless Chromium against a real OpenID provider (oidc-provider) on
 * loopback: from the "no access" page, "Sign in with another account" signs the provider's session out and lets
 * another account in (before, signing in again silently landed on the same page); and an inbox opened at
 * http://localhost:PORT, while the provider sends the browser back to 127.0.0.1, signs in all the same; an inbox left
 * open learns at once that its session was signed out in another tab (its live stream ends with the session).
 */
import type { Browser, Page } from 'playwright-core';
import { describeBrowser, launchBrowser, openPage, waitLive } from '../support/browser';
import { startOidcProvider, TestProvider } from '../support/oidc-provider';
import { startTestServer, TestServer } from '../support/server';

let browser: Browser;
let idp: TestProvider;
let server: TestServer;

beforeAll(async () => {
  idp = await startOidcProvider({
    ann: { groups: ['payments-leads'], org: 'acme', name: 'Ann Lee' },
    ivan: { groups: ['interns'], org: 'acme', name: 'Ivan' },
  });
  [browser, server] = await Promise.all([launchBrowser(), startTestServer({ oidc: idp.oidcConfig() })]);
  await idp.registerTollgate(server.url);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await idp?.close();
});

/** The provider's login page: one field, the account. */
async function atProvider(page: Page, account: string): Promise<void> {
  await page.getByRole('heading', { name: 'Sign in to the test identity provider' }).waitFor();
  expect(new URL(page.url()).origin).toBe(idp.issuer);
  await page.getByLabel('Account').fill(account);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describeBrowser('single sign-on for a new user', () => {
  it('leads a person with no access to sign in with another account, which the provider then asks for', async () => {
    const { page, context } = await openPage(browser);
    await page.goto(`${server.url}/`);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await atProvider(page, 'ivan');
    await page.getByRole('heading', { name: 'No access' }).waitFor();
    expect(await page.getByRole('link', { name: 'Back to the sign-in page' }).getAttribute('href')).toBe('/');

    const logouts = idp.logouts;
    await page.getByRole('link', { name: 'Sign in with another account' }).click();
    // The provider ends its session and sends the browser back to the sign-in page.
    await page.getByTestId('sso-sign-in').waitFor();
    expect(new URL(page.url()).origin).toBe(server.url);
    expect(idp.logouts).toBe(logouts + 1);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await atProvider(page, 'ann'); // asked again: no silent return to "No access"
    await page.getByRole('heading', { name: /Waiting for you/ }).waitFor();
    expect(await page.locator('.topbar').innerText()).toMatch(/Ann Lee\s+approver · acme/);
    await context.close();
  });

  it('signs in from an inbox opened at localhost while the provider sends the browser back to 127.0.0.1', async () => {
    const port = new URL(server.url).port;
    const { page, context } = await openPage(browser);
    await page.goto(`http://localhost:${port}/`);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await atProvider(page, 'ann');
    await page.getByRole('heading', { name: /Waiting for you/ }).waitFor();
    expect(new URL(page.url()).origin).toBe(server.url);
    await context.close();
  });

  it('tells an inbox left open that its session was signed out in another tab, and asks it to sign in again', async () => {
    const { page, context } = await openPage(browser);
    await page.goto(`${server.url}/`);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await atProvider(page, 'ann');
    await page.getByRole('heading', { name: /Waiting for you/ }).waitFor();
    await waitLive(page);

    const other = await context.newPage();
    await other.goto(`${server.url}/`);
    await other.getByRole('heading', { name: /Waiting for you/ }).waitFor();
    await other.getByRole('button', { name: 'Sign out' }).click();
    await other.getByTestId('sso-sign-in').waitFor();

    // The first tab made no request of its own: its live stream ended with the session, and reconnecting was refused.
    await page.getByTestId('sso-sign-in').waitFor();
    expect(await page.getByRole('status').innerText()).toMatch(/Your session has ended/);
    await context.close();
  });
});
