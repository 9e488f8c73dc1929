/**
 * A person the policy names (`person:<email>`) in the web inbox, in real headless Chromium against the real service:
 * with no approver role, the request reaches their inbox live, the card shows who may decide by name and not the
 * conversation's timeline, and they approve it; a link to the call once decided still opens its card, without the
 * conversation they may not read.
 */
import type { Browser, Page } from 'playwright-core';
import { client } from '../support/http';
import { describeBrowser, launchBrowser, openPage, waitLive, WatchedPage } from '../support/browser';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;
let browser: Browser;
let ann: WatchedPage;
let page: Page;
let agent: string;

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  http = client(server.url);
  agent = await server.token('support-bot', ['agent']);
  const admin = await server.token('root', ['admin']);
  const annToken = await server.token('u-ann', ['viewer'], { name: 'Ann', email: 'Ann@Example.com' });
  expect(
    (
      await http.put('/v1/policy', admin, {
        rules: [{ match: 'send_invoice', level: 'confirm', approvers: ['admin', 'person:ann@example.com'] }],
      })
    ).status,
  ).toBe(200);
  ann = await openPage(browser, { token: annToken });
  page = ann.page;
  await page.goto(`${server.url}/`);
  await waitLive(page);
}, 90_000); // a server and a browser starting on a busy 2-core machine

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

let n = 0;
async function pendingCall(title: string): Promise<{ id: string }> {
  const id = `conv-${++n}`;
  expect((await http.post('/v1/conversations', agent, { id, title: `Billing ${n}` })).status).toBe(201);
  const res = await http.post(`/v1/conversations/${id}/tool-calls`, agent, {
    toolCalls: [{ toolName: 'send_invoice', arguments: { amount: 120 }, display: { title } }],
  });
  expect(res.status).toBe(201);
  return res.body.toolCalls[0];
}

const row = (id: string) => page.locator(`li[data-call-id="${id}"]`);
const card = () => page.locator('dialog.card');

describeBrowser('a person the policy names, in the web inbox', () => {
  it('gets the request live, sees who may decide by name, and approves it', async () => {
    const call = await pendingCall('Invoice ACME');
    await row(call.id).getByText('Invoice ACME').waitFor();
    await row(call.id).locator('.row-main').click();
    await card().waitFor();
    const text = await card().innerText();
    expect(text).toMatch(/Who may decide\s+admin, ann@example\.com/);
    expect(text).toContain('Billing 1');
    // The conversation is not theirs to read: no timeline link to a page that would answer 404.
    expect(await card().getByRole('link', { name: 'timeline' }).count()).toBe(0);
    await card()
      .getByRole('button', { name: /^Approve/ })
      .click();
    await card().waitFor({ state: 'detached' });
    await row(call.id).getByText('approved by you via the web inbox').waitFor();
    const decided = await http.get(`/v1/tool-calls/${call.id}`, agent);
    expect(decided.body.decision).toMatchObject({ by: { id: 'u-ann', name: 'Ann', via: 'web' } });
  });

  it('opens the card of a call it decided from a link, without the conversation it may not read', async () => {
    const call = await pendingCall('Invoice Initech');
    await row(call.id).waitFor();
    expect((await http.post(`/v1/tool-calls/${call.id}/decision`, agent, { decision: 'approve' })).status).toBe(403);
    const admin = await server.token('root', ['admin']);
    expect((await http.post(`/v1/tool-calls/${call.id}/decision`, admin, { decision: 'approve' })).status).toBe(200);
    await row(call.id).waitFor({ state: 'detached' });
    await page.goto(`${server.url}/#/calls/${call.id}`);
    await card().waitFor();
    const text = await card().innerText();
    expect(text).toContain('Invoice Initech');
    expect(text).toContain('not shown to you (you are named on this call, not on its conversation)');
    expect(
      await card()
        .getByRole('button', { name: /^Approve/ })
        .count(),
    ).toBe(0);
    expect(ann.errors.filter((e) => !/404|403/.test(e))).toEqual([]);
  });
});
