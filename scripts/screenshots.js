#!/usr/bin/env node
'use strict';
/**
 * Screenshots of the web inbox for the README (`npm run screenshots`): starts the built service on a scratch
 * embedded database, plays a few agents' requests into it, and photographs the page in headless Chromium.
 * Writes docs/img/inbox.png, card.png, phone.png and timeline.png (`inbox`), notifications.png (`notifications`:
 * the whole Settings page) and push-notification.png (`push-notification`, below): all of them, or the groups named
 * (`node scripts/screenshots.js notifications`). Needs /usr/bin/chromium (CHROMIUM_PATH).
 *
 * `push-notification` is a push notification as Chromium shows it, over the inbox: a held call's real push (the
 * server's encrypted request to a push service stand-in on loopback, scripts/push-stand-in.js, decrypted there as the
 * browser would) handed to the inbox's real service worker with CDP's ServiceWorker.deliverPushMessage; the worker
 * shows it with Approve and Reject. Headless Chromium draws no notifications, so this group runs Chromium headed, with
 * its own notification popups (--disable-features=NativeNotifications) instead of the desktop's, on an X display:
 * $DISPLAY if set (a screen of 1120x720, as the popup sits in the screen's corner: `xvfb-run -s '-screen 0
 * 1120x720x24'`), else an Xvfb of its own (apt-get install -y xvfb). The screen is grabbed with ImageMagick's `import`
 * (apt-get install -y imagemagick), as the popup is no part of the page. Run without naming groups on a machine with
 * neither $DISPLAY nor Xvfb, it is skipped with a warning; the other groups run headless as ever.
 */
const { mkdtempSync, rmSync, mkdirSync, existsSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, delimiter } = require('node:path');
const { createECDH, randomBytes } = require('node:crypto');
const { spawn, execFileSync } = require('node:child_process');
const { chromium } = require('playwright-core');
const { DateTime } = require('luxon');
const { startServer } = require('../dist/src/server');
const { loadConfig } = require('../dist/src/infrastructure/config/config');
const { mintToken } = require('../dist/src/infrastructure/auth/jwt-verifier');
const { startPushStandIn } = require('./push-stand-in');

const OUT = join(__dirname, '..', 'docs', 'img');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const ONLY = new Set(process.argv.slice(2));
const want = (group) => ONLY.size === 0 || ONLY.has(group);

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-shots-'));
  const secret = randomBytes(32).toString('base64url');
  const base = loadConfig({});
  const config = {
    ...base,
    port: 0,
    dataDir,
    auth: { secret, devSecret: false },
    instanceId: 'screenshots',
    // Push on, with devices whose push service is a loopback address nothing listens on: only the list is shown.
    push: { subject: 'mailto:ops@example.com' },
    webhooks: { ...base.webhooks, allowPrivate: ['127.0.0.0/8'] },
  };
  const server = await startServer(config, { logLevels: false });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const token = (sub, roles, name) => mintToken(secret, { sub, roles, name }, '2h');
    const agent = await token('support-bot', ['agent']);
    const ops = await token('ops-agent', ['agent']);
    const admin = await token('root', ['admin'], 'Root');
    const ann = await token('ann', ['approver', 'admin'], 'Ann');
    const bob = await token('bob', ['approver'], 'Bob');
    const apiAt =
      (url) =>
      async (method, path, tok, body, headers = {}) => {
        const res = await fetch(url + path, {
          method,
          headers: {
            authorization: `Bearer ${tok}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...headers,
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const json = await res.json();
        if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
        return json;
      };
    const api = apiAt(server.url);

    if (want('inbox')) {
      await api('PUT', '/v1/policy', admin, {
        rules: [
          { match: 'get_*', level: 'automatic' },
          { match: 'delete_source', level: 'confirm', timeoutSeconds: 900 },
          { match: 'shell', level: 'manual', timeoutSeconds: 600 },
        ],
        defaults: { timeoutSeconds: 1200 },
      });
      await api('PUT', '/v1/tools/delete_source', admin, {
        description: 'Delete a knowledge source',
        destructive: true,
      });
      await api('PUT', '/v1/tools/send_email', admin, { description: 'Send an email', requiresApproval: true });

      await api('POST', '/v1/conversations', agent, {
        id: 'conv-kb',
        title: 'Tidy the knowledge base',
        user: { id: 'lee', name: 'Lee Park', roles: ['editor'] },
      });
      await api('POST', '/v1/conversations', agent, {
        id: 'conv-mail',
        title: 'March price change',
        user: { id: 'mia', name: 'Mia Chen', roles: ['sales'] },
      });
      await api('POST', '/v1/conversations', ops, {
        id: 'conv-ops',
        title: 'Staging is slow',
        user: { id: 'sam', name: 'Sam Ortiz', roles: ['engineer'] },
      });
      await api('POST', '/v1/conversations', agent, {
        id: 'conv-crm',
        title: 'Clean up duplicates',
        user: { id: 'lee', name: 'Lee Park' },
      });

      const kb = await api('POST', '/v1/conversations/conv-kb/tool-calls', agent, {
        toolCalls: [
          { id: 'c1', toolName: 'get_source', arguments: { id: 'src_2' } },
          {
            id: 'c2',
            toolName: 'delete_source',
            arguments: { id: 'src_2', cascade: true },
            reason: 'Lee asked to remove the outdated handbook',
            confidence: 0.92,
            display: {
              title: 'Delete source',
              summary: "Delete source 'Handbook' (src_2) — 1,204 objects. This cannot be undone.",
              fields: [
                { label: 'Objects', value: '1,204' },
                { label: 'Last edited', value: '14 months ago' },
              ],
            },
          },
        ],
      });
      await api('POST', '/v1/conversations/conv-mail/tool-calls', agent, {
        toolCalls: [
          {
            toolName: 'send_email',
            arguments: {
              to: 'customers-eu@lists.example.com',
              subject: 'Your plan from 1 April',
              template: 'price-change-2025',
            },
            reason: 'Mia wants customers told a month ahead',
            display: {
              title: 'Send email to 212 customers',
              summary: "Announce the March price change to the 'EU customers' list.",
            },
          },
        ],
      });
      const crm = await api('POST', '/v1/conversations/conv-crm/tool-calls', agent, {
        toolCalls: [
          {
            toolName: 'merge_contacts',
            arguments: { keep: 'ct_881', merge: ['ct_902', 'ct_917'] },
            display: { title: 'Merge 3 contacts', summary: 'Merge "Dana Whitfield" duplicates into ct_881.' },
          },
        ],
      });

      const context = await browser.newContext({
        viewport: { width: 1200, height: 820 },
        deviceScaleFactor: 1,
        colorScheme: 'light',
      });
      await context.addInitScript((t) => sessionStorage.setItem('tollgate.token', t), ann);
      const page = await context.newPage();
      await page.goto(server.url + '/');
      await page.locator('.row-title', { hasText: 'Send email to 212 customers' }).waitFor();
      await page.locator('[data-testid="stream-state"]', { hasText: 'Live' }).waitFor();

      // Live: a request arrives, another is decided elsewhere.
      await api('POST', '/v1/conversations/conv-ops/tool-calls', ops, {
        toolCalls: [
          {
            toolName: 'shell',
            arguments: { cmd: 'kubectl rollout restart deploy/api -n staging' },
            reason: 'p95 latency doubled after the last deploy',
            display: { title: 'Restart the staging API', summary: 'kubectl rollout restart deploy/api -n staging' },
          },
        ],
      });
      await page.locator('.row-title', { hasText: 'Restart the staging API' }).waitFor();
      await api(
        'POST',
        `/v1/tool-calls/${crm.toolCalls[0].id}/decision`,
        bob,
        { decision: 'approve' },
        { 'x-tollgate-channel': 'cli' },
      );
      await page.getByText('approved by Bob via the CLI').first().waitFor();

      mkdirSync(OUT, { recursive: true });
      await page.screenshot({ path: join(OUT, 'inbox.png') });

      await page.goto(`${server.url}/#/calls/${kb.toolCalls[1].id}`);
      await page.locator('dialog.card').waitFor();
      await page.setViewportSize({ width: 1200, height: 1000 });
      await page.screenshot({ path: join(OUT, 'card.png') });

      await page.goto(`${server.url}/#/conversations/conv-kb`);
      await page.locator('[data-testid="timeline"]').waitFor();
      await page.getByText('Audit trail').waitFor();
      await page.setViewportSize({ width: 1200, height: 820 });
      await page.screenshot({ path: join(OUT, 'timeline.png') });

      await page.goto(`${server.url}/#/`);
      await page.setViewportSize({ width: 390, height: 844 });
      await page.locator('.row-title', { hasText: 'Restart the staging API' }).waitFor();
      await page.screenshot({ path: join(OUT, 'phone.png') });
      await context.close();
    }

    if (want('notifications')) await notifications(browser, server.url, ann, bob, api);
    if (want('push-notification')) {
      if (ONLY.has('push-notification') || process.env.DISPLAY || onPath('Xvfb')) {
        // A server of its own (the same config and secret, its own database): one held call, whatever ran before.
        const pushDir = mkdtempSync(join(tmpdir(), 'tollgate-shots-push-'));
        const pushServer = await startServer(
          { ...config, dataDir: pushDir, grpcPort: undefined }, // the first server holds gRPC's port
          { logLevels: false },
        );
        try {
          const dana = await token('dana', ['approver'], 'Dana');
          const deployBot = await token('deploy-bot', ['agent']);
          await pushNotification(pushServer.url, admin, deployBot, dana, apiAt(pushServer.url));
        } finally {
          await pushServer.close();
          rmSync(pushDir, { recursive: true, force: true });
        }
      } else {
        console.warn(
          'Skipped push-notification.png: it needs an X display ($DISPLAY) or Xvfb (apt-get install -y xvfb)',
        );
      }
    }
    console.log(`Wrote the screenshots to ${OUT}`);
  } finally {
    await browser.close();
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A browser's push subscription on a stand-in endpoint: keys as PushManager.subscribe makes them. */
function subscription(name) {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return {
    endpoint: `http://127.0.0.1:9/push/${name}`,
    expirationTime: null,
    keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') },
  };
}

/**
 * Settings, whole: Notifications turned on on this device, how Tollgate reaches Ann (set over the API: email as a
 * daily digest, quiet hours at night, Berlin time), and her delegation to Bob while she is on holiday. Headless
 * Chromium has no push service to subscribe with, so PushManager.subscribe answers a stand-in subscription (as
 * test/browser/push.e2e-spec.ts does); the page's own code does the rest. A phone was subscribed before, over the API.
 */
async function notifications(browser, url, token, delegate, api) {
  const zone = 'Europe/Berlin';
  await api('POST', '/v1/me/push-subscriptions', token, {
    ...subscription('phone'),
    userAgent:
      'Mozilla/5.0 (Linux; Android 15; Pixel 9) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Mobile Safari/537.36',
  });
  await api('PUT', '/v1/me/notifications', token, {
    email: 'daily',
    push: 'immediate',
    slack: 'off',
    dailyAt: '08:30',
    timeZone: zone,
    quietHours: { from: '22:00', to: '07:00' },
  });
  await api('GET', '/v1/me', delegate); // a delegate is someone who signed in once
  const back = DateTime.now().setZone(zone).plus({ days: 12 }).set({ hour: 18, minute: 0, second: 0, millisecond: 0 });
  await api('PUT', '/v1/me/delegation', token, { to: 'bob', until: back.toUTC().toISO(), reason: 'On holiday' });

  const context = await browser.newContext({
    viewport: { width: 1200, height: 900 },
    colorScheme: 'light',
    timezoneId: zone,
    locale: 'en-GB',
  });
  await context.grantPermissions(['notifications'], { origin: new URL(url).origin });
  await context.addInitScript((t) => sessionStorage.setItem('tollgate.token', t), token);
  await context.addInitScript((sub) => {
    let current = null;
    PushManager.prototype.subscribe = async () =>
      (current = {
        endpoint: sub.endpoint,
        options: { applicationServerKey: null },
        toJSON: () => sub,
        unsubscribe: async () => true,
      });
    PushManager.prototype.getSubscription = async () => current;
  }, subscription('laptop'));
  const page = await context.newPage();
  await page.goto(`${url}/#/settings`);
  await page.getByTestId('push-enable').click();
  await page.getByTestId('push-state').filter({ hasText: 'This device: on' }).waitFor();
  await page.locator('tr', { hasText: '(this device)' }).waitFor();
  await page.getByTestId('reach').getByLabel('Email', { exact: true }).waitFor();
  await page.getByTestId('delegation-current').waitFor();
  await page.screenshot({ path: join(OUT, 'notifications.png'), fullPage: true });
  await context.close();
}

const onPath = (cmd) => (process.env.PATH || '').split(delimiter).some((d) => d && existsSync(join(d, cmd)));

/** An X display to run headed Chromium on: $DISPLAY, or an Xvfb of our own (`close` stops it). */
async function xDisplay(width, height) {
  if (process.env.DISPLAY) return { display: process.env.DISPLAY, close: () => {} };
  if (!onPath('Xvfb')) throw new Error('push-notification needs an X display: set DISPLAY, or apt-get install -y xvfb');
  const xvfb = spawn('Xvfb', ['-displayfd', '1', '-screen', '0', `${width}x${height}x24`, '-nolisten', 'tcp'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const display = await new Promise((resolve, reject) => {
    let out = '';
    xvfb.stdout.on('data', (c) => {
      out += c;
      if (out.includes('\n')) resolve(`:${out.trim()}`);
    });
    xvfb.on('exit', (code) => reject(new Error(`Xvfb exited (${code}) before it had a display`)));
  });
  return { display, close: () => xvfb.kill() };
}

/**
 * A push notification as Chromium shows it: Dana has push on in this browser (turned on in Settings, the subscription
 * on the stand-in) and the inbox open; deploy-bot asks to deploy billing; the server pushes the held call, and the
 * stand-in's plaintext goes to the service worker, which shows it with Approve and Reject over the inbox.
 */
async function pushNotification(url, admin, agent, dana, api) {
  const [width, height] = [1120, 720];
  await api('PUT', '/v1/policy', admin, {
    rules: [{ match: 'deploy', level: 'confirm', approvers: ['approver'], timeoutSeconds: 1800 }],
  });
  const push = await startPushStandIn();
  let x;
  let browser;
  try {
    x = await xDisplay(width, height);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: false,
      env: { ...process.env, DISPLAY: x.display },
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        // Chromium's own popups, with the actions as buttons, instead of a desktop notification daemon's.
        '--disable-features=NativeNotifications',
        '--window-position=0,0',
        `--window-size=${width},${height}`,
      ],
    });
    const context = await browser.newContext({ viewport: null, colorScheme: 'light', locale: 'en-GB' });
    await context.grantPermissions(['notifications'], { origin: new URL(url).origin });
    await context.addInitScript((t) => sessionStorage.setItem('tollgate.token', t), dana);
    await context.addInitScript((sub) => {
      // Chromium's push service is Google's: subscribing answers the stand-in's subscription instead.
      let current = null;
      PushManager.prototype.subscribe = async (o) =>
        (current = {
          endpoint: sub.endpoint,
          expirationTime: null,
          options: { userVisibleOnly: true, applicationServerKey: o.applicationServerKey },
          toJSON: () => sub,
          unsubscribe: async () => true,
        });
      PushManager.prototype.getSubscription = async () => current;
    }, push.subscription);
    const page = await context.newPage();
    await page.goto(`${url}/#/settings`);
    await page.getByTestId('push-enable').click();
    await page.getByTestId('push-state').filter({ hasText: 'This device: on' }).waitFor();
    await page.goto(`${url}/#/`);
    await page.locator('[data-testid="stream-state"]', { hasText: 'Live' }).waitFor();

    const cdp = await context.newCDPSession(page);
    const registrations = [];
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => registrations.push(...e.registrations));
    await cdp.send('ServiceWorker.enable');

    await api('POST', '/v1/conversations', agent, {
      id: 'conv-release',
      title: 'Release 2025.03',
      user: { id: 'lee', name: 'Lee Park', roles: ['engineer'] },
    });
    const held = await api('POST', '/v1/conversations/conv-release/tool-calls', agent, {
      toolCalls: [
        {
          toolName: 'deploy',
          arguments: { service: 'billing', env: 'production', version: '2025.03.2' },
          reason: 'Lee asked to ship the March release',
          display: { title: 'Deploy billing to production', summary: 'Ships release 2025.03.2 (14 commits).' },
        },
      ],
    });
    const id = held.toolCalls[0].id;
    await page.locator('.row-title', { hasText: 'Deploy billing to production' }).waitFor();
    const ask = await push.next((m) => m.kind === 'ask' && m.toolCallId === id);
    const scope = `${url}/`;
    const registration = registrations.find((r) => r.scopeURL === scope);
    if (!registration) throw new Error(`no service worker registration for ${scope}`);
    await cdp.send('ServiceWorker.deliverPushMessage', {
      origin: scope,
      registrationId: registration.registrationId,
      data: ask.text,
    });
    const worker = context.serviceWorkers().find((w) => w.url().endsWith('/sw.js'));
    if (!worker) throw new Error('the service worker is not running');
    for (let shown = []; shown.length === 0; await page.waitForTimeout(200)) {
      shown = await worker.evaluate(
        async (tag) =>
          (await self.registration.getNotifications({ tag }))
            .filter((n) => n.actions && n.actions.length === 2)
            .map((n) => n.title),
        `tollgate-call-${id}`,
      );
    }
    await page.mouse.move(20, height - 40); // off the card, whose link the X pointer (the screen's middle) may hover
    await page.waitForTimeout(1500); // the popup slides in, a link's status bubble fades
    mkdirSync(OUT, { recursive: true });
    // The screen's top left, where the window is: on an Xvfb of our own that is all of it.
    const crop = ['-crop', `${width}x${height}+0+0`, '+repage'];
    const png = execFileSync('import', ['-display', x.display, '-window', 'root', ...crop, 'png:-'], {
      maxBuffer: 64 * 1024 * 1024,
    });
    writeFileSync(join(OUT, 'push-notification.png'), png);
    await context.close();
  } finally {
    await browser?.close();
    x?.close();
    await push.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
