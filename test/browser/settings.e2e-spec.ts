/**
 * Settings in real Chromium against the real service: how Tollgate reaches a person (per channel, the daily
 * digest's time, the time zone, quiet hours) set through the form and read back after a reload from the server; the
 * server's field errors shown at their fields; and out of office: a delegation set, refused, replaced by a planned
 * one and ended, each checked through the API. The browser runs in Berlin time while the server's default zone is
 * UTC, so the page's local times and its time zone suggestion are put to the test.
 */
import { DateTime } from 'luxon';
import type { Browser, Page } from 'playwright-core';
import { describeBrowser, launchBrowser, WatchedPage } from '../support/browser';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

const ZONE = 'Europe/Berlin';

let server: TestServer;
let http: ReturnType<typeof client>;
let browser: Browser;
let ann: string;
let bob: string;

beforeAll(async () => {
  // Push on, as where people use these settings (without it Settings asks the VAPID key and is told 503).
  [server, browser] = await Promise.all([
    startTestServer({ push: { subject: 'mailto:ops@example.com' } }),
    launchBrowser(),
  ]);
  http = client(server.url);
  ann = await server.token('ann', ['approver'], { name: 'Ann', email: 'ann@example.com' });
  bob = await server.token('bob', ['approver'], { name: 'Bob', email: 'bob@example.com' });
  // A delegate must be on record: their own sign-in puts them there.
  for (const t of [ann, bob]) expect((await http.get('/v1/me', t)).status).toBe(200);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Like openPage, with the browser's clock in Berlin. */
async function openSettings(token: string, width = 1200): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, timezoneId: ZONE });
  context.setDefaultTimeout(10_000);
  await context.addInitScript((t) => sessionStorage.setItem('tollgate.token', t), token);
  const page = await context.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${server.url}/#/settings`);
  await page.getByTestId('reach').getByLabel('Email', { exact: true }).waitFor();
  return { context, page, requests, errors };
}

/**
 * Console errors other than Chromium's line for each refused request: the 400s the tests provoke, and the 404
 * no_delegation that is how the server says there is none. No script error, no CSP violation.
 */
const unexpected = (errors: string[]) =>
  errors.filter((e) => !/^Failed to load resource: the server responded with a status of (400|404) /.test(e));

const reach = (page: Page) => page.getByTestId('reach');
const away = (page: Page) => page.getByTestId('delegation');

/** A `datetime-local` value `days` from now at `hh:mm` Berlin time, and the instant it stands for (by luxon). */
function berlin(days: number, hhmm: string): { local: string; iso: string } {
  const [hour, minute] = hhmm.split(':').map(Number);
  const at = DateTime.now().setZone(ZONE).plus({ days }).set({ hour, minute, second: 0, millisecond: 0 });
  return { local: at.toFormat("yyyy-MM-dd'T'HH:mm"), iso: at.toUTC().toISO()! };
}

describeBrowser('Settings: how Tollgate reaches me', () => {
  it('sets each channel, the digest time, the time zone offered and quiet hours; a reload shows them kept', async () => {
    const { page, context, requests, errors } = await openSettings(ann);
    const form = reach(page);
    // The defaults, and the browser's zone only offered: the stored one stays UTC until the person says otherwise.
    expect(await form.getByLabel('Email', { exact: true }).inputValue()).toBe('immediate');
    expect(await form.getByLabel('Slack direct messages').inputValue()).toBe('off');
    expect(await form.getByLabel('Time zone').inputValue()).toBe('UTC');
    expect(await form.getByTestId('zone-suggestion').innerText()).toBe(`Your browser is in ${ZONE}. Use ${ZONE}`);
    expect(await form.getByText('if this server sends email').count()).toBe(1);

    // The keyboard alone changes a channel: Tab reaches the select, the arrow keys choose.
    await form.getByLabel('Email', { exact: true }).focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    expect(await form.getByLabel('Email', { exact: true }).inputValue()).toBe('daily');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('reach-push');

    await form.getByLabel('Push', { exact: true }).selectOption({ label: 'Hourly digest' });
    await form.getByLabel('Slack direct messages').selectOption({ label: 'A message per request' });
    await form.getByLabel('Daily digest at').fill('08:30');
    await form.getByRole('button', { name: `Use ${ZONE}` }).click();
    expect(await form.getByLabel('Time zone').inputValue()).toBe(ZONE);
    expect(await form.getByTestId('zone-suggestion').count()).toBe(0);
    await form.getByLabel('Send nothing during quiet hours').check();
    await form.getByLabel('From').fill('22:30');
    await form.getByLabel('To', { exact: true }).fill('06:45');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByTestId('reach-note').filter({ hasText: 'Saved.' }).waitFor();

    const wanted = {
      email: 'daily',
      push: 'hourly',
      slack: 'immediate',
      dailyAt: '08:30',
      timeZone: ZONE,
      quietHours: { from: '22:30', to: '06:45' },
    };
    expect((await http.get('/v1/me/notifications', ann)).body).toEqual(wanted);

    await page.reload();
    await form.getByLabel('Email', { exact: true }).waitFor(); // rendered once the settings are read
    expect(await form.getByLabel('Email', { exact: true }).inputValue()).toBe('daily');
    expect(await form.getByLabel('Push', { exact: true }).inputValue()).toBe('hourly');
    expect(await form.getByLabel('Slack direct messages').inputValue()).toBe('immediate');
    expect(await form.getByLabel('Daily digest at').inputValue()).toBe('08:30');
    expect(await form.getByLabel('Send nothing during quiet hours').isChecked()).toBe(true);
    expect(await form.getByLabel('From').inputValue()).toBe('22:30');
    expect(await form.getByLabel('To', { exact: true }).inputValue()).toBe('06:45');
    expect(await form.getByTestId('zone-suggestion').count()).toBe(0);

    // Quiet hours off again: sent as null.
    await form.getByLabel('Send nothing during quiet hours').uncheck();
    expect(await form.getByLabel('From').count()).toBe(0);
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByTestId('reach-note').filter({ hasText: 'Saved.' }).waitFor();
    expect((await http.get('/v1/me/notifications', ann)).body).toEqual({ ...wanted, quietHours: null });

    expect(unexpected(errors)).toEqual([]);
    expect(requests.every((u) => u.startsWith(server.url))).toBe(true);
    await context.close();
  });

  it("shows the server's refusals at the fields they name, and keeps what was stored", async () => {
    const before = (await http.get('/v1/me/notifications', ann)).body;
    const { page, context, errors } = await openSettings(ann);
    const form = reach(page);
    await form.getByLabel('Time zone').fill('Mars/Olympus_Mons');
    await form.getByLabel('Send nothing during quiet hours').check();
    await form.getByLabel('From').fill('22:00');
    await form.getByLabel('To', { exact: true }).fill('22:00');
    await page.keyboard.press('Enter'); // in a field: submits the form

    const note = form.getByTestId('reach-note');
    await note.filter({ hasText: 'Not saved' }).waitFor();
    expect(await note.getAttribute('role')).toBe('alert');
    expect(await note.innerText()).toBe('Not saved: see the marked fields.');
    expect(await form.getByTestId('reach-quiet-error').innerText()).toBe(
      'Quiet hours must be null or {from, to}, two different times HH:MM.',
    );
    expect(await form.getByTestId('reach-zone-error').innerText()).toBe(
      'The time zone must be an IANA time zone, such as Europe/Berlin or UTC.',
    );
    // Marked for assistive technology, described by their error, and the first of them has the focus.
    const zone = form.getByLabel('Time zone');
    expect(await zone.getAttribute('aria-invalid')).toBe('true');
    expect(await zone.getAttribute('aria-describedby')).toContain('reach-zone-error');
    expect(await form.getByLabel('To', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await page.waitForFunction(() => document.activeElement?.id === 'reach-zone');
    expect(await form.getByLabel('Email', { exact: true }).getAttribute('aria-invalid')).toBeNull();
    expect((await http.get('/v1/me/notifications', ann)).body).toEqual(before);

    // Mending a field takes its error away; saving again is accepted.
    await form.getByLabel('To', { exact: true }).fill('07:00');
    expect(await form.getByTestId('reach-quiet-error').count()).toBe(0);
    await zone.fill('Europe/Lisbon');
    await form.getByRole('button', { name: 'Save' }).click();
    await note.filter({ hasText: 'Saved.' }).waitFor();
    expect((await http.get('/v1/me/notifications', ann)).body).toMatchObject({
      timeZone: 'Europe/Lisbon',
      quietHours: { from: '22:00', to: '07:00' },
    });
    expect(unexpected(errors)).toEqual([]);
    await context.close();
  });
});

describeBrowser('Settings: out of office', () => {
  it('refuses yourself and someone not on record, at the field; sets a delegation, replaces it, ends it', async () => {
    const { page, context, errors } = await openSettings(ann);
    const section = away(page);
    await section.getByTestId('delegation-none').waitFor();
    const to = section.getByLabel('To', { exact: true });
    const until = section.getByLabel('Until');
    const save = section.getByRole('button', { name: 'Delegate' });
    expect(await section.getByText(`Times are in ${ZONE}.`).count()).toBe(1);

    // Asked before anything is sent.
    await save.click();
    expect(await section.getByTestId('delegation-to-error').innerText()).toMatch(/^Whom\?/);
    expect(await section.getByTestId('delegation-until-error').innerText()).toMatch(/^Until when\?/);
    await page.waitForFunction(() => document.activeElement?.id === 'delegation-to-input');

    const week = berlin(7, '18:00');
    await to.fill('ann');
    await until.fill(week.local);
    await save.click();
    await section.getByTestId('delegation-to-error').filter({ hasText: 'cannot delegate to yourself' }).waitFor();
    expect(await to.getAttribute('aria-invalid')).toBe('true');
    expect(await section.getByTestId('delegation-note').innerText()).toBe('Not delegated: see the marked fields.');

    await to.fill('nobody@example.com');
    await save.click();
    await section.getByTestId('delegation-to-error').filter({ hasText: 'No person "nobody@example.com"' }).waitFor();

    // The period's rules are the server's, shown at the field.
    await to.fill('bob@example.com');
    await until.fill(berlin(120, '12:00').local);
    await save.click();
    await section
      .getByTestId('delegation-until-error')
      .filter({ hasText: 'Until must be at most 90 days after now.' })
      .waitFor();
    expect((await http.get('/v1/me/delegation', ann)).status).toBe(404);

    await until.fill(week.local);
    await section.getByLabel('Reason (optional)').fill('Holiday');
    await save.click();
    const current = section.getByTestId('delegation-current');
    await current.waitFor();
    expect(await current.getAttribute('data-state')).toBe('active');
    expect(await section.getByTestId('delegation-state').innerText()).toBe('Active');
    expect(await section.getByTestId('delegation-to').innerText()).toBe('Bob (bob)');
    expect(await section.getByTestId('delegation-reason').innerText()).toBe('Holiday');
    expect(await section.getByTestId('delegation-until').getAttribute('datetime')).toBe(week.iso);
    const stored = (await http.get('/v1/me/delegation', ann)).body;
    expect(stored).toMatchObject({ to: { id: 'bob', name: 'Bob' }, until: week.iso, reason: 'Holiday', active: true });

    // Kept across a reload. Its form is folded away; opened (by the keyboard), it holds the delegation, to change.
    await page.reload();
    await current.waitFor();
    expect(await section.getByLabel('To', { exact: true }).isVisible()).toBe(false);
    await section.getByText('Change or replace it').focus();
    await page.keyboard.press('Enter');
    expect(await section.getByLabel('To', { exact: true }).inputValue()).toBe('bob');
    expect(await section.getByLabel('Until').inputValue()).toBe(week.local);
    expect(await section.getByLabel('From').inputValue()).toBe('');

    // Replaced by one still to come: planned, and withdrawn rather than ended.
    const start = berlin(14, '09:00');
    const end = berlin(21, '17:30');
    await section.getByLabel('From').fill(start.local);
    await section.getByLabel('Until').fill(end.local);
    await section.getByRole('button', { name: 'Replace' }).click();
    await current.and(page.locator('[data-state="planned"]')).waitFor();
    expect(await section.getByTestId('delegation-state').innerText()).toBe('Planned');
    expect(await section.getByTestId('delegation-change').getAttribute('open')).toBeNull(); // folded again
    expect(await section.getByTestId('delegation-from').getAttribute('datetime')).toBe(start.iso);
    expect((await http.get('/v1/me/delegation', ann)).body).toMatchObject({
      from: start.iso,
      until: end.iso,
      active: false,
    });

    await section.getByRole('button', { name: 'Withdraw it' }).click();
    await section.getByTestId('delegation-none').waitFor();
    expect(await section.getByTestId('delegation-note').innerText()).toBe(
      'Ended: Bob (bob) decides nothing on your behalf from now on.',
    );
    const gone = await http.get('/v1/me/delegation', ann);
    expect([gone.status, gone.body.code]).toEqual([404, 'no_delegation']);

    // Set again from now, then End now.
    await section.getByLabel('To', { exact: true }).fill('bob');
    await section.getByLabel('Until').fill(week.local);
    await section.getByRole('button', { name: 'Delegate' }).click();
    await current.and(page.locator('[data-state="active"]')).waitFor();
    await section.getByRole('button', { name: 'End now' }).click();
    await section.getByTestId('delegation-none').waitFor();
    expect((await http.get('/v1/me/delegation', ann)).status).toBe(404);

    expect(unexpected(errors)).toEqual([]);
    await context.close();
  });
});

describeBrowser('Settings at phone width', () => {
  it('fits 390 px without scrolling sideways, a delegation in place and its form open', async () => {
    const until = berlin(3, '12:00');
    expect((await http.put('/v1/me/delegation', bob, { to: 'ann', until: until.iso, reason: 'Away' })).status).toBe(
      200,
    );
    const { page, context, errors } = await openSettings(bob, 390);
    await away(page).getByTestId('delegation-current').waitFor();
    await away(page).getByText('Change or replace it').click();
    await reach(page).getByLabel('Send nothing during quiet hours').check();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(unexpected(errors)).toEqual([]);
    await context.close();
  });
});
