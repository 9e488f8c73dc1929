/**
 * Reviewer timing from the web (issue 28, part 9, HITL-03), in real headless Chromium: the inbox listing a pending
 * call records no view of it (an open inbox is not a person reading each card); opening its card does, once, and
 * that view times the decision made on the card (GET /v1/audit/reviewers: no unviewed decision).
 */
import type { Browser, Page } from 'playwright-core';
import { client } from '../support/http';
import { describeBrowser, launchBrowser, openPage, waitLive } from '../support/browser';
import { startTestServer, TestServer } from '../support/server';
import { until } from '../support/wait';

let server: TestServer;
let http: ReturnType<typeof client>;
let browser: Browser;
let page: Page;
let agent: string;
let admin: string;
let auditor: string;

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  http = client(server.url);
  agent = await server.token('support-bot', ['agent']);
  admin = await server.token('root', ['admin'], { name: 'Root' });
  auditor = await server.token('audrey', ['auditor']);
  const ann = await server.token('ann', ['approver'], { name: 'Ann' });
  expect((await http.put('/v1/policy', admin, { rules: [{ match: '*', level: 'confirm' }] })).status).toBe(200);
  page = (await openPage(browser, { token: ann })).page;
  await page.goto(`${server.url}/`);
  await waitLive(page);
}, 90_000); // a server and a browser starting on a busy 2-core machine

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const viewsOf = async (callId: string): Promise<string[]> =>
  (await server.dataSource.query(`SELECT person_id FROM call_views WHERE call_id = $1`, [callId])).map(
    (r: { person_id: string }) => r.person_id,
  );

describeBrowser('when the web counts a card as seen', () => {
  it('not when the inbox lists the call; when its card opens, and that view times the decision', async () => {
    await http.post('/v1/conversations', agent, { id: 'seen-1', title: 'Seen' });
    const res = await http.post('/v1/conversations/seen-1/tool-calls', agent, {
      toolCalls: [{ toolName: 'send_email', arguments: { to: 'team@example.com' } }],
    });
    const call = res.body.toolCalls[0];
    const row = page.locator(`li[data-call-id="${call.id}"]`);
    await row.waitFor();
    expect(await viewsOf(call.id)).toEqual([]); // listed (and re-listed by the live inbox): no view

    await row.locator('.row-main').click();
    const card = page.locator('dialog.card');
    await card.waitFor();
    await until(async () => (await viewsOf(call.id)).length > 0, 10_000, 'the view recorded');
    expect(await viewsOf(call.id)).toEqual(['ann']);
    await card.getByRole('button', { name: /^Reject/ }).click();
    await card.getByLabel(/Why reject/).fill('not now');
    await card.getByRole('button', { name: /^Reject$/ }).click();
    await card.waitFor({ state: 'detached' });

    const reviewers = (await http.get('/v1/audit/reviewers', auditor)).body.reviewers;
    expect(reviewers).toEqual([
      expect.objectContaining({ personId: 'ann', decisions: 1, unviewedDecisions: 0, unviewedShare: 0 }),
    ]);
  });
});
