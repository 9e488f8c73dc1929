/**
 * The web inbox for someone who keeps it open all day, in real headless Chromium against the real service: the list's
 * own shortcuts (a, r, e, t on the selected row), Ctrl+Enter in the text boxes, opt-in desktop notifications, the
 * tab's count badge, and the banner while the live stream is down. Each test signs in to a tenant of its own, so its
 * list holds only what it made. One browser and one server (restarted on the same port and database by the last test).
 */
import type { Browser, Page } from 'playwright-core';
import { freshDatabase, TestDatabase } from '../support/database';
import { client } from '../support/http';
import { describeBrowser, launchBrowser, openPage, waitLive, WatchedPage } from '../support/browser';
import { startTestServer, TestServer } from '../support/server';
import { eventually, until } from '../support/wait';

let db: TestDatabase;
let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  db = await freshDatabase(); // owned here, so the server can be stopped and started again on it
  [server, browser] = await Promise.all([startTestServer({}, { db }), launchBrowser()]);
}, 90_000); // a server and a browser starting on a busy 2-core machine

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await db?.drop();
});

const http = () => client(server.url);

/** A tenant with its agent, two approvers (Ann, whose page it is, and Bob), an admin, and Ann's page on the inbox. */
interface Desk {
  tenant: string;
  agent: string;
  ann: string;
  bob: string;
  admin: string;
  w: WatchedPage;
  page: Page;
}

async function desk(tenant: string, before?: (w: WatchedPage) => Promise<unknown>): Promise<Desk> {
  const token = (sub: string, roles: string[], name: string) => server.token(sub, roles, { tenant, name });
  const [agent, ann, bob, admin] = await Promise.all([
    token('bot', ['agent'], 'Bot'),
    token('ann', ['approver'], 'Ann'),
    token('bob', ['approver'], 'Bob'),
    token('root', ['admin'], 'Root'),
  ]);
  const w = await openPage(browser, { token: ann });
  await before?.(w);
  await w.page.goto(`${server.url}/`);
  await waitLive(w.page);
  return { tenant, agent, ann, bob, admin, w, page: w.page };
}

let n = 0;
/** A fresh conversation of the desk's agent with one pending call; returns the call as the API answered it. */
async function propose(
  d: Desk,
  call: Record<string, unknown> = {},
  user: Record<string, unknown> = { id: 'lee', name: 'Lee Park' },
): Promise<any> {
  const id = `${d.tenant}-conv-${++n}`;
  expect((await http().post('/v1/conversations', d.agent, { id, title: `Conversation ${n}`, user })).status).toBe(201);
  const res = await http().post(`/v1/conversations/${id}/tool-calls`, d.agent, {
    toolCalls: [{ toolName: 'send_email', arguments: { to: 'team@example.com' }, ...call }],
  });
  expect(res.status).toBe(201);
  const pending = res.body.toolCalls.find((c: any) => c.status === 'pending');
  expect(pending).toBeDefined();
  return pending;
}

const recorded = async (d: Desk, id: string) => (await http().get(`/v1/tool-calls/${id}`, d.admin)).body;
const row = (d: Desk, id: string) => d.page.locator(`li[data-call-id="${id}"]`);
const card = (d: Desk) => d.page.locator('dialog.card');

/** Selects a row as the person would (focus on it, as j/k or a click leave it), without opening it. */
async function select(d: Desk, id: string): Promise<void> {
  await row(d, id).locator('.row-main').focus();
  await d.page.waitForFunction(
    (want) => document.querySelector('li.row.selected')?.getAttribute('data-call-id') === want,
    id,
  );
}

/** The call once it has left `pending`: the page's request may still be on its way. */
const decided = (d: Desk, id: string): Promise<any> =>
  eventually(
    async () => {
      const call = await recorded(d, id);
      return call.status === 'pending' ? undefined : call;
    },
    15_000,
    `a decision on ${id}`,
  );

describeBrowser('the inbox all day: shortcuts on the list', () => {
  it('a approves the selected row without opening it, and the next row is then selected for the next a', async () => {
    const d = await desk('keys-a');
    const first = await propose(d, { display: { title: 'First email' } });
    const second = await propose(d, { display: { title: 'Second email' } });
    await row(d, second.id).waitFor();
    await select(d, first.id);

    await d.page.keyboard.press('a');
    expect((await decided(d, first.id)).decision).toMatchObject({ outcome: 'approved', by: { id: 'ann', via: 'web' } });
    await row(d, first.id).getByText('approved by you via the web inbox').waitFor();
    expect(await card(d).count()).toBe(0); // decided from the list: no card opened
    expect(await recorded(d, second.id)).toMatchObject({ status: 'pending' }); // one press, one decision

    await d.page.keyboard.press('a');
    expect((await decided(d, second.id)).decision).toMatchObject({
      outcome: 'approved',
      by: { id: 'ann', via: 'web' },
    });
    await d.w.context.close();
  });

  it('a does not approve a row the selection moved to by itself: it asks for a second press first', async () => {
    const d = await desk('keys-moved');
    const chosen = await propose(d, { display: { title: 'The chosen one' } });
    const other = await propose(d, { display: { title: 'The one below' } });
    await row(d, other.id).waitFor();
    await select(d, chosen.id);
    // Bob decides the chosen row elsewhere; Ann's selection slides to the next row without her doing anything.
    expect((await http().post(`/v1/tool-calls/${chosen.id}/decision`, d.bob, { decision: 'approve' })).status).toBe(
      200,
    );
    await row(d, chosen.id).getByTestId('row-note').getByText('approved by Bob via the API').waitFor();

    await d.page.keyboard.press('a');
    await d.page
      .getByTestId('list-note')
      .getByText('“The one below” is selected now: press a again to approve it.')
      .waitFor();
    expect(await recorded(d, other.id)).toMatchObject({ status: 'pending' });
    await d.page.keyboard.press('a');
    expect((await decided(d, other.id)).decision).toMatchObject({ outcome: 'approved', by: { id: 'ann', via: 'web' } });
    await d.w.context.close();
  });

  it('a on a destructive call opens its card asking to confirm, and the second a approves it', async () => {
    const d = await desk('keys-destructive');
    expect(
      (
        await http().put('/v1/tools/delete_source', d.admin, {
          description: 'Delete a knowledge source',
          destructive: true,
        })
      ).status,
    ).toBe(201);
    const call = await propose(d, {
      toolName: 'delete_source',
      arguments: { id: 'src_4' },
      display: { title: 'Delete source 4' },
    });
    await select(d, call.id);

    await d.page.keyboard.press('a');
    await card(d).getByRole('heading', { name: 'Delete source 4' }).waitFor();
    await card(d).getByRole('alert').getByText('Destructive: press again to confirm.').waitFor();
    expect(await recorded(d, call.id)).toMatchObject({ status: 'pending' });
    await d.page.keyboard.press('a');
    await card(d).waitFor({ state: 'detached' });
    expect((await decided(d, call.id)).decision).toMatchObject({ outcome: 'approved', by: { id: 'ann', via: 'web' } });
    await d.w.context.close();
  });

  it('r opens the selected row’s reject form; letters typed there are text; Ctrl+Enter sends the reason', async () => {
    const d = await desk('keys-r');
    const call = await propose(d, { display: { title: 'Refund order 7' } });
    await select(d, call.id);

    await d.page.keyboard.press('r');
    const reason = card(d).getByLabel(/Why reject/);
    await card(d).getByRole('heading', { name: 'Refund order 7' }).waitFor();
    await d.page.waitForFunction(() => document.activeElement?.id === 'reject-reason');
    await d.page.keyboard.press('Control+Enter'); // no reason yet: nothing is sent
    expect(await card(d).isVisible()).toBe(true);
    // "a", "e", "r", "t" here are the reason, not approve, edit, reject or timeline.
    await d.page.keyboard.type('already refunded at the desk');
    expect(await reason.inputValue()).toBe('already refunded at the desk');
    expect(await recorded(d, call.id)).toMatchObject({ status: 'pending' });
    await d.page.keyboard.press('Control+Enter');
    await card(d).waitFor({ state: 'detached' });
    expect(await recorded(d, call.id)).toMatchObject({
      status: 'rejected',
      decision: { outcome: 'rejected', reason: 'already refunded at the desk', by: { id: 'ann', via: 'web' } },
    });
    await row(d, call.id).getByText('rejected by you via the web inbox: already refunded at the desk').waitFor();
    await d.w.context.close();
  });

  it('e opens the selected row’s argument editor, and Ctrl+Enter approves the edited arguments', async () => {
    const d = await desk('keys-e');
    const call = await propose(d, { arguments: { to: 'all@example.com' }, display: { title: 'Email everyone' } });
    await select(d, call.id);

    await d.page.keyboard.press('e');
    const editor = card(d).getByLabel(/Arguments to run instead/);
    await d.page.waitForFunction(() => document.activeElement?.id === 'edit-args');
    await editor.fill('{"to": "team@example.com"');
    await card(d)
      .getByTestId('json-status')
      .getByText(/Not valid JSON/)
      .waitFor();
    await editor.press('Control+Enter'); // invalid JSON: nothing is sent
    expect(await recorded(d, call.id)).toMatchObject({ status: 'pending' });
    await editor.fill('{"to": "team@example.com"}');
    await editor.press('Control+Enter');
    await card(d).waitFor({ state: 'detached' });
    expect(await recorded(d, call.id)).toMatchObject({
      status: 'approved',
      arguments: { to: 'all@example.com' },
      decision: { editedArguments: { to: 'team@example.com' }, by: { id: 'ann', via: 'web' } },
    });
    await d.w.context.close();
  });

  it('t opens the selected row’s conversation timeline, and the footer lists only keys that work', async () => {
    const d = await desk('keys-t');
    const call = await propose(d, { display: { title: 'Timeline please' } });
    await select(d, call.id);
    await d.page.keyboard.press('t');
    await d.page.waitForFunction((conv) => location.hash === `#/conversations/${conv}`, call.conversationId);
    await d.page.getByTestId('timeline').getByText('Timeline please').waitFor();
    expect(await d.page.locator('footer.keys-legend').innerText()).toMatch(
      /a\s+approve · r\s+reject · e\s+edit · t\s+timeline/,
    );
    await d.w.context.close();
  });
});

/** Records `new Notification(...)` and `Notification.requestPermission()`; `__focused` stands for the window's focus. */
function watchNotifications(): void {
  const Real = window.Notification;
  const shown: Array<{ title: string; body?: string; tag?: string }> = [];
  let asked = 0;
  let focused = true;
  function Recorded(title: string, options?: NotificationOptions) {
    shown.push({ title, body: options?.body, tag: options?.tag });
    return new Real(title, options);
  }
  Object.defineProperty(Recorded, 'permission', { get: () => Real.permission });
  (Recorded as any).requestPermission = () => {
    asked += 1;
    return Real.requestPermission();
  };
  (window as any).Notification = Recorded;
  (window as any).__notifications = { shown: () => shown, asked: () => asked, focus: (f: boolean) => (focused = f) };
  Document.prototype.hasFocus = () => focused;
}

const shown = (d: Desk) =>
  d.page.evaluate(
    () => (window as any).__notifications.shown() as Array<{ title: string; body?: string; tag?: string }>,
  );
const asked = (d: Desk) => d.page.evaluate(() => (window as any).__notifications.asked() as number);
const focusTab = (d: Desk, focused: boolean) =>
  d.page.evaluate((f) => (window as any).__notifications.focus(f), focused);

describeBrowser('the inbox all day: desktop notifications', () => {
  it('are off until turned on; the permission is asked on that click only; the choice is remembered', async () => {
    const d = await desk('notify-on', (w) => w.context.addInitScript(watchNotifications));
    const toggle = d.page.getByRole('button', { name: 'Desktop notifications' });
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    expect(await asked(d)).toBe(0); // opening the page asks nothing

    await d.w.context.grantPermissions(['notifications'], { origin: server.url }); // the person's "Allow"
    await toggle.click();
    await d.page.waitForFunction(
      () => document.querySelector('[data-testid="notify-toggle"]')?.getAttribute('aria-pressed') === 'true',
    );
    expect(await asked(d)).toBe(1);
    expect(await d.page.evaluate(() => localStorage.getItem('tollgate.notifications'))).toBe('on');

    await d.page.reload();
    await waitLive(d.page);
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    expect(await asked(d)).toBe(0);

    await toggle.click(); // off again, and remembered so
    await d.page.waitForFunction(
      () => document.querySelector('[data-testid="notify-toggle"]')?.getAttribute('aria-pressed') === 'false',
    );
    expect(await d.page.evaluate(() => localStorage.getItem('tollgate.notifications'))).toBeNull();
    await d.w.context.close();
  });

  it('tell of a new request while the tab is in the background: not when it is in front, not for one’s own request', async () => {
    const d = await desk('notify-new', async (w) => {
      await w.context.addInitScript(watchNotifications);
      await w.context.grantPermissions(['notifications'], { origin: server.url });
    });
    await d.page.getByRole('button', { name: 'Desktop notifications' }).click();
    await d.page.waitForFunction(
      () => document.querySelector('[data-testid="notify-toggle"]')?.getAttribute('aria-pressed') === 'true',
    );

    const seen = await propose(d, { display: { title: 'Seen on screen' } });
    await row(d, seen.id).waitFor();
    expect(await shown(d)).toEqual([]); // the tab is in front: the list itself tells

    await focusTab(d, false);
    const own = await propose(d, { display: { title: 'Ann asked for this herself' } }, { id: 'ann', name: 'Ann' });
    await row(d, own.id).waitFor(); // Ann may decide her own request (the requester rule is not in this policy)…
    expect(await shown(d)).toEqual([]); // …but she is in that chat: no notification
    const call = await propose(d, { display: { title: 'Send the invoice', summary: 'Email invoice 42 to ACME' } });
    await row(d, call.id).waitFor();
    await d.page.waitForFunction(() => (window as any).__notifications.shown().length > 0);
    expect(await shown(d)).toEqual([
      {
        title: 'Approve? Send the invoice',
        body: 'Email invoice 42 to ACME — from bot for Lee Park',
        tag: `tollgate-call-${call.id}`,
      },
    ]);
    await d.w.context.close();
  });

  it('say so when the browser blocks them, and stay off', async () => {
    const d = await desk('notify-blocked', (w) => w.context.addInitScript(watchNotifications)); // no grant: headless Chromium answers "denied"
    await d.page.getByRole('button', { name: 'Desktop notifications' }).click();
    await d.page
      .getByRole('status')
      .getByText(/blocks notifications from this site/)
      .waitFor();
    expect(await d.page.getByTestId('notify-toggle').getAttribute('aria-pressed')).toBe('false');
    expect(await d.page.evaluate(() => localStorage.getItem('tollgate.notifications'))).toBeNull();
    await d.w.context.close();
  });
});

/** The favicon's SVG as the page shows it now: the built file's name, or the badged icon's text. */
async function favicon(d: Desk): Promise<string> {
  const href = await d.page.evaluate(() => document.querySelector<HTMLLinkElement>('link[rel~="icon"]')!.href);
  return href.startsWith('data:image/svg+xml,') ? decodeURIComponent(href.slice('data:image/svg+xml,'.length)) : href;
}

describeBrowser('the inbox all day: the tab badge', () => {
  it('counts pending requests in the title and on the favicon, up and down, and is plain at zero', async () => {
    const d = await desk('badge');
    const plain = await favicon(d);
    expect(plain).toMatch(/\/assets\/icon-[0-9a-f]+\.svg$/);
    expect(await d.page.title()).toBe('Tollgate inbox');

    const one = await propose(d);
    const two = await propose(d);
    await d.page.waitForFunction(() => document.title === '(2) Tollgate inbox');
    expect(await favicon(d)).toMatch(/<circle[^>]*fill="#dc2626"[^>]*\/><text[^>]*>2<\/text><\/svg>$/);

    expect(
      (await http().post(`/v1/tool-calls/${one.id}/decision`, d.bob, { decision: 'reject', reason: 'no' })).status,
    ).toBe(200);
    await d.page.waitForFunction(() => document.title === '(1) Tollgate inbox');
    expect(await favicon(d)).toMatch(/>1<\/text><\/svg>$/);

    await select(d, two.id);
    await d.page.keyboard.press('a'); // decided here as well as elsewhere
    await d.page.waitForFunction(() => document.title === 'Tollgate inbox');
    expect(await favicon(d)).toBe(plain);
    await d.w.context.close();
  });
});

describeBrowser('the inbox all day: the live stream drops', () => {
  it('shows a banner while the stream is down and the list may be stale, and hides it once back and up to date', async () => {
    const d = await desk('stream');
    const banner = d.page.getByTestId('stream-banner');
    const decidedMeanwhile = await propose(d, { display: { title: 'Decided while away' } });
    const staying = await propose(d, { display: { title: 'Still waiting' } });
    await row(d, staying.id).waitFor();
    expect(await banner.count()).toBe(0);

    // Reconnects are refused until "Retry now" is clicked, so what happens meanwhile is missed for sure.
    await d.page.evaluate(() =>
      document.addEventListener(
        'click',
        (e) =>
          (e.target as Element).closest('[data-testid="stream-banner"] button') && ((window as any).__retried = true),
        true,
      ),
    );
    let attempts = 0;
    await d.page.route('**/v1/events/stream', async (route) => {
      attempts += 1;
      if (await d.page.evaluate(() => !!(window as any).__retried)) await route.continue();
      else await route.abort('connectionrefused');
    });

    const port = Number(new URL(server.url).port);
    await server.close(); // streams end, as in a deploy or a crash
    await banner.getByRole('status').getByText('Live updates are disconnected.').waitFor();
    expect(await banner.innerText()).toMatch(/last synced at \d\d:\d\d:\d\d/);
    await d.page.locator('[data-testid="stream-state"]', { hasText: 'Reconnecting…' }).waitFor();
    server = await startTestServer({ port }, { db }); // the same address and database, as after a restart

    expect(
      (await http().post(`/v1/tool-calls/${decidedMeanwhile.id}/decision`, d.bob, { decision: 'approve' })).status,
    ).toBe(200);
    const arrivedMeanwhile = await propose(d, { display: { title: 'Arrived while away' } });
    await until(() => attempts > 0, 20_000, 'a reconnect attempt'); // it tried, and was refused:
    await d.page.waitForFunction(() =>
      /Reconnecting in \d/.test(document.querySelector('[data-testid="stream-banner"]')?.textContent ?? ''),
    );
    expect(await banner.isVisible()).toBe(true); // the banner stays, and the list is as it was

    expect(await row(d, arrivedMeanwhile.id).count()).toBe(0);
    expect(await row(d, decidedMeanwhile.id).getByTestId('row-note').count()).toBe(0);

    await banner.getByRole('button', { name: 'Retry now' }).click();
    await banner.waitFor({ state: 'detached' });
    await waitLive(d.page);
    // Up to date: what arrived is listed, what was decided shows who decided it (the missed event, resumed by Last-Event-ID).
    await row(d, arrivedMeanwhile.id).getByText('Arrived while away').waitFor();
    await row(d, decidedMeanwhile.id).getByTestId('row-note').getByText('approved by Bob via the API').waitFor();
    await d.page.waitForFunction(() => document.querySelector('[data-testid="pending-count"]')?.textContent === '2');
    await d.page.unroute('**/v1/events/stream');
    await d.w.context.close();
  }, 60_000);

  it('needed no other origin, and broke no Content-Security-Policy rule', async () => {
    const d = await desk('csp');
    await propose(d); // a badge on the favicon is a data: URL, which img-src allows
    await d.page.waitForFunction(() => document.title === '(1) Tollgate inbox');
    expect(d.w.requests.filter((u) => !u.startsWith(server.url) && !u.startsWith('data:'))).toEqual([]);
    expect(d.w.errors.filter((e) => /Content Security Policy|Refused to/i.test(e))).toEqual([]);
    await d.w.context.close();
  });
});
