#!/usr/bin/env node
'use strict';
/**
 * Screenshots of the web inbox for the README (`npm run screenshots`): starts the built service on a scratch
 * embedded database, plays a few agents' requests into it, and photographs the page in headless Chromium.
 * Writes docs/img/inbox.png, card.png, phone.png and timeline.png (`inbox`), and notifications.png (`notifications`:
 * the whole Settings page): all of them, or the groups named (`node scripts/screenshots.js notifications`). Needs
 * /usr/bin/chromium (CHROMIUM_PATH).
 */
const { mkdtempSync, rmSync, mkdirSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { createECDH, randomBytes } = require('node:crypto');
const { chromium } = require('playwright-core');
const { DateTime } = require('luxon');
const { startServer } = require('../dist/src/server');
const { loadConfig } = require('../dist/src/infrastructure/config/config');
const { mintToken } = require('../dist/src/infrastructure/auth/jwt-verifier');

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
    const api = async (method, path, tok, body, headers = {}) => {
      const res = await fetch(server.url + path, {
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

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
