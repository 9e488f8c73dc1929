/**
 * Separation of duties and quorums in the web inbox, in real headless Chromium against the real service: a card
 * says "1 of 2 approvals" and who approved, an approval towards a quorum keeps the request listed (and the card
 * says it waits for more), and the end user of a conversation under `selfApproval: false` is told before trying
 * that they may not approve it, and is refused if they do.
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
let bob: string;

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  http = client(server.url);
  agent = await server.token('pay-bot', ['agent']);
  bob = await server.token('bob', ['approver'], { name: 'Bob' });
  const admin = await server.token('root', ['admin']);
  expect(
    (
      await http.put('/v1/policy', admin, {
        rules: [
          { match: 'pay_invoice', level: 'confirm', quorum: 2 },
          { match: 'wire_money', level: 'confirm', selfApproval: false, approvers: ['requester', 'approver'] },
        ],
      })
    ).status,
  ).toBe(200);
  const ann = await openPage(browser, { token: await server.token('ann', ['approver'], { name: 'Ann' }) });
  page = ann.page;
  await page.goto(`${server.url}/`);
  await waitLive(page);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

let n = 0;
async function pendingCall(toolName: string, user: Record<string, unknown> = { id: 'lee', name: 'Lee' }): Promise<any> {
  const id = `gov-web-${++n}`;
  expect((await http.post('/v1/conversations', agent, { id, title: `Payment ${n}`, user })).status).toBe(201);
  const res = await http.post(`/v1/conversations/${id}/tool-calls`, agent, {
    toolCalls: [{ toolName, arguments: { amount: 120 } }],
  });
  expect(res.body.toolCalls[0].status).toBe('pending');
  return res.body.toolCalls[0];
}

const row = (id: string) => page.locator(`li[data-call-id="${id}"]`);
const card = () => page.locator('dialog.card');

async function openCard(id: string): Promise<void> {
  await row(id).locator('.row-main').click();
  await card().waitFor();
}

describeBrowser('governance in the web inbox', () => {
  it('shows "0 of 2", keeps the request after Ann approves ("1 of 2", waiting for one more), and lets it go when Bob approves', async () => {
    const call = await pendingCall('pay_invoice');
    await row(call.id).waitFor();
    await openCard(call.id);
    await card().locator('[data-testid="quorum-badge"]', { hasText: '0 of 2 approvals' }).waitFor();
    await card()
      .getByRole('button', { name: /^Approve/ })
      .click();
    await card().waitFor({ state: 'detached' });

    // Still listed: the quorum is not reached. Reopened, the card says who approved and that it waits.
    await row(call.id).waitFor();
    await openCard(call.id);
    await card().locator('[data-testid="quorum"]', { hasText: '1 of 2: Ann' }).waitFor();
    await card().locator('[data-testid="quorum-mine"]', { hasText: 'waits for 1 more approval' }).waitFor();
    await page.keyboard.press('Escape');
    await card().waitFor({ state: 'detached' });

    const second = await http.post(`/v1/tool-calls/${call.id}/decision`, bob, { decision: 'approve' });
    expect(second.body.status).toBe('approved');
    await row(call.id).waitFor({ state: 'detached', timeout: 20_000 });
  });

  it("tells the conversation's end user they may not approve, and shows the server's refusal if they try", async () => {
    const call = await pendingCall('wire_money', { id: 'ann', name: 'Ann' });
    await row(call.id).waitFor();
    await openCard(call.id);
    await card().locator('[data-testid="self-approval"]', { hasText: 'separation of duties' }).waitFor();
    await card()
      .getByRole('button', { name: /^Approve/ })
      .click();
    await card()
      .getByText(/may not approve this call/)
      .waitFor();
    expect((await http.get(`/v1/tool-calls/${call.id}`, bob)).body.status).toBe('pending');
    await page.keyboard.press('Escape');
    await card().waitFor({ state: 'detached' });
  });

  it('approves a whole step from one card: asks twice, then every call of the step leaves the list', async () => {
    const id = `gov-web-step-${++n}`;
    expect((await http.post('/v1/conversations', agent, { id, title: 'Two emails', user: { id: 'lee' } })).status).toBe(
      201,
    );
    const res = await http.post(`/v1/conversations/${id}/tool-calls`, agent, {
      toolCalls: [
        { toolName: 'send_email', arguments: { to: 'a@example.com' } },
        { toolName: 'send_email', arguments: { to: 'b@example.com' } },
      ],
    });
    const [first, second] = res.body.toolCalls;
    await row(second.id).waitFor();
    await openCard(first.id);
    const stepActions = card().locator('[data-testid="step-actions"]');
    await stepActions.getByRole('button', { name: 'Approve all 2' }).click();
    await stepActions.getByRole('button', { name: 'Confirm: approve all 2' }).click();
    await card().locator('[data-testid="step-note"]', { hasText: '2 approved.' }).waitFor();
    expect((await http.get(`/v1/tool-calls/${second.id}`, bob)).body.decision).toMatchObject({
      outcome: 'approved',
      by: { id: 'ann', via: 'web' },
    });
    await page.keyboard.press('Escape');
    await row(second.id).waitFor({ state: 'detached', timeout: 20_000 });
  });

  it("shows an agent's question above the approvals; a click on a choice answers it and the agent gets the answer", async () => {
    await page.goto(`${server.url}/#/`); // the inbox, whatever an earlier test left open
    await card().waitFor({ state: 'detached' });
    const id = `gov-web-q-${++n}`;
    expect((await http.post('/v1/conversations', agent, { id, user: { id: 'lee' } })).status).toBe(201);
    const asked = await http.post(`/v1/conversations/${id}/questions`, agent, {
      text: 'Bill which account?',
      choices: ['ACME EU', 'ACME US'],
    });
    expect(asked.status).toBe(201);
    const waiting = http.get(`/v1/questions/${asked.body.id}?wait=30`, agent);
    const item = page.locator(`li[data-question-id="${asked.body.id}"]`);
    await item.waitFor();
    await item.getByRole('button', { name: 'ACME US' }).click();
    await page.locator('[data-testid="questions-note"]', { hasText: 'ACME US' }).waitFor();
    const answered = (await waiting).body;
    expect(answered).toMatchObject({ status: 'answered', answer: { text: 'ACME US', by: { id: 'ann', via: 'web' } } });
  });
});
