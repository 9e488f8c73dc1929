/**
 * Push notifications in real Chromium: a person turns them on in Settings, the server pushes a held call to the push
 * service stand-in (which verifies and decrypts it as a browser would), the message reaches the inbox's real service
 * worker with the tab closed, the worker shows a notification with Approve and Reject, and Approve decides the call
 * as the person while the agent's guard waits.
 *
 * What headless Chromium cannot do, and what stands in for it:
 * - Subscribing needs Chromium's own push service (Google's FCM, over the network; an incognito context refuses it
 *   outright). PushManager.subscribe is replaced in the page by one that answers a subscription on the stand-in,
 *   recording the server key it was asked for; everything else the page does to enable push is the real code.
 * - The push service's delivery to the browser is CDP's ServiceWorker.deliverPushMessage, carrying the plaintext
 *   the stand-in decrypted from the server's real request.
 * - Clicking a notification's action has no CDP command. The click is a NotificationEvent dispatched in the real
 *   worker (Playwright evaluates there) on the real notification: the worker's own listener and handler run, but
 *   the event is untrusted, so its waitUntil throws (the work it is given runs all the same).
 */
import { Tollgate } from '@tollgate/sdk';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Worker } from 'playwright-core';
import { CHROMIUM, describeBrowser, launchBrowser, openPage, tracked, waitLive, WatchedPage } from '../support/browser';
import { client } from '../support/http';
import { BrowserSubscription, PushServiceStandIn, startPushService } from '../support/push-service';
import { startTestServer, TestServer } from '../support/server';
import { eventually, until } from '../support/wait';

let server: TestServer;
let http: ReturnType<typeof client>;
let push: PushServiceStandIn;
let browser: Browser;
let context: BrowserContext;
let cdp: CDPSession;
let registrationId: string;
let phone: BrowserSubscription;
let agent: string;
let ann: string;
let root: string;

interface Shown {
  title: string;
  body: string;
  tag: string;
  data: any;
  actions: Array<{ action: string; title: string }>;
  requireInteraction: boolean;
}

/** The inbox's service worker, as Playwright reaches it (it may have been restarted since). */
async function worker(): Promise<Worker> {
  const found = context.serviceWorkers().find((w) => w.url().endsWith('/sw.js'));
  return found ?? (await context.waitForEvent('serviceworker'));
}

/** The notifications the worker shows now, for one call's tag. */
async function shown(tag: string): Promise<Shown[]> {
  return (await worker()).evaluate(async (t) => {
    const scope = self as unknown as { registration: ServiceWorkerRegistration };
    return (await scope.registration.getNotifications({ tag: t })).map((n) => ({
      title: n.title,
      body: n.body,
      tag: n.tag,
      data: n.data,
      actions: ((n as unknown as { actions: Array<{ action: string; title: string }> }).actions ?? []).map((a) => ({
        action: a.action,
        title: a.title,
      })),
      requireInteraction: n.requireInteraction,
    }));
  }, tag);
}

/** The notification of a tag once it is one `which` takes. */
async function shownSoon(tag: string, which: (n: Shown) => boolean): Promise<Shown> {
  return eventually(async () => (await shown(tag)).find(which), 10_000, `a notification tagged ${tag}`);
}

/** A click on a notification (or one of its actions), dispatched in the worker on the real notification. */
async function click(tag: string, action: string): Promise<void> {
  await (
    await worker()
  ).evaluate(
    async ({ t, a }) => {
      const scope = self as unknown as {
        registration: ServiceWorkerRegistration;
        dispatchEvent(e: Event): boolean;
      };
      const [n] = await scope.registration.getNotifications({ tag: t });
      if (!n) throw new Error(`no notification tagged ${t}`);
      const Ctor = (self as unknown as { NotificationEvent: new (type: string, init: object) => Event })
        .NotificationEvent;
      scope.dispatchEvent(new Ctor('notificationclick', { notification: n, action: a }));
    },
    { t: tag, a: action },
  );
}

/** What the push service got for the phone about a call, of a kind, decrypted. */
const received = (toolCallId: string, kind: 'ask' | 'outcome') =>
  eventually(
    () =>
      push.deliveries.find(
        (d) => d.path === '/push/chromium' && d.message?.toolCallId === toolCallId && d.message?.kind === kind,
      ),
    15_000,
    `the ${kind} push for ${toolCallId}`,
  );

/** The push service hands the message to the browser: the worker's `push` event, with the plaintext. */
const deliver = (text: string) =>
  cdp.send('ServiceWorker.deliverPushMessage', {
    origin: `${new URL(server.url).origin}/`,
    registrationId,
    data: text,
  });

beforeAll(async () => {
  [push, browser] = await Promise.all([startPushService(), launchBrowser()]);
  server = await startTestServer({ push: { subject: 'mailto:ops@example.com' } });
  http = client(server.url);
  agent = await server.token('deploy-bot', ['agent']);
  ann = await server.token('ann', ['approver'], { name: 'Ann' });
  root = await server.token('root', ['admin'], { name: 'Root' });
  expect(
    (
      await http.put('/v1/policy', root, {
        rules: [
          { match: 'deploy', level: 'confirm', approvers: ['approver'] },
          { match: 'pk_wire', level: 'confirm', approvers: ['approver'], stepUp: 'passkey' },
        ],
      })
    ).status,
  ).toBe(200);
  phone = push.subscribe('chromium');
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await push?.close();
});

describeBrowser('push notifications in the browser', () => {
  let inbox: WatchedPage;

  it('turns notifications on in Settings: the worker is registered and the subscription reaches the server', async () => {
    inbox = await openPage(browser, { token: ann });
    context = inbox.context;
    await context.grantPermissions(['notifications'], { origin: new URL(server.url).origin });
    await context.addInitScript((sub) => {
      // Headless Chromium has no push service of its own: subscribing answers the stand-in's subscription.
      let current: object | null = null;
      const proto = PushManager.prototype as unknown as Record<string, unknown>;
      proto.subscribe = async (o: { applicationServerKey: ArrayBuffer | Uint8Array }) => {
        const key = new Uint8Array(o.applicationServerKey as ArrayBuffer);
        (window as unknown as { subscribedWith: string }).subscribedWith = btoa(String.fromCharCode(...key))
          .replace(/\+/g, '-')
          .replace(/\//g, '_')
          .replace(/=+$/, '');
        current = {
          endpoint: sub.endpoint,
          expirationTime: null,
          options: { userVisibleOnly: true, applicationServerKey: key.buffer },
          toJSON: () => sub,
          unsubscribe: async () => {
            current = null;
            return true;
          },
        };
        return current;
      };
      proto.getSubscription = async () => current;
    }, phone.toJSON());
    await inbox.page.goto(`${server.url}/#/settings`);
    await waitLive(inbox.page);
    const section = inbox.page.getByTestId('notifications');
    await section.getByRole('heading', { name: 'Notifications' }).waitFor();
    expect(await section.getByTestId('push-state').innerText()).toBe('This device: off');
    await section.getByTestId('push-enable').click();
    await section.getByTestId('push-state').filter({ hasText: 'This device: on' }).waitFor();
    await section.locator('tr', { hasText: '(this device)' }).waitFor();

    const devices = (await http.get('/v1/me/push-subscriptions', ann)).body.subscriptions;
    expect(devices).toHaveLength(1);
    expect(devices[0]).toMatchObject({ endpoint: phone.endpoint, userAgent: expect.stringContaining('Chrome') });
    const key = (await http.get('/v1/push/vapid-public-key', ann)).body.publicKey;
    expect(await inbox.page.evaluate(() => (window as unknown as { subscribedWith: string }).subscribedWith)).toBe(key);
    const registrations = await inbox.page.evaluate(async () =>
      (await navigator.serviceWorker.getRegistrations()).map((r) => [r.scope, r.active?.scriptURL]),
    );
    expect(registrations).toEqual([[`${server.url}/`, `${server.url}/sw.js`]]);
    expect(inbox.errors).toEqual([]);
  });

  it("is installable as an app, by Chromium's own check of the manifest, its icons and the worker", async () => {
    // A profile of its own: Playwright's contexts are incognito, where Chromium installs nothing.
    const profile = mkdtempSync(join(tmpdir(), 'tollgate-pwa-'));
    const installed = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    try {
      const page = await installed.newPage();
      await page.goto(`${server.url}/`);
      const cdp = await installed.newCDPSession(page);
      const { url, data } = await cdp.send('Page.getAppManifest');
      expect(url).toBe(`${server.url}/manifest.webmanifest`);
      expect(JSON.parse(data!)).toMatchObject({ name: 'Tollgate', display: 'standalone' });
      expect(await cdp.send('Page.getInstallabilityErrors')).toEqual({ installabilityErrors: [] });
    } finally {
      await installed.close();
      rmSync(profile, { recursive: true, force: true });
    }
  });

  it('shows the held call with Approve and Reject with the tab closed; Approve decides it and the guard returns', async () => {
    await inbox.page.close();
    const blank = await context.newPage();
    cdp = await context.newCDPSession(blank);
    const registrations: Array<{ registrationId: string; scopeURL: string }> = [];
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => registrations.push(...e.registrations));
    await cdp.send('ServiceWorker.enable');
    await until(() => registrations.some((r) => r.scopeURL === `${server.url}/`), 5_000, 'the registration');
    registrationId = registrations.find((r) => r.scopeURL === `${server.url}/`)!.registrationId;

    const sdk = new Tollgate({ url: server.url, token: agent });
    const conv = await sdk.conversation({ id: 'browser-push', user: { id: 'lee', name: 'Lee' } });
    const deploy = conv.guard('deploy', async (args: { service: string }) => `deployed ${args.service}`, {
      display: (a) => ({ title: `Deploy ${a.service}`, summary: 'Ships the release branch' }),
    });
    const run = tracked(deploy({ service: 'billing' }));
    const ask = await received(await firstCallId(), 'ask');
    const tag = `tollgate-call-${ask.message.toolCallId}`;
    await deliver(ask.text!);
    const n = await shownSoon(tag, () => true);
    expect(n).toMatchObject({
      title: 'Deploy billing',
      body: 'Ships the release branch\ndeploy · deploy-bot for Lee\n{"service":"billing"}',
      actions: [
        { action: 'approve', title: 'Approve' },
        { action: 'reject', title: 'Reject' },
      ],
      requireInteraction: true,
      data: { toolCallId: ask.message.toolCallId, approve: ask.message.approve, reject: ask.message.reject },
    });
    expect(run.settled()).toBe(false);

    await click(tag, 'approve');
    await expect(run.promise).resolves.toBe('deployed billing');
    const call = (await http.get(`/v1/tool-calls/${ask.message.toolCallId}`, root)).body;
    expect(call.decision).toMatchObject({ outcome: 'approved', by: { id: 'ann', via: 'push' } });
    // The worker says how it went, in place of the request.
    const done = await shownSoon(tag, (x) => x.title.startsWith('Approved'));
    expect(done).toMatchObject({ title: 'Approved · deploy', body: 'It may run now.', actions: [] });

    // The server's outcome replaces it too, without actions.
    const outcome = await received(ask.message.toolCallId, 'outcome');
    await deliver(outcome.text!);
    expect((await shownSoon(tag, (x) => x.title === 'Approved: Deploy billing')).actions).toEqual([]);
  });

  it('says so in Settings, and offers nothing to turn on, where the server has push off', async () => {
    const off = await startTestServer();
    try {
      const page = await openPage(browser, { token: await off.token('ann', ['approver']) });
      await page.page.goto(`${off.url}/#/settings`);
      const note = page.page.getByTestId('push-unsupported');
      await note.waitFor();
      expect(await note.innerText()).toMatch(/^Push notifications are off on this server: .*TOLLGATE_VAPID_SUBJECT/);
      expect(await page.page.getByTestId('push-enable').count()).toBe(0);
      await page.context.close();
    } finally {
      await off.stop();
    }
  });

  it('offers Open instead of Approve for a passkey call; a click opens its card in the open inbox', async () => {
    const page = await context.newPage();
    await page.goto(`${server.url}/#/`);
    await waitLive(page);
    expect((await http.post('/v1/conversations', agent, { id: 'browser-pk' })).status).toBe(201);
    const res = await http.post('/v1/conversations/browser-pk/tool-calls', agent, {
      toolCalls: [{ toolName: 'pk_wire', arguments: { amount: 5 } }],
    });
    const id = res.body.toolCalls[0].id;
    const ask = await received(id, 'ask');
    const tag = `tollgate-call-${id}`;
    await deliver(ask.text!);
    const n = await shownSoon(tag, () => true);
    expect(n.actions).toEqual([
      { action: 'open', title: 'Open to approve' },
      { action: 'reject', title: 'Reject' },
    ]);
    expect(n.body).toContain('Needs a passkey');
    await click(tag, '');
    await page.waitForURL(`${server.url}/#/calls/${id}`);
    await page.locator('dialog.card').waitFor();
    expect((await http.get(`/v1/tool-calls/${id}`, root)).body.status).toBe('pending');
  });
});

/** The id of the first call the agent proposed here: read from the push it caused (the guard names it to no one). */
async function firstCallId(): Promise<string> {
  const d = await eventually(
    () => push.deliveries.find((x) => x.path === '/push/chromium' && x.message?.kind === 'ask'),
    15_000,
    'the first push',
  );
  return d.message.toolCallId;
}
