/**
 * The grants view of the web inbox in real headless Chromium against the real service: an always allow made on a
 * card with a lifetime shows up there; an approver revokes a conversation grant (asked twice) and the next call
 * waits again; a tenant-wide grant has no Revoke button for an approver, and has one for an admin.
 */
import type { Browser, Page } from 'playwright-core';
import { client } from '../support/http';
import { describeBrowser, launchBrowser, openPage, waitLive } from '../support/browser';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;
let browser: Browser;
let page: Page;
let agent: string;
let ann: string;
let admin: string;

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  http = client(server.url);
  agent = await server.token('support-bot', ['agent']);
  ann = await server.token('ann', ['approver'], { name: 'Ann' });
  admin = await server.token('root', ['admin'], { name: 'Root' });
  expect((await http.put('/v1/policy', admin, { rules: [{ match: '*', level: 'confirm' }] })).status).toBe(200);
  page = (await openPage(browser, { token: ann })).page;
  await page.goto(`${server.url}/`);
  await waitLive(page);
}, 90_000); // a server and a browser starting on a busy 2-core machine

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

let n = 0;
async function propose(toolName: string, conv = `conv-${++n}`): Promise<any> {
  await http.post('/v1/conversations', agent, { id: conv, title: `Conversation ${conv}` });
  const res = await http.post(`/v1/conversations/${conv}/tool-calls`, agent, {
    toolCalls: [{ toolName, arguments: { to: 'team@example.com' } }],
  });
  expect(res.status).toBe(201);
  return res.body.toolCalls[0];
}

const grantRow = (p: Page, id: string) => p.locator(`tr[data-grant-id="${id}"]`);

describeBrowser('the grants view', () => {
  it('lists an always allow made on a card, with the lifetime chosen there, and revokes it: the next call waits again', async () => {
    const call = await propose('send_email');
    expect(call.status).toBe('pending');
    await page.locator(`li[data-call-id="${call.id}"] .row-main`).click();
    const card = page.locator('dialog.card');
    await card.waitFor();
    await card.getByRole('button', { name: /^Always allow/ }).click();
    await card.getByLabel('Ends').selectOption({ label: 'after 1 hour' });
    await card.getByRole('button', { name: /^Always allow$/ }).click();
    await card.waitFor({ state: 'detached' });

    const [grant] = (await http.get('/v1/grants', admin)).body.items;
    expect(grant).toMatchObject({
      toolName: 'send_email',
      scope: 'conversation',
      conversationId: call.conversationId,
      createdBy: { id: 'ann', via: 'web' },
    });
    expect(Date.parse(grant.expiresAt) - Date.parse(grant.createdAt)).toBe(3600_000);

    await page.getByTestId('grants-toggle').click();
    const row = grantRow(page, grant.id);
    await row.getByText('send_email').waitFor();
    await row.getByText(/left$/).waitFor();
    await row.getByRole('button', { name: 'Revoke send_email' }).click();
    await row.getByRole('button', { name: /^Confirm revoke/ }).click(); // a revocation asks twice
    await page
      .getByTestId('grants-note')
      .getByText(/^Revoked: send_email/)
      .waitFor();
    await row.waitFor({ state: 'detached' });

    expect((await http.get('/v1/grants?status=revoked', admin)).body.items[0]).toMatchObject({
      id: grant.id,
      revokedBy: { id: 'ann', via: 'web' },
    });
    expect(await propose('send_email', call.conversationId)).toMatchObject({ status: 'pending' });
  });

  it('offers Revoke on a tenant-wide grant to an admin only', async () => {
    const call = await propose('deploy_app');
    expect(
      (await http.post(`/v1/tool-calls/${call.id}/decision`, admin, { decision: 'always_allow', scope: 'tenant' }))
        .status,
    ).toBe(200);
    const [grant] = (await http.get('/v1/grants?tool=deploy_app', admin)).body.items;

    // Ann's open view reads the list again when the live stream tells of the new grant.
    const annRow = grantRow(page, grant.id);
    await annRow.getByText('the whole tenant').waitFor();
    expect(await annRow.getByRole('button').count()).toBe(0);

    const root = (await openPage(browser, { token: admin })).page;
    await root.goto(`${server.url}/`);
    await waitLive(root);
    await root.getByTestId('grants-toggle').click();
    const rootRow = grantRow(root, grant.id);
    await rootRow.getByRole('button', { name: 'Revoke deploy_app' }).click();
    await rootRow.getByRole('button', { name: /^Confirm revoke/ }).click();
    await rootRow.waitFor({ state: 'detached' });
    await annRow.waitFor({ state: 'detached' }); // and Ann's view follows, live
    await root.context().close();
  });
});
