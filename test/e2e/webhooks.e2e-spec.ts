/**
 * Outgoing webhooks (issue 6, CONTRACT §10): admins subscribe URLs to audit event types; deliveries are
 * signed per the Standard Webhooks spec, retried with exponential backoff, and every attempt is visible to
 * the admin. The receivers are local HTTP servers; signatures are checked with the `standardwebhooks`
 * package and with a plain HMAC written here, independently of Tollgate's code.
 */
import { createHmac } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { client, Reply } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { startWebhookReceiver, WebhookReceiver } from '../support/webhook-receiver';
import { eventually, until } from '../support/wait';

const RETRY_BASE_MS = 300;

let server: TestServer;
let http: ReturnType<typeof client>;
let admin: string;
let approver: string;
let agent: string;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  server = await startTestServer({
    outboxPollMs: 50,
    webhooks: { retryBaseMs: RETRY_BASE_MS, maxAttempts: 4, timeoutMs: 2000, allowPrivate: ['127.0.0.0/8'] },
  });
  http = client(server.url);
  admin = await server.token('root', ['admin'], { name: 'Root' });
  approver = await server.token('ann', ['approver']);
  agent = await server.token('bot', ['agent']);
});

afterAll(async () => {
  await server?.stop();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(failFirst = 0): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver(failFirst);
  receivers.push(r);
  return r;
}

function expectProblem(res: Reply, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

/** Standard Webhooks, written out: base64 HMAC-SHA256 of `id.timestamp.body` keyed with the secret's bytes. */
function independentSignature(secret: string, id: string, timestamp: string, body: string): string {
  return createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64'))
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64');
}

let n = 0;
/** A conversation whose one call waits for a person; answers the call. */
async function pendingCall(token = agent) {
  const conv = `wh-conv-${++n}`;
  expect((await http.post('/v1/conversations', token, { id: conv })).status).toBe(201);
  const res = await http.post(`/v1/conversations/${conv}/tool-calls`, token, {
    toolCalls: [{ toolName: 'delete_source', arguments: { id: 'src_1' } }],
  });
  expect(res.body.toolCalls[0].status).toBe('pending');
  return res.body.toolCalls[0];
}

describe('managing webhooks', () => {
  it('creates a webhook for an admin and shows its secret only in that answer', async () => {
    const r = await receiver();
    const created = await http.post('/v1/webhooks', admin, {
      url: r.url,
      events: ['ToolCallApproved', 'ToolCallRejected'],
      description: 'audit mirror',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^wh_/),
      url: r.url,
      events: ['ToolCallApproved', 'ToolCallRejected'],
      description: 'audit mirror',
      createdBy: { id: 'root', name: 'Root' },
    });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const one = await http.get(`/v1/webhooks/${created.body.id}`, admin);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ ...created.body, secret: undefined, createdAt: expect.any(String) });
    expect(JSON.stringify(one.body)).not.toContain('whsec_');
    const list = await http.get('/v1/webhooks', admin);
    expect(list.body.items.map((w: any) => w.id)).toContain(created.body.id);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
  });

  it('deletes a webhook: 204, then 404', async () => {
    const r = await receiver();
    const { body } = await http.post('/v1/webhooks', admin, { url: r.url, events: ['*'] });
    expect((await http.call('DELETE', `/v1/webhooks/${body.id}`, { token: admin })).status).toBe(204);
    expectProblem(await http.get(`/v1/webhooks/${body.id}`, admin), 404, 'not_found');
    expectProblem(await http.call('DELETE', `/v1/webhooks/${body.id}`, { token: admin }), 404, 'not_found');
  });

  it('records who made and removed a webhook in the audit trail, never its secret', async () => {
    const r = await receiver();
    const { body } = await http.post('/v1/webhooks', admin, {
      url: r.url,
      events: ['ToolCallApproved', 'ToolCallApproved'],
      description: 'mirror',
    });
    // Two deletes at once: one wins (204), the other finds nothing (404), and one WebhookDeleted is written.
    const statuses = (
      await Promise.all([1, 2].map(() => http.call('DELETE', `/v1/webhooks/${body.id}`, { token: admin })))
    )
      .map((x) => x.status)
      .sort();
    expect(statuses).toEqual([204, 404]);
    const trail = await http.get('/v1/audit/events?type=WebhookCreated,WebhookDeleted&limit=1000', admin);
    const mine = trail.body.events.filter((e: any) => e.data.webhookId === body.id);
    expect(mine.map((e: any) => e.type)).toEqual(['WebhookCreated', 'WebhookDeleted']);
    expect(mine[0]).toMatchObject({
      actor: { id: 'root', via: 'api' },
      data: { url: r.url, events: ['ToolCallApproved'], description: 'mirror' },
    });
    expect(mine[1]).toMatchObject({ actor: { id: 'root' }, data: { url: r.url } });
    expect(JSON.stringify(trail.body)).not.toContain(body.secret);
    expect((await http.get('/v1/audit/verify', admin)).body).toMatchObject({ ok: true });
  });

  it('is for admins only: 401 without a token, 403 for other roles', async () => {
    const r = await receiver();
    const { body } = await http.post('/v1/webhooks', admin, { url: r.url, events: ['*'] });
    expectProblem(await http.post('/v1/webhooks', undefined, { url: r.url, events: ['*'] }), 401, 'unauthenticated');
    for (const token of [approver, agent, await server.token('audrey', ['auditor'])]) {
      expectProblem(await http.post('/v1/webhooks', token, { url: r.url, events: ['*'] }), 403, 'forbidden');
      expectProblem(await http.get('/v1/webhooks', token), 403, 'forbidden');
      expectProblem(await http.get(`/v1/webhooks/${body.id}`, token), 403, 'forbidden');
      expectProblem(await http.call('DELETE', `/v1/webhooks/${body.id}`, { token }), 403, 'forbidden');
      expectProblem(await http.get(`/v1/webhooks/${body.id}/deliveries`, token), 403, 'forbidden');
    }
    expect((await http.get(`/v1/webhooks/${body.id}`, admin)).status).toBe(200);
  });

  it("keeps tenants apart: another tenant's webhook is 404 and never listed", async () => {
    const r = await receiver();
    const { body } = await http.post('/v1/webhooks', admin, { url: r.url, events: ['*'] });
    const otherAdmin = await server.token('eve', ['admin'], { tenant: 'other' });
    expectProblem(await http.get(`/v1/webhooks/${body.id}`, otherAdmin), 404, 'not_found');
    expectProblem(await http.call('DELETE', `/v1/webhooks/${body.id}`, { token: otherAdmin }), 404, 'not_found');
    expectProblem(await http.get(`/v1/webhooks/${body.id}/deliveries`, otherAdmin), 404, 'not_found');
    expect((await http.get('/v1/webhooks', otherAdmin)).body).toEqual({ items: [], nextCursor: null });
    expect((await http.get(`/v1/webhooks/${body.id}`, admin)).status).toBe(200);
  });

  it.each([
    ['an unknown event type', { url: 'http://127.0.0.1:9/x', events: ['ToolCallExploded'] }, 'events'],
    ['no event types', { url: 'http://127.0.0.1:9/x', events: [] }, 'events'],
    ['a URL that is not http(s)', { url: 'ftp://example.com/x', events: ['*'] }, 'url'],
    ['no URL', { events: ['*'] }, 'url'],
    ['a secret that is not whsec_', { url: 'http://127.0.0.1:9/x', events: ['*'], secret: 'hunter2' }, 'secret'],
    [
      'a whsec_ secret that is too short',
      { url: 'http://127.0.0.1:9/x', events: ['*'], secret: 'whsec_c2hvcnQ=' },
      'secret',
    ],
    ['an unknown field', { url: 'http://127.0.0.1:9/x', events: ['*'], retries: 3 }, 'retries'],
  ])('refuses %s with 400 naming the field', async (_label, body, field) => {
    const res = await http.post('/v1/webhooks', admin, body);
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.detail).toContain(field);
  });

  it('pages the list with a cursor', async () => {
    const otherAdmin = await server.token('pat', ['admin'], { tenant: 'paged' });
    for (let i = 0; i < 3; i++)
      expect(
        (await http.post('/v1/webhooks', otherAdmin, { url: `http://127.0.0.1:9/${i}`, events: ['*'] })).status,
      ).toBe(201);
    const first = await http.get('/v1/webhooks?limit=2', otherAdmin);
    expect(first.body.items).toHaveLength(2);
    const second = await http.get(`/v1/webhooks?limit=2&cursor=${first.body.nextCursor}`, otherAdmin);
    expect(second.body.items).toHaveLength(1);
    expect(second.body.nextCursor).toBeNull();
    expect(new Set([...first.body.items, ...second.body.items].map((w: any) => w.url)).size).toBe(3);
  });
});

describe('deliveries', () => {
  it('sends only the chosen event types, signed per Standard Webhooks', async () => {
    const r = await receiver();
    const { body: hook } = await http.post('/v1/webhooks', admin, {
      url: r.url,
      events: ['ApprovalRequested', 'ToolCallApproved'],
    });
    const call = await pendingCall();
    expect((await http.post(`/v1/tool-calls/${call.id}/decision`, admin, { decision: 'approve' })).status).toBe(200);
    await until(
      () => r.received.filter((x) => x.json.data.toolCallId === call.id).length === 2,
      10_000,
      'two deliveries',
    );
    await new Promise((res) => setTimeout(res, 300));
    const mine = r.received.filter(
      (x) => x.json.data.toolCallId === call.id || x.json.data.conversationId === call.conversationId,
    );
    expect(mine.map((x) => x.json.type)).toEqual(['ApprovalRequested', 'ToolCallApproved']);

    const wh = new StandardWebhook(hook.secret);
    for (const d of mine) {
      expect(d.headers['content-type']).toBe('application/json');
      expect(d.json).toMatchObject({
        type: d.json.data.type,
        timestamp: d.json.data.at,
        data: { tenant: 'default', toolCallId: call.id },
      });
      expect(d.headers['webhook-id']).toBe(d.json.data.id); // the event's id: the same on every retry
      expect(Math.abs(Number(d.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      expect(wh.verify(d.body, d.headers)).toEqual(d.json);
      expect(d.headers['webhook-signature']).toBe(
        `v1,${independentSignature(hook.secret, d.headers['webhook-id'], d.headers['webhook-timestamp'], d.body)}`,
      );
    }
    expect(mine[1].json.data.data).toMatchObject({ approvedBy: 'root', via: 'api' });
    // A changed body or another secret does not verify.
    expect(() => wh.verify(mine[0].body.replace('ApprovalRequested', 'ToolCallApproved'), mine[0].headers)).toThrow();
    expect(() =>
      new StandardWebhook('whsec_' + Buffer.alloc(32, 7).toString('base64')).verify(mine[0].body, mine[0].headers),
    ).toThrow();
  });

  it('signs with the secret the admin supplied', async () => {
    const r = await receiver();
    const secret = 'whsec_' + Buffer.alloc(32, 42).toString('base64');
    const created = await http.post('/v1/webhooks', admin, { url: r.url, events: ['ConversationStarted'], secret });
    expect(created.body.secret).toBe(secret);
    expect((await http.post('/v1/conversations', agent, { id: 'wh-own-secret' })).status).toBe(201);
    const d = await eventually(() => r.received.find((x) => x.json.data.conversationId === 'wh-own-secret'));
    expect(new StandardWebhook(secret).verify(d.body, d.headers)).toMatchObject({ type: 'ConversationStarted' });
  });

  it('retries a failing receiver with exponential backoff, and shows every attempt to the admin', async () => {
    const r = await receiver(2);
    const { body: hook } = await http.post('/v1/webhooks', admin, { url: r.url, events: ['ConversationStarted'] });
    expect((await http.post('/v1/conversations', agent, { id: 'wh-retry' })).status).toBe(201);
    await until(() => r.accepted().length === 1, 10_000, 'accepted delivery');
    expect(r.received.map((x) => x.answered)).toEqual([500, 500, 204]);
    expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(1); // the same message each time
    const gaps = [r.received[1].at - r.received[0].at, r.received[2].at - r.received[1].at];
    expect(gaps[0]).toBeGreaterThanOrEqual(RETRY_BASE_MS - 50);
    expect(gaps[1]).toBeGreaterThanOrEqual(2 * RETRY_BASE_MS - 50);
    for (const x of r.received) expect(() => new StandardWebhook(hook.secret).verify(x.body, x.headers)).not.toThrow();

    const deliveries = await http.get(`/v1/webhooks/${hook.id}/deliveries`, admin);
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.items).toHaveLength(1);
    const [d] = deliveries.body.items;
    expect(d).toMatchObject({
      id: r.received[0].headers['webhook-id'],
      eventType: 'ConversationStarted',
      status: 'delivered',
      nextAttemptAt: null,
      deliveredAt: expect.any(String),
    });
    expect(d.attempts.map((a: any) => a.status)).toEqual([500, 500, 204]);
    expect(d.attempts[0]).toMatchObject({ error: 'HTTP 500', durationMs: expect.any(Number), at: expect.any(String) });
  });

  it('gives up after the last attempt and marks the delivery failed', async () => {
    const r = await receiver(100);
    const { body: hook } = await http.post('/v1/webhooks', admin, { url: r.url, events: ['ConversationStarted'] });
    expect((await http.post('/v1/conversations', agent, { id: 'wh-give-up' })).status).toBe(201);
    const failed = await eventually(
      async () => {
        const d = (await http.get(`/v1/webhooks/${hook.id}/deliveries`, admin)).body.items[0];
        return d?.status === 'failed' ? d : undefined;
      },
      15_000,
      'failed delivery',
    );
    expect(failed.attempts).toHaveLength(4);
    expect(failed.nextAttemptAt).toBeNull();
    await new Promise((res) => setTimeout(res, 2 * RETRY_BASE_MS));
    expect(r.received).toHaveLength(4);
  }, 20_000);

  it('records a receiver that does not answer, in a word that does not say what the network said', async () => {
    const gone = await startWebhookReceiver();
    await gone.close(); // a port where nothing listens any more
    const { body: hook } = await http.post('/v1/webhooks', admin, { url: gone.url, events: ['ConversationStarted'] });
    expect((await http.post('/v1/conversations', agent, { id: 'wh-refused' })).status).toBe(201);
    const d = await eventually(
      async () => (await http.get(`/v1/webhooks/${hook.id}/deliveries`, admin)).body.items[0]?.attempts[0],
    );
    expect(d.status).toBeUndefined();
    expect(d.error).toBe('connect_failed'); // not "ECONNREFUSED 127.0.0.1:<port>": the attempt log is no port scanner
    await http.call('DELETE', `/v1/webhooks/${hook.id}`, { token: admin });
  });

  it('sends nothing to a deleted webhook, and nothing of other tenants', async () => {
    const r = await receiver();
    const { body: hook } = await http.post('/v1/webhooks', admin, { url: r.url, events: ['ConversationStarted'] });
    expect((await http.call('DELETE', `/v1/webhooks/${hook.id}`, { token: admin })).status).toBe(204);
    expect((await http.post('/v1/conversations', agent, { id: 'wh-after-delete' })).status).toBe(201);
    const otherAgent = await server.token('bot', ['agent'], { tenant: 'other' });
    expect((await http.post('/v1/conversations', otherAgent, { id: 'wh-other-tenant' })).status).toBe(201);
    const r2 = await receiver();
    await http.post('/v1/webhooks', admin, { url: r2.url, events: ['ConversationStarted'] });
    expect((await http.post('/v1/conversations', agent, { id: 'wh-marker' })).status).toBe(201);
    await eventually(() => r2.received.find((x) => x.json.data.conversationId === 'wh-marker'));
    await new Promise((res) => setTimeout(res, 200));
    expect(r.received).toEqual([]);
    expect(r2.received.map((x) => x.json.data.conversationId)).toEqual(['wh-marker']);
  });
});
