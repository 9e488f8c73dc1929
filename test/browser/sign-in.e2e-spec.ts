/**
 * Signing in to the web inbox in real headless Chromium: the dev sign-in exists only in embedded dev mode and is
 * absent whenever real authentication is configured; bad tokens are refused plainly; sign-out forgets the token.
 */
import type { Browser } from 'playwright-core';
import { describeBrowser, launchBrowser, openPage } from '../support/browser';
import { client } from '../support/http';
import { startTestServer, TEST_SECRET, TestServer } from '../support/server';

let browser: Browser;
let dev: TestServer;
let real: TestServer;

beforeAll(async () => {
  [browser, dev, real] = await Promise.all([
    launchBrowser(),
    // What the server resolves to with no TOLLGATE_JWT_SECRET, no TOLLGATE_JWKS_URL and no DATABASE_URL.
    startTestServer({ auth: { secret: TEST_SECRET, devSecret: true } }),
    startTestServer(), // TOLLGATE_JWT_SECRET configured
  ]);
}, 90_000); // two servers and a browser starting on a busy 2-core machine

afterAll(async () => {
  await browser?.close();
  await Promise.all([dev?.stop(), real?.stop()]);
});

describeBrowser('sign-in in embedded dev mode', () => {
  it('mints a token for a chosen name and roles, keeps it for the tab, and forgets it on sign-out', async () => {
    const agent = await dev.token('bot', ['agent']);
    await client(dev.url).post('/v1/conversations', agent, { id: 'dev-conv', title: 'Tidy up' });
    await client(dev.url).post('/v1/conversations/dev-conv/tool-calls', agent, {
      toolCalls: [{ toolName: 'send_email', arguments: {}, display: { title: 'Send a note' } }],
    });

    const { page, context } = await openPage(browser);
    await page.goto(`${dev.url}/`);
    const form = page.getByTestId('dev-sign-in');
    await form.waitFor();
    await form.getByLabel('User id').fill('dana');
    await form.getByLabel(/Display name/).fill('Dana');
    await form.getByLabel(/admin/).check();
    await form.getByRole('button', { name: 'Sign in as dana' }).click();
    await page.getByRole('heading', { name: /Waiting for you/ }).waitFor();
    expect(await page.locator('.topbar').innerText()).toMatch(/Dana\s+approver, admin · default/);
    await page.locator('.row-title', { hasText: 'Send a note' }).waitFor();

    await page.reload(); // the tab keeps its session
    await page.getByRole('heading', { name: /Waiting for you/ }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Bearer token').waitFor();
    expect(
      await page.evaluate(() => [sessionStorage.getItem('tollgate.token'), localStorage.getItem('tollgate.token')]),
    ).toEqual([null, null]);
    await context.close();
  });
});

describeBrowser('sign-in with authentication configured', () => {
  it('offers no dev sign-in, and the page cannot mint a token either', async () => {
    const { page, context } = await openPage(browser);
    await page.goto(`${real.url}/`);
    await page.getByLabel('Bearer token').waitFor();
    await page.getByRole('heading', { name: 'With a token' }).waitFor();
    expect(await page.getByTestId('dev-sign-in').count()).toBe(0);
    expect(await page.getByText('Dev sign-in').count()).toBe(0);
    const status = await page.evaluate(
      async () =>
        (
          await fetch('/ui/dev-token', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ sub: 'x', roles: ['admin'] }),
          })
        ).status,
    );
    expect(status).toBe(404);
    await context.close();
  });

  it('refuses a token it cannot use, saying why', async () => {
    const { page, context } = await openPage(browser);
    await page.goto(`${real.url}/`);
    const token = page.getByLabel('Bearer token');
    const signIn = page.getByRole('button', { name: 'Sign in' });

    await token.fill('not a token');
    await signIn.click();
    await page
      .getByRole('alert')
      .getByText(/That is not a token/)
      .waitFor();

    await token.fill(await real.token('bot', ['agent']));
    await signIn.click();
    await page
      .getByRole('alert')
      .getByText(/agent token/)
      .waitFor();

    await token.fill(await dev.token('ann', ['approver'], { ttl: '-1h' })); // expired
    await signIn.click();
    await page
      .getByRole('alert')
      .getByText(/The server refused that token/)
      .waitFor();

    const forged = (await real.token('ann', ['approver'])).replace(/\.[^.]+$/, '.c2lnbmF0dXJl');
    await token.fill(forged);
    await signIn.click();
    await page
      .getByRole('alert')
      .getByText(/The server refused that token/)
      .waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('tollgate.token'))).toBeNull();
    await context.close();
  });
});
