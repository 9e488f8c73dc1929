/**
 * Passkeys in the web inbox, in real headless Chromium with its virtual authenticators (CDP WebAuthn), against the
 * real service: a person registers a passkey in the Passkeys panel, approves a call whose rule asks for one (the
 * decision then carries the passkey), needs the first passkey to add a second, and is refused when the device
 * does not verify them; a person without a passkey is sent to register one; a rejection never needs one.
 * WebAuthn refuses IP-address origins, so the page is opened as http://localhost:PORT (the server's relying party
 * without TOLLGATE_PUBLIC_URL).
 */
import type { Browser, CDPSession, Page } from 'playwright-core';
import { client } from '../support/http';
import { describeBrowser, launchBrowser, openPage, waitLive, WatchedPage } from '../support/browser';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;
let browser: Browser;
let origin: string; // http://localhost:PORT
let agent: string;
let annToken: string;
let bobToken: string;
let ann: WatchedPage; // has passkeys (a platform authenticator, later a security key too)
let page: Page;
let cdp: CDPSession;
let platform: string; // the virtual authenticator's id

const AUTHENTICATOR = {
  protocol: 'ctap2',
  transport: 'internal',
  hasResidentKey: true,
  hasUserVerification: true,
  isUserVerified: true,
  automaticPresenceSimulation: true,
} as const;

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  http = client(server.url);
  origin = server.url.replace('//127.0.0.1:', '//localhost:');
  agent = await server.token('pay-bot', ['agent']);
  annToken = await server.token('ann', ['approver'], { name: 'Ann' });
  bobToken = await server.token('bob', ['approver'], { name: 'Bob' });
  const admin = await server.token('root', ['admin'], { name: 'Root' });
  expect(
    (
      await http.put('/v1/policy', admin, {
        rules: [{ match: 'wire_money', level: 'confirm', stepUp: 'passkey' }],
      })
    ).status,
  ).toBe(200);
  ann = await openPage(browser, { token: annToken });
  page = ann.page;
  cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  platform = (await cdp.send('WebAuthn.addVirtualAuthenticator', { options: AUTHENTICATOR })).authenticatorId;
  await page.goto(`${origin}/`);
  await waitLive(page);
}, 90_000); // a server and a browser starting on a busy 2-core machine

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

let n = 0;
/** A fresh conversation with one pending wire_money call (its rule asks for a passkey). */
async function heldWire(args: Record<string, unknown> = { to: 'DE89 3704 0044 0532 0130 00', amount: 1200 }) {
  const id = `pay-${++n}`;
  expect((await http.post('/v1/conversations', agent, { id, title: `Payment ${n}` })).status).toBe(201);
  const res = await http.post(`/v1/conversations/${id}/tool-calls`, agent, {
    toolCalls: [{ toolName: 'wire_money', arguments: args, display: { title: `Wire payment ${n}` } }],
  });
  expect(res.status).toBe(201);
  const call = res.body.toolCalls[0];
  expect(call).toMatchObject({ status: 'pending', approval: { stepUp: 'passkey' } });
  return call as { id: string };
}

const statusOf = async (id: string, token = annToken) => (await http.get(`/v1/tool-calls/${id}`, token)).body;
/** Through which channel the audit trail says Ann registered or removed her passkeys. */
async function passkeyChannels(type: 'PasskeyRegistered' | 'PasskeyRemoved'): Promise<string[]> {
  const root = await server.token('root', ['admin'], { name: 'Root' });
  const res = await http.get(`/v1/audit/events?type=${type}&limit=1000`, root);
  expect(res.status).toBe(200);
  return res.body.events.filter((e: any) => e.actor.id === 'ann').map((e: any) => e.actor.via);
}
const credentials = async (authenticatorId: string) =>
  (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;
/** The virtual authenticator's credential id (standard base64) as the API names it (base64url). */
const base64url = (b64: string) => b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

/** From the list (each test starts there, whatever the one before left open). */
async function openCard(p: Page, id: string): Promise<void> {
  if (new URL(p.url()).hash !== '#/') await p.goto(`${origin}/#/`);
  await p.locator('dialog.card').waitFor({ state: 'detached' });
  // The list says what approving it will ask for before the card is opened.
  await p.locator(`li[data-call-id="${id}"] .badge`, { hasText: 'passkey' }).waitFor();
  await p.locator(`li[data-call-id="${id}"] .row-main`).click();
  await p.locator('dialog.card').waitFor();
}

describeBrowser('passkeys in the web inbox', () => {
  it('registers a passkey from the Passkeys panel', async () => {
    await page.getByTestId('passkeys-link').click();
    await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
    await page.getByTestId('passkeys-empty').waitFor();
    expect(await page.getByTestId('passkeys-confirm-first').count()).toBe(0);
    await page.getByLabel(/^Name/).fill('Work laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByTestId('passkeys-note').getByText('Added “Work laptop”').waitFor();
    const row = page.locator('tr', { hasText: 'Work laptop' });
    await row.waitFor();
    expect(await row.innerText()).toMatch(/never\s+this device only/); // last used; not synced (a virtual device)

    const [made] = await credentials(platform);
    const listed = (await http.get('/v1/me/passkeys', annToken)).body.passkeys;
    expect(listed).toEqual([expect.objectContaining({ id: base64url(made.credentialId), name: 'Work laptop' })]);
    expect(page.url()).toBe(`${origin}/#/passkeys`);
    expect(await passkeyChannels('PasskeyRegistered')).toEqual(['web']);
  });

  it('approves a call that asks for a passkey with it, and the decision carries the passkey', async () => {
    const call = await heldWire();
    // `a` on the list does not approve it there: it opens the card, where the passkey signs.
    await page.goto(`${origin}/#/`);
    await page.locator(`li[data-call-id="${call.id}"]`).waitFor();
    await page.locator('body').press('j'); // selects the row (the only one)
    await page.keyboard.press('a');
    const card = page.locator('dialog.card');
    await card.getByTestId('needs-passkey').getByText('Needs your passkey').waitFor();
    expect((await statusOf(call.id)).status).toBe('pending');
    await card.getByRole('button', { name: /^Approve/ }).click();
    await card.waitFor({ state: 'detached' });

    const [cred] = await credentials(platform);
    const decided = await statusOf(call.id);
    expect(decided).toMatchObject({
      status: 'approved',
      decision: {
        outcome: 'approved',
        by: { id: 'ann', via: 'web' },
        stepUp: { method: 'passkey', credentialId: base64url(cred.credentialId), userVerified: true },
      },
    });
    // Opened again (from a link), the decided card says how it was approved, and so does the timeline.
    await page.goto(`${origin}/#/calls/${call.id}`);
    await page.locator('dialog.card [role="status"]', { hasText: /approved .*with a passkey/ }).waitFor();
    await page.keyboard.press('Escape');
    await page.goto(`${origin}/#/conversations/${decided.conversationId}`);
    await page
      .getByTestId('step-decision')
      .getByText(/approved with a passkey/)
      .waitFor();
    await page.goto(`${origin}/#/`);
    // The passkey shows it was used.
    expect((await http.get('/v1/me/passkeys', annToken)).body.passkeys[0].lastUsedAt).toEqual(expect.any(String));
  });

  it('signs edited arguments: the approval runs them, with the passkey', async () => {
    const call = await heldWire({ to: 'DE89 3704 0044 0532 0130 00', amount: 9000 });
    await openCard(page, call.id);
    const card = page.locator('dialog.card');
    await card.getByRole('button', { name: /^Edit arguments/ }).click();
    await card.locator('#edit-args').fill('{"to": "DE89 3704 0044 0532 0130 00", "amount": 900}');
    await card.getByRole('button', { name: /^Approve with these arguments/ }).click();
    await card.waitFor({ state: 'detached' });
    expect(await statusOf(call.id)).toMatchObject({
      status: 'approved',
      decision: { editedArguments: { amount: 900 }, stepUp: { method: 'passkey' } },
    });
  });

  it('offers no "Always allow" on a card that needs a passkey: no grant ever covers such a call', async () => {
    const call = await heldWire();
    await openCard(page, call.id);
    const card = page.locator('dialog.card');
    await card.getByTestId('needs-passkey').waitFor();
    await card.getByRole('button', { name: /^Approve/ }).waitFor();
    expect(await card.getByRole('button', { name: /^Reject/ }).count()).toBe(1);
    expect(await card.getByRole('button', { name: /^Always allow/ }).count()).toBe(0);
    await page.keyboard.press('Escape');
    await card.waitFor({ state: 'detached' });
  });

  it('refuses an assertion made for other arguments than those sent, and the call stays pending', async () => {
    const call = await heldWire({ to: 'FR76 3000 6000 0112 3456 7890 189', amount: 50 });
    // The page signs the call's own arguments; on the way, the decision is made to approve others.
    await page.route('**/decision', async (route) => {
      const body = route.request().postDataJSON();
      await route.continue({ postData: JSON.stringify({ ...body, arguments: { to: 'attacker', amount: 50 } }) });
    });
    try {
      await openCard(page, call.id);
      const card = page.locator('dialog.card');
      await card.getByRole('button', { name: /^Approve/ }).click();
      // The server's refusal, in its words (the problem's detail), on the card.
      const error = card.locator('.decide .error');
      await error.waitFor();
      expect(await error.innerText()).toMatch(/other arguments/);
      expect((await statusOf(call.id)).status).toBe('pending');
    } finally {
      await page.unroute('**/decision');
      await page.keyboard.press('Escape');
    }
  });

  it('a second passkey asks for the first', async () => {
    // A security key beside the platform authenticator: the new passkey goes there (the browser will not make a
    // second one for the same person on the authenticator that holds the first).
    const key = (
      await cdp.send('WebAuthn.addVirtualAuthenticator', { options: { ...AUTHENTICATOR, transport: 'usb' } })
    ).authenticatorId;
    await page.goto(`${origin}/#/passkeys`);
    await page.locator('tr', { hasText: 'Work laptop' }).waitFor();
    await page.getByTestId('passkeys-confirm-first').getByText('Confirm with a passkey you already have').waitFor();
    const uses = (await credentials(platform))[0].signCount;
    await page.getByLabel(/^Name/).fill('Security key');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByTestId('passkeys-note').getByText('Added “Security key”').waitFor();
    // The first passkey signed (its counter moved), and the new one is on the key.
    expect((await credentials(platform))[0].signCount).toBeGreaterThan(uses);
    const [second] = await credentials(key);
    expect((await http.get('/v1/me/passkeys', annToken)).body.passkeys.map((p: any) => [p.name, p.id]).sort()).toEqual(
      [
        ['Security key', base64url(second.credentialId)],
        ['Work laptop', base64url((await credentials(platform))[0].credentialId)],
      ].sort(),
    );

    // And removing one needs a passkey too.
    await page.getByRole('button', { name: 'Remove Security key' }).click();
    await page.getByTestId('passkeys-note').getByText('Removed “Security key”').waitFor();
    expect((await http.get('/v1/me/passkeys', annToken)).body.passkeys.map((p: any) => p.name)).toEqual([
      'Work laptop',
    ]);
    expect(await passkeyChannels('PasskeyRegistered')).toEqual(['web', 'web']);
    expect(await passkeyChannels('PasskeyRemoved')).toEqual(['web']);
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: key });
  });

  it('a device that does not verify the person approves nothing and removes nothing', async () => {
    const call = await heldWire();
    const card = page.locator('dialog.card');
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId: platform, isUserVerified: false });
    try {
      // The card says so, and the call stays pending, its Approve still there to try again.
      await openCard(page, call.id);
      await card.getByRole('button', { name: /^Approve/ }).click();
      await card.locator('.decide .error', { hasText: /could not confirm it is you/ }).waitFor();
      expect((await statusOf(call.id)).status).toBe('pending');
      await card.getByRole('button', { name: /^Approve/ }).waitFor();
      // The panel says so, and the passkey stays.
      await page.goto(`${origin}/#/passkeys`);
      await page.getByRole('button', { name: 'Remove Work laptop' }).click();
      await page
        .getByTestId('passkeys-note')
        .getByText(/^Cancelled/)
        .waitFor();
      await page.locator('tr', { hasText: 'Work laptop' }).waitFor();
      const names = (await http.get('/v1/me/passkeys', annToken)).body.passkeys.map((p: any) => p.name);
      expect(names).toEqual(['Work laptop']);
    } finally {
      await cdp.send('WebAuthn.setUserVerified', { authenticatorId: platform, isUserVerified: true });
    }
    // Verified again, the same call is approved.
    await openCard(page, call.id);
    await card.getByRole('button', { name: /^Approve/ }).click();
    await card.waitFor({ state: 'detached' });
    expect((await statusOf(call.id)).status).toBe('approved');
  });

  it('a person with no passkey is sent to register one, and may still reject without one', async () => {
    const bob = await openPage(browser, { token: bobToken });
    try {
      const call = await heldWire();
      await bob.page.goto(`${origin}/`);
      await waitLive(bob.page);
      await openCard(bob.page, call.id);
      const card = bob.page.locator('dialog.card');
      await card.getByRole('button', { name: /^Approve/ }).click();
      const noPasskey = card.getByTestId('no-passkey');
      await noPasskey.getByText(/You have no passkey yet/).waitFor();
      expect(await noPasskey.getByRole('link', { name: /Add a passkey/ }).getAttribute('href')).toBe('#/passkeys');
      expect((await statusOf(call.id, bobToken)).status).toBe('pending');

      // Rejecting takes no passkey (Bob has none, and no authenticator at all).
      await card.getByRole('button', { name: /^Reject/ }).click();
      await card.locator('#reject-reason').fill('Not this week');
      await card.getByRole('button', { name: /^Reject/ }).click();
      await card.waitFor({ state: 'detached' });
      expect(await statusOf(call.id, bobToken)).toMatchObject({
        status: 'rejected',
        decision: { outcome: 'rejected', by: { id: 'bob' }, reason: 'Not this week' },
      });

      // The link leads to the panel.
      const other = await heldWire();
      await openCard(bob.page, other.id);
      await card.getByRole('button', { name: /^Approve/ }).click();
      await card
        .getByTestId('no-passkey')
        .getByRole('link', { name: /Add a passkey/ })
        .click();
      await bob.page.getByRole('heading', { name: 'Passkeys' }).waitFor();
      await bob.page.getByTestId('passkeys-empty').waitFor();
    } finally {
      await bob.context.close();
    }
  });

  it('on a page reached by an IP address, says passkeys need a name and links to localhost', async () => {
    const w = await openPage(browser, { token: annToken, width: 390 });
    try {
      await w.page.goto(`${server.url}/#/passkeys`);
      const notice = w.page.getByTestId('passkeys-ip');
      await notice.getByText(/need a name such as localhost/).waitFor();
      expect(await notice.getByRole('link').getAttribute('href')).toBe(`${origin}/#/passkeys`);
      // The list shows; nothing offers a prompt the browser would refuse here.
      await w.page.locator('tr', { hasText: 'Work laptop' }).waitFor();
      expect(await w.page.getByRole('button', { name: /Add a passkey|Remove/ }).count()).toBe(0);
      // At phone width nothing scrolls sideways.
      expect(await w.page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
    } finally {
      await w.context.close();
    }
  });

  it('keeps the page within its Content Security Policy', () => {
    expect(ann.errors.filter((e) => /Content Security Policy|Refused to/i.test(e))).toEqual([]);
  });
});
