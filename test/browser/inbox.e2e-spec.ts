/**
 * The web inbox in real headless Chromium against the real service (CONTRACT §10, issue 5): sign in, see pending
 * requests live, read a card, approve / always allow / reject / edit, see decisions made elsewhere arrive, follow a
 * conversation's timeline, all with the keyboard and at phone width. One browser for the file; one server.
 */
import type { Browser, Page } from 'playwright-core';
import { client } from '../support/http';
import { describeBrowser, launchBrowser, openPage, tracked, waitLive, WatchedPage } from '../support/browser';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;
let browser: Browser;
let ann: WatchedPage; // approver, signed in by pasting her token in the first test
let page: Page;
let agent: string;
let annToken: string;
let bob: string;
let admin: string;

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  http = client(server.url);
  agent = await server.token('support-bot', ['agent']);
  annToken = await server.token('ann', ['approver'], { name: 'Ann' });
  bob = await server.token('bob', ['approver'], { name: 'Bob' });
  admin = await server.token('root', ['admin'], { name: 'Root' });
  expect(
    (
      await http.put('/v1/policy', admin, {
        rules: [
          { match: 'shell', level: 'manual' },
          { match: 'quick_check', level: 'confirm', timeoutSeconds: 3 },
          { match: 'get_*', level: 'automatic' },
        ],
      })
    ).status,
  ).toBe(200);
  expect(
    (await http.put('/v1/tools/delete_source', admin, { description: 'Delete a knowledge source', destructive: true }))
      .status,
  ).toBe(201);
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
/** A fresh conversation with one pending call; returns the call as the API answered it. */
async function pendingCall(call: Record<string, unknown> = {}, conv: Record<string, unknown> = {}): Promise<any> {
  const id = `conv-${++n}`;
  expect(
    (
      await http.post('/v1/conversations', agent, {
        id,
        title: `Conversation ${n}`,
        user: { id: 'lee', name: 'Lee Park', roles: ['editor'] },
        ...conv,
      })
    ).status,
  ).toBe(201);
  const res = await http.post(`/v1/conversations/${id}/tool-calls`, agent, {
    toolCalls: [{ toolName: 'send_email', arguments: { to: 'team@example.com' }, ...call }],
  });
  expect(res.status).toBe(201);
  const pending = res.body.toolCalls.find((c: any) => c.status === 'pending');
  expect(pending).toBeDefined();
  return pending;
}

const row = (id: string) => page.locator(`li[data-call-id="${id}"]`);
const card = () => page.locator('dialog.card');
const button = (name: RegExp) => card().getByRole('button', { name });

async function openCard(id: string): Promise<void> {
  await row(id).locator('.row-main').click();
  await card().waitFor();
}

async function closeCard(): Promise<void> {
  await page.keyboard.press('Escape');
  await card().waitFor({ state: 'detached' });
}

async function announced(text: string): Promise<void> {
  await page.locator('[data-testid="announcer"]', { hasText: text }).waitFor({ state: 'attached' });
}

describeBrowser('the web inbox', () => {
  it('signs in with a pasted token and lists what the person may decide', async () => {
    const waiting = await pendingCall({
      display: { title: 'Send the weekly report', summary: 'Email the weekly report to team@example.com' },
    });
    const fresh = await openPage(browser);
    await fresh.page.goto(`${server.url}/`);
    await fresh.page.getByLabel('Bearer token').fill(annToken);
    await fresh.page.getByRole('button', { name: 'Sign in' }).click();
    await fresh.page.getByRole('heading', { name: /Waiting for you/ }).waitFor();
    await waitLive(fresh.page);
    await fresh.page.locator(`li[data-call-id="${waiting.id}"]`).getByText('Send the weekly report').waitFor();
    expect(await fresh.page.locator('.topbar').innerText()).toMatch(/Ann\s+approver · default/);
    expect(await fresh.page.getByTestId('dev-sign-in').count()).toBe(0);
    await fresh.context.close();
    await row(waiting.id).waitFor(); // and the page that was open all along has it too
  });

  it('shows a new request live, without reloading, and announces it', async () => {
    await page.evaluate(() => ((window as any).__sameDocument = true));
    const call = await pendingCall({
      toolName: 'create_invoice',
      arguments: { amount: 120 },
      display: { title: 'Create invoice' },
    });
    await row(call.id).getByText('Create invoice').waitFor();
    await announced('New request: Create invoice from support-bot');
    expect(await page.evaluate(() => (window as any).__sameDocument)).toBe(true);
  });

  it('opens a card with everything needed to judge the request', async () => {
    const call = await pendingCall(
      {
        toolName: 'delete_source',
        arguments: { id: 'src_2', cascade: true },
        reason: 'the user asked to delete it',
        confidence: 0.9,
        display: {
          title: 'Delete source',
          summary: "Delete source 'Handbook' (src_2) — 1,204 objects. This cannot be undone.",
          fields: [{ label: 'Objects', value: '1,204' }],
        },
      },
      { title: 'Tidy the knowledge base', user: { id: 'lee', name: 'Lee Park', roles: ['editor'] } },
    );
    await openCard(call.id);
    const text = await card().innerText();
    expect(text).toContain('Delete source');
    expect(text).toContain('delete_source');
    expect(text).toContain("Delete source 'Handbook' (src_2) — 1,204 objects. This cannot be undone.");
    expect(text).toMatch(/Objects\s+1,204/);
    expect(text).toMatch(/Agent\s+support-bot/);
    expect(text).toContain('Tidy the knowledge base');
    expect(text).toMatch(/End user\s+Lee Park \(lee\) · editor/);
    expect(text).toContain('the user asked to delete it');
    expect(text).toMatch(/Policy\s+Confirm — a person must approve \(no rule matched · policy v1\)/);
    expect(text).toContain('Tool flags: destructive → confirm');
    expect(text).toContain('destructive');
    expect(text).toMatch(/Time left\s+\d+ min \d\d s left/);
    expect(JSON.parse(await card().getByTestId('arguments').innerText())).toEqual({ id: 'src_2', cascade: true });
    await closeCard();
  });

  it("approves from the page, and the agent's long-poll returns with the decision", async () => {
    const call = await pendingCall({ display: { title: 'Email the customer' } });
    const wait = tracked(http.get(`/v1/tool-calls/${call.id}?wait=30`, agent));
    await openCard(call.id);
    expect(wait.settled()).toBe(false);
    await button(/^Approve/).click();
    const answered = await wait.promise;
    expect(answered.status).toBe(200);
    expect(answered.body.status).toBe('approved');
    expect(answered.body.decision).toMatchObject({ outcome: 'approved', by: { id: 'ann', name: 'Ann', via: 'web' } });
    await card().waitFor({ state: 'detached' });
    await row(call.id).getByText('approved by you via the web inbox').waitFor();
    await page.getByTestId('recent').getByText('approved by you via the web inbox').first().waitFor();
  });

  it('shows a decision made elsewhere live, with who decided where, in the list and in an open card', async () => {
    const listed = await pendingCall({ display: { title: 'Decided on the CLI' } });
    const opened = await pendingCall({ display: { title: 'Rejected while open' } });
    await row(opened.id).waitFor(); // both are on the page before anyone decides
    await row(listed.id).waitFor();
    expect(
      (
        await http.post(
          `/v1/tool-calls/${listed.id}/decision`,
          bob,
          { decision: 'approve' },
          { 'x-tollgate-channel': 'cli' },
        )
      ).status,
    ).toBe(200);
    await row(listed.id).getByTestId('row-note').getByText('approved by Bob via the CLI').waitFor();
    await announced('Decided on the CLI: approved by Bob via the CLI');
    await row(listed.id).waitFor({ state: 'detached' }); // it leaves the list after its note has been shown

    await openCard(opened.id);
    expect(
      (await http.post(`/v1/tool-calls/${opened.id}/decision`, bob, { decision: 'reject', reason: 'wrong customer' }))
        .status,
    ).toBe(200);
    await card().getByTestId('card-departure').getByText('rejected by Bob via the API: wrong customer').waitFor();
    expect(await button(/^Approve/).count()).toBe(0);
    await closeCard();
  });

  it('rejects with a reason', async () => {
    const call = await pendingCall({ display: { title: 'Refund order 88' } });
    await openCard(call.id);
    await button(/^Reject/).click();
    const submit = button(/^Reject$/);
    expect(await submit.isDisabled()).toBe(true); // a reason is asked for
    await card()
      .getByLabel(/Why reject/)
      .fill('The order was already refunded');
    await submit.click();
    await card().waitFor({ state: 'detached' });
    const read = await http.get(`/v1/tool-calls/${call.id}`, admin);
    expect(read.body).toMatchObject({
      status: 'rejected',
      decision: { outcome: 'rejected', reason: 'The order was already refunded', by: { id: 'ann', via: 'web' } },
    });
    await row(call.id).getByText('rejected by you via the web inbox: The order was already refunded').waitFor();
  });

  it('edits the arguments in a JSON editor that refuses invalid JSON, and a destructive call asks for a second click', async () => {
    const call = await pendingCall({
      toolName: 'delete_source',
      arguments: { id: 'src_9' },
      display: { title: 'Delete source 9' },
    });
    await openCard(call.id);
    await button(/^Edit arguments/).click();
    const editor = card().getByLabel(/Arguments to run instead/);
    const approve = button(/Approve with these arguments/);
    await editor.fill('{"id": "src_9", ');
    await card()
      .getByTestId('json-status')
      .getByText(/Not valid JSON/)
      .waitFor();
    expect(await approve.isDisabled()).toBe(true);
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    await editor.fill('["src_9"]');
    await card().getByTestId('json-status').getByText('The arguments must be a JSON object').waitFor();
    await editor.fill('{"id": "src_9", "dryRun": true}');
    await card().getByTestId('json-status').getByText('Valid JSON.').waitFor();
    await approve.click();
    await card().getByText('Destructive: press again to confirm.').waitFor();
    expect((await http.get(`/v1/tool-calls/${call.id}`, admin)).body.status).toBe('pending'); // one click decides nothing
    await button(/Confirm approve with these arguments/).click();
    await card().waitFor({ state: 'detached' });
    const read = await http.get(`/v1/tool-calls/${call.id}`, admin);
    expect(read.body).toMatchObject({
      status: 'approved',
      arguments: { id: 'src_9' },
      decision: { editedArguments: { id: 'src_9', dryRun: true }, by: { via: 'web' } },
    });
    await row(call.id).getByText('approved with edited arguments by you via the web inbox').waitFor();
  });

  // An approver grants for the conversation at most (agent and tenant scopes are for admins).
  it('always allows in the chosen scope: the next call of that tool in the conversation runs without asking', async () => {
    const call = await pendingCall({
      toolName: 'post_update',
      arguments: { text: 'hello' },
      display: { title: 'Post an update' },
    });
    await openCard(call.id);
    await button(/^Always allow/).click();
    await card()
      .getByLabel(/in this conversation/)
      .check();
    // Wider scopes are not offered: the server would refuse them to an approver with 403.
    expect(
      await card()
        .getByLabel(/in any conversation|any agent of this tenant/)
        .count(),
    ).toBe(0);
    await button(/^Always allow$/).click();
    await card().waitFor({ state: 'detached' });
    await row(call.id).getByText('always allowed by you via the web inbox').waitFor();
    const next = await http.post(`/v1/conversations/${call.conversationId}/tool-calls`, agent, {
      toolCalls: [{ toolName: 'post_update', arguments: { text: 'again' } }],
    });
    expect(next.body.toolCalls[0]).toMatchObject({ status: 'approved', decision: { by: { via: 'policy' } } });
  });

  it('works with the keyboard alone: j/k move, Enter opens, a approves (twice for manual level), Esc closes', async () => {
    await page.goto(`${server.url}/#/`);
    await waitLive(page);
    const first = await pendingCall({ display: { title: 'Keyboard one' } });
    const manual = await pendingCall({
      toolName: 'shell',
      arguments: { cmd: 'ls' },
      display: { title: 'Keyboard manual' },
    });
    await row(manual.id).waitFor();
    const pendingIds = await page
      .locator('li.row:not(.left)')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-call-id')));
    const focusedId = () => page.evaluate(() => document.activeElement?.closest('li')?.getAttribute('data-call-id'));
    const focusOn = (id: string) =>
      page.waitForFunction((want) => document.activeElement?.closest('li')?.getAttribute('data-call-id') === want, id);

    await page.locator('body').press('j'); // selects and focuses the next row
    const start = await focusedId();
    expect(pendingIds).toContain(start);
    for (let i = 0; i < pendingIds.length; i++) await page.keyboard.press('j');
    expect(await focusedId()).toBe(pendingIds[pendingIds.length - 1]);
    await page.keyboard.press('k');
    expect(await focusedId()).toBe(pendingIds[pendingIds.length - 2]);
    await page.keyboard.press('ArrowDown');
    expect(await focusedId()).toBe(manual.id); // the newest is last: oldest first

    await page.keyboard.press('Enter');
    await card().getByRole('heading', { name: 'Keyboard manual' }).waitFor();
    await page.keyboard.press('a');
    await card().getByText('Manual level: press again to confirm.').waitFor();
    await page.keyboard.press('a');
    await card().waitFor({ state: 'detached' });
    expect((await http.get(`/v1/tool-calls/${manual.id}`, admin)).body.decision).toMatchObject({
      outcome: 'approved',
      by: { id: 'ann', via: 'web' },
    });

    // Focus is back on the list; the row that took the decided one's place is selected.
    await focusOn(first.id);
    await page.keyboard.press('Enter');
    await card().getByRole('heading', { name: 'Keyboard one' }).waitFor();
    await page.keyboard.press('Escape');
    await card().waitFor({ state: 'detached' });
    await focusOn(first.id); // back on the row the card was opened from
    await page.keyboard.press('Enter');
    await card().waitFor();
    await page.keyboard.press('a'); // not destructive, not manual: one press
    await card().waitFor({ state: 'detached' });
    expect((await http.get(`/v1/tool-calls/${first.id}`, admin)).body.status).toBe('approved');
    expect(await page.locator('footer').innerText()).toMatch(
      /j\s*\/\s*k.*move.*Enter\s+open.*a\s+approve.*r\s+reject.*Esc\s+close/s,
    );
  });

  it('lets an expired request leave with a note', async () => {
    const call = await pendingCall({ toolName: 'quick_check', arguments: {}, display: { title: 'Quick check' } });
    await row(call.id).waitFor();
    await row(call.id)
      .getByText(/expired after \d s without a decision/)
      .waitFor();
  });

  it("opens a conversation's timeline: every call, who decided, when, how long it waited", async () => {
    expect(
      (
        await http.post('/v1/conversations', agent, {
          id: 'conv-story',
          title: 'Tidy the wiki',
          user: { id: 'lee', name: 'Lee Park' },
        })
      ).status,
    ).toBe(201);
    const step1 = await http.post('/v1/conversations/conv-story/tool-calls', agent, {
      toolCalls: [
        { toolName: 'get_page', arguments: { id: 1 } },
        { toolName: 'archive_page', arguments: { id: 1 }, display: { title: 'Archive page 1' } },
      ],
    });
    const archived = step1.body.toolCalls[1];
    expect(
      (
        await http.post(
          `/v1/tool-calls/${archived.id}/decision`,
          bob,
          { decision: 'approve' },
          { 'x-tollgate-channel': 'cli' },
        )
      ).status,
    ).toBe(200);
    const step2 = await http.post('/v1/conversations/conv-story/tool-calls', agent, {
      toolCalls: [{ toolName: 'rename_page', arguments: { id: 2 }, display: { title: 'Rename page 2' } }],
    });
    const renaming = step2.body.toolCalls[0];

    await row(renaming.id).waitFor();
    await openCard(renaming.id);
    await page.keyboard.press('t');
    await page.getByRole('heading', { name: 'Tidy the wiki' }).waitFor();
    const steps = page.getByTestId('timeline').locator('li');
    expect(await steps.count()).toBe(3);
    const step = (text: string) => steps.filter({ hasText: text });
    expect(await step('get_page').innerText()).toMatch(/approved[\s\S]*Approved by policy/);
    expect(await step('Archive page 1').innerText()).toMatch(
      /Approved by Bob via the CLI at \d\d:\d\d:\d\d · waited \d+ s/,
    );
    expect(await steps.nth(2).innerText()).toMatch(
      /Rename page 2[\s\S]*pending[\s\S]*Waiting for a person for \d+ s · \d+ min \d\d s left/,
    ); // the later step comes last
    await page.getByText('open to auditors and admins').waitFor(); // an approver does not read the audit trail

    // Live: deciding elsewhere updates the open timeline.
    expect(
      (await http.post(`/v1/tool-calls/${renaming.id}/decision`, bob, { decision: 'reject', reason: 'keep the name' }))
        .status,
    ).toBe(200);
    await steps.nth(2).getByText('Rejected by Bob via the API: keep the name').waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('heading', { name: /Waiting for you/ }).waitFor();

    // An admin also gets the conversation's audit trail.
    const root = await openPage(browser, { token: admin });
    await root.page.goto(`${server.url}/#/conversations/conv-story`);
    const audit = root.page.locator('table.audit');
    await audit.waitFor();
    expect(await audit.innerText()).toMatch(
      /ConversationStarted[\s\S]*ToolCallAutoApproved[\s\S]*ToolCallApproved\s+archive_page\s+Bob via cli[\s\S]*ToolCallRejected/,
    );
    await root.context.close();
  });

  it('reads well at phone width: nothing scrolls sideways and the card fills the screen', async () => {
    const phone = await openPage(browser, { token: annToken, width: 390, height: 844 });
    const call = await pendingCall({
      display: {
        title: 'A request with a long summary',
        summary: 'x'.repeat(30) + ' ' + 'a-very-long-unbroken-identifier-'.repeat(6),
      },
    });
    await phone.page.goto(`${server.url}/`);
    await phone.page.locator(`li[data-call-id="${call.id}"]`).waitFor();
    const overflow = () =>
      phone.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await phone.page.locator(`li[data-call-id="${call.id}"] .row-main`).click();
    const box = await phone.page.locator('dialog.card').boundingBox();
    expect(box!.width).toBeLessThanOrEqual(390);
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(await phone.page.getByRole('button', { name: /^Approve/ }).isVisible()).toBe(true);
    await phone.page.screenshot({ path: `${server.db.dataDir}/phone.png`, fullPage: true }); // renders without error
    await phone.context.close();
  });

  it('needed no other origin, and broke no Content-Security-Policy rule', () => {
    const foreign = ann.requests.filter((u) => !u.startsWith(server.url) && !u.startsWith('data:'));
    expect(foreign).toEqual([]);
    expect(ann.errors.filter((e) => /Content Security Policy|Refused to/i.test(e))).toEqual([]);
  });
});
