/**
 * Schema-driven review and previews bound to the approval (issue 28, parts 2 and 3), end to end against the real
 * service and real Chromium: a tool registers its input schema; the agent proposes with a preview; the call view
 * and the web card show the preview (escaped); the card edits in a form made from the schema and the server refuses
 * an edit that does not conform; approve, claim, and the receipt's `preview` claim passes verifyReceipt with the same
 * preview and is refused with a changed one.
 */
import { previewDigest, ReceiptVerificationError, verifyReceipt } from '@tollgate/sdk';
import type { Browser, Page } from 'playwright-core';
import { describeBrowser, launchBrowser, openPage, waitLive, WatchedPage } from '../support/browser';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;
let browser: Browser;
let ann: WatchedPage;
let page: Page;
let agent: string;
let annToken: string;
let admin: string;
let auditor: string;

const SCHEMA = {
  type: 'object',
  properties: {
    vendor: { type: 'string', title: 'Vendor', minLength: 1 },
    amount: { type: 'number', minimum: 0, maximum: 1000, description: 'Euros, at most 1,000' },
    currency: { enum: ['EUR', 'USD'] },
    urgent: { type: 'boolean' },
    memo: { type: 'object', properties: { note: { type: 'string' } } },
    tags: { type: 'array', items: { type: 'string' } },
    lines: { type: 'array', items: { type: 'object' } },
  },
  required: ['vendor', 'amount'],
};

const DIFF = [
  '--- a/config.yaml',
  '+++ b/config.yaml',
  '@@ -1,2 +1,2 @@',
  ' name: prod',
  '-replicas: 2',
  '+replicas: 0 <script>alert(1)</script>',
].join('\n');

const PREVIEW = { kind: 'diff' as const, title: 'Scale prod down', content: DIFF };

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer(), launchBrowser()]);
  http = client(server.url);
  agent = await server.token('pay-bot', ['agent']);
  annToken = await server.token('ann', ['approver'], { name: 'Ann' });
  admin = await server.token('root', ['admin'], { name: 'Root' });
  auditor = await server.token('audrey', ['auditor']);
  ann = await openPage(browser, { token: annToken });
  page = ann.page;
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

let n = 0;
async function propose(call: Record<string, unknown>): Promise<any> {
  const id = `rp-${++n}`;
  expect((await http.post('/v1/conversations', agent, { id, title: `Payment ${n}` })).status).toBe(201);
  const res = await http.post(`/v1/conversations/${id}/tool-calls`, agent, {
    toolCalls: [{ toolName: 'pay_vendor', arguments: { vendor: 'ACME', amount: 120, currency: 'EUR' }, ...call }],
  });
  return res;
}

describe('a tool input schema', () => {
  it('is registered, checked to be a JSON Schema, and shown with the tool', async () => {
    const bad = await http.put('/v1/tools/pay_vendor', admin, {
      requiresApproval: true,
      inputSchema: { type: 'objectx' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('input_schema_invalid');
    expect(bad.body.errors.length).toBeGreaterThan(0);
    const remote = await http.put('/v1/tools/pay_vendor', admin, {
      requiresApproval: true,
      inputSchema: { $ref: 'https://example.com/schema.json' },
    });
    expect(remote.status).toBe(400);
    expect(remote.body.code).toBe('input_schema_invalid');
    // 33 levels of `not`: deeper than a schema may nest (32), well within what a request body may.
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 33; i++) deep = { not: deep };
    const tooDeep = await http.put('/v1/tools/pay_vendor', admin, { inputSchema: deep });
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.code).toBe('input_schema_invalid');
    const ok = await http.put('/v1/tools/pay_vendor', admin, { requiresApproval: true, inputSchema: SCHEMA });
    expect(ok.status).toBe(201);
    expect(ok.body.inputSchema).toEqual(SCHEMA);
    expect((await http.get('/v1/tools/pay_vendor', admin)).body.inputSchema).toEqual(SCHEMA);
  });

  it('does not refuse a proposal (the schema is for review), but refuses an edit that does not conform', async () => {
    const res = await propose({ arguments: { vendor: '', amount: 'lots' } });
    expect(res.status).toBe(201);
    const call = res.body.toolCalls[0];
    expect(call.status).toBe('pending');
    const edit = await http.post(`/v1/tool-calls/${call.id}/decision`, annToken, {
      decision: 'approve',
      arguments: { vendor: 'ACME', amount: 5000, currency: 'GBP' },
    });
    expect(edit.status).toBe(400);
    expect(edit.body.code).toBe('arguments_invalid');
    expect(edit.body.errors).toEqual(
      expect.arrayContaining([
        { path: '/amount', message: expect.stringMatching(/<= 1000/) },
        { path: '/currency', message: expect.stringMatching(/EUR/) },
      ]),
    );
    // Still pending: nothing was recorded.
    expect((await http.get(`/v1/tool-calls/${call.id}`, annToken)).body.status).toBe('pending');
    // A rejection, and a plain approval of the proposal as it is, are not edits: not checked.
    expect(
      (await http.post(`/v1/tool-calls/${call.id}/decision`, annToken, { decision: 'reject', reason: 'no' })).status,
    ).toBe(200);
  });
});

describe('a preview', () => {
  it('is bounded and checked: an image is a data: URL of the image it says, never a link', async () => {
    const link = await propose({ preview: { kind: 'image', content: 'https://example.com/x.png' } });
    expect(link.status).toBe(400);
    expect(link.body.errors).toEqual([expect.objectContaining({ path: 'toolCalls[0].preview.content' })]);
    const rows = await propose({ preview: { kind: 'text', content: 'x', estimatedRows: 3 } });
    expect(rows.status).toBe(400);
    const kind = await propose({ preview: { kind: 'html', content: '<b>x</b>' } });
    expect(kind.status).toBe(400);
  });

  describeBrowser('shown on the card, bound to the receipt', () => {
    it('goes from proposal to receipt: shown, edited in a form, approved, claimed, verified', async () => {
      const res = await propose({ preview: PREVIEW });
      expect(res.status).toBe(201);
      const call = res.body.toolCalls[0];
      const digest = await previewDigest(PREVIEW);
      expect(call.preview).toEqual({ ...PREVIEW, digest });
      expect((await http.get(`/v1/tool-calls/${call.id}`, annToken)).body.preview).toEqual({ ...PREVIEW, digest });

      await page.goto(`${server.url}/#/calls/${call.id}`);
      await waitLive(page);
      const card = page.locator('dialog.card');
      await card.getByTestId('preview').waitFor();
      expect(await card.getByTestId('preview').locator('h3').innerText()).toMatch(/Preview: Scale prod down/);
      const diff = card.getByTestId('preview-diff');
      expect(await diff.locator('.diff-del').innerText()).toBe('-replicas: 2\n');
      expect(await diff.locator('.diff-add').innerText()).toBe('+replicas: 0 <script>alert(1)</script>\n');
      expect(await diff.locator('.diff-hunk').count()).toBe(1);
      // The agent's markup is text: no element was made of it.
      expect(await card.locator('script').count()).toBe(0);
      expect(await card.getByTestId('preview-digest').innerText()).toContain(digest.slice(0, 12));

      // Edit in the form the schema makes: a number field, an enum as a select, a boolean, a nested object.
      await card.getByRole('button', { name: /Edit arguments/ }).click();
      const form = card.getByTestId('schema-form');
      await form.waitFor();
      expect(await form.getByLabel('Vendor').inputValue()).toBe('ACME');
      expect(await form.locator('select').first().inputValue()).not.toBe('');
      expect(await form.locator('fieldset legend', { hasText: 'memo' }).count()).toBe(1);
      // An array of objects is not a form field: it keeps a JSON editor of its own.
      expect(await form.getByText('(JSON)').count()).toBe(1);
      await form.getByLabel('amount').fill('5000');
      await card.getByRole('button', { name: /Approve with these arguments/ }).click();
      await card.getByTestId('fault-/amount').waitFor();
      expect(await card.getByTestId('fault-/amount').innerText()).toMatch(/<= 1000/);
      // The refusal was a 400 the browser logs: the one console error expected here.
      expect(ann.errors).toEqual([expect.stringMatching(/status of 400/)]);
      ann.errors.length = 0;
      await form.getByLabel('amount').fill('500');
      await form.getByLabel('urgent').check();
      await card.getByRole('button', { name: /Approve with these arguments/ }).click();
      await card.waitFor({ state: 'detached' });

      const decided = (await http.get(`/v1/tool-calls/${call.id}`, annToken)).body;
      expect(decided.status).toBe('approved');
      expect(decided.decision.editedArguments).toEqual({ vendor: 'ACME', amount: 500, currency: 'EUR', urgent: true });

      // The decision records the digest of what the person saw.
      const events = (await http.get(`/v1/audit/events?toolCallId=${call.id}`, auditor)).body.events;
      const proposed = events.find((e: any) => e.type === 'ToolCallProposed');
      const approved = events.find((e: any) => e.type === 'ToolCallApproved');
      expect(proposed.data.preview).toEqual({ ...PREVIEW, digest });
      expect(approved.data.preview).toBe(digest);

      // Claimed: the receipt carries the preview's digest, and verifyReceipt compares it.
      const claim = await http.post(`/v1/tool-calls/${call.id}/execution`, agent);
      expect(claim.status).toBe(200);
      const jwks = (await http.get('/.well-known/jwks.json')).body;
      const check = (preview?: unknown) =>
        verifyReceipt(claim.body.receipt, {
          jwks,
          tenant: 'default',
          toolName: 'pay_vendor',
          arguments: claim.body.arguments,
          ...(preview !== undefined ? { preview: preview as never } : {}),
        });
      expect(await check(PREVIEW)).toMatchObject({ tcid: call.id, preview: digest });
      // The same preview written in another key order is the same preview.
      expect(await check({ content: DIFF, title: 'Scale prod down', kind: 'diff' })).toMatchObject({ preview: digest });
      const changed = check({ ...PREVIEW, content: DIFF.replace('replicas: 0', 'replicas: 1') });
      await expect(changed).rejects.toBeInstanceOf(ReceiptVerificationError);
      await expect(changed).rejects.toMatchObject({ code: 'receipt_mismatch' });
      await expect(check({ ...PREVIEW, kind: 'text' })).rejects.toMatchObject({ code: 'receipt_mismatch' });
      expect(ann.errors).toEqual([]);
    });

    it('refuses a preview given for a receipt that has none', async () => {
      const res = await propose({});
      const call = res.body.toolCalls[0];
      expect((await http.post(`/v1/tool-calls/${call.id}/decision`, annToken, { decision: 'approve' })).status).toBe(
        200,
      );
      const claim = await http.post(`/v1/tool-calls/${call.id}/execution`, agent);
      const jwks = (await http.get('/.well-known/jwks.json')).body;
      const opts = { jwks, tenant: 'default', toolName: 'pay_vendor', arguments: claim.body.arguments };
      expect((await verifyReceipt(claim.body.receipt, opts)).preview).toBeUndefined();
      await expect(verifyReceipt(claim.body.receipt, { ...opts, preview: PREVIEW })).rejects.toMatchObject({
        code: 'receipt_mismatch',
      });
    });

    it('shows SQL with its estimated rows, an email as a message, and an image inline', async () => {
      const png =
        'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
      const sql = (
        await propose({ preview: { kind: 'sql', content: 'DELETE FROM invoices WHERE paid', estimatedRows: 1234 } })
      ).body.toolCalls[0];
      const mail = (
        await propose({
          preview: {
            kind: 'email',
            content: 'Hello <b>team</b>,\nthe invoice is paid.',
            email: { to: 'team@example.com', subject: 'Paid <i>now</i>' },
          },
        })
      ).body.toolCalls[0];
      const image = (await propose({ preview: { kind: 'image', title: 'Chart', content: png } })).body.toolCalls[0];
      const card = page.locator('dialog.card');

      await page.goto(`${server.url}/#/calls/${sql.id}`);
      await card.getByTestId('preview-sql').waitFor();
      expect(await card.getByTestId('preview-sql').innerText()).toBe('DELETE FROM invoices WHERE paid');
      expect(await card.getByTestId('preview-rows').innerText()).toMatch(/Estimated rows: 1,234/);

      await page.goto(`${server.url}/#/calls/${mail.id}`);
      await card.getByTestId('preview-email').waitFor();
      const email = await card.getByTestId('preview-email').innerText();
      expect(email).toContain('team@example.com');
      expect(email).toContain('Paid <i>now</i>');
      expect(email).toContain('Hello <b>team</b>,\nthe invoice is paid.');
      expect(await card.getByTestId('preview-email').locator('b, i').count()).toBe(0);

      await page.goto(`${server.url}/#/calls/${image.id}`);
      const img = card.getByTestId('preview-image');
      await img.waitFor();
      expect(await img.getAttribute('src')).toBe(png);
      expect(await img.getAttribute('alt')).toBe('Chart');
      expect(await img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth)).toBe(1);
      // Nothing but the service was asked for anything (the image is inline).
      expect(ann.requests.filter((u) => !u.startsWith(server.url) && !u.startsWith('data:'))).toEqual([]);
      expect(ann.errors).toEqual([]);
    });
  });
});
