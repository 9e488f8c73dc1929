/**
 * A `notify` call in the web inbox (headless Chromium against the real service): it never waits for anyone, and
 * the people its rule names — by role, or the requester — see it in the recent feed as it happens.
 */
import type { Browser } from 'playwright-core';
import { client } from '../support/http';
import { describeBrowser, launchBrowser, openPage, waitLive, WatchedPage } from '../support/browser';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;
let browser: Browser;
let ann: WatchedPage; // approver: told by the notify rule
let root: WatchedPage; // admin: not named by it
let agent: string;

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  http = client(server.url);
  agent = await server.token('support-bot', ['agent']);
  const admin = await server.token('root', ['admin'], { name: 'Root' });
  expect(
    (
      await http.put('/v1/policy', admin, {
        rules: [{ match: 'send_email', level: 'notify', approvers: ['approver'] }],
      })
    ).status,
  ).toBe(200);
  ann = await openPage(browser, { token: await server.token('ann', ['approver'], { name: 'Ann' }) });
  root = await openPage(browser, { token: admin });
  await Promise.all(
    [ann, root].map(async (p) => {
      await p.page.goto(`${server.url}/`);
      await waitLive(p.page);
    }),
  );
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describeBrowser('notify calls in the web inbox', () => {
  it('shows the FYI in the recent feed of a person the rule names, and not in the queue', async () => {
    expect(
      (await http.post('/v1/conversations', agent, { id: 'fyi-1', user: { id: 'lee', name: 'Lee' } })).status,
    ).toBe(201);
    const res = await http.post('/v1/conversations/fyi-1/tool-calls', agent, {
      toolCalls: [
        {
          toolName: 'send_email',
          arguments: { to: 'team@example.com' },
          display: { title: 'Email the weekly report' },
        },
      ],
    });
    const call = res.body.toolCalls[0];
    expect(call).toMatchObject({ status: 'approved', policy: { level: 'notify' } });

    const entry = ann.page.getByTestId('recent').locator('li[data-outcome="notified"]', { hasText: 'send_email' });
    await entry.waitFor();
    expect(await entry.innerText()).toMatch(/send_email\s+ran at once, you are told \(policy rule 0\)/);
    expect(await entry.locator('a').getAttribute('href')).toContain(call.id);
    await ann.page
      .locator('[data-testid="announcer"]', { hasText: 'ran at once, you are told' })
      .waitFor({ state: 'attached' });
    expect(await ann.page.getByTestId('pending-count').innerText()).toBe('0');

    // The admin's page had the same stream, but the rule does not name admins: a later call marks the moment.
    expect((await http.post('/v1/conversations', agent, { id: 'fyi-2' })).status).toBe(201);
    const held = await http.post('/v1/conversations/fyi-2/tool-calls', agent, {
      toolCalls: [{ toolName: 'deploy', arguments: {} }],
    });
    await root.page.locator(`li[data-call-id="${held.body.toolCalls[0].id}"]`).waitFor();
    expect(await root.page.locator('li[data-outcome="notified"]').count()).toBe(0);
  });
});
