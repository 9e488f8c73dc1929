import { CompactSign, exportJWK, generateKeyPair } from 'jose';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import type { AuditEvent } from '../../src/application/ports/audit-log.port';
import type { OutboxConsumer } from '../../src/application/ports/outbox.port';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { until } from '../support/wait';
import { startWebhookReceiver, WebhookReceiver } from '../support/webhook-receiver';

/** An outbox consumer that fails while told to: the outbox's lag and failure metrics must show it. */
class FlakyConsumer implements OutboxConsumer {
  readonly name = 'metrics-probe';
  failing = false;
  wants(): boolean {
    return true;
  }
  async deliver(_e: AuditEvent): Promise<void> {
    if (this.failing) throw new Error('the probe is down');
  }
}

/** GET /metrics: Prometheus text an operator scrapes, no token (CONTRACT §11). */
describe('the Prometheus endpoint', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  const probe = new FlakyConsumer();
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    server = await startTestServer(
      {
        outboxPollMs: 50,
        webhooks: { retryBaseMs: 100, maxAttempts: 2, timeoutMs: 10_000, allowPrivate: ['127.0.0.0/8'] },
      },
      { outboxConsumers: [probe] },
    );
    api = client(server.url);
  });
  afterAll(async () => {
    await server.stop();
    await Promise.all(receivers.map((r) => r.close()));
  });

  function value(text: string, series: string): number {
    const line = text.split('\n').find((l) => l.startsWith(series + ' '));
    return line ? Number(line.slice(series.length + 1)) : 0;
  }

  async function metric(series: string): Promise<number> {
    return value((await api.get('/metrics')).body as string, series);
  }

  /** Waits until the series satisfies `ok`; fails naming the series and its last value. */
  async function metricUntil(series: string, ok: (v: number) => boolean): Promise<number> {
    let last = NaN;
    try {
      await until(async () => ok((last = await metric(series))), 20_000, series);
    } catch (e) {
      throw new Error(`${(e as Error).message}; last value ${last}:\n${(await api.get('/metrics')).body}`);
    }
    return last;
  }

  it('counts decisions by outcome and channel, HTTP requests by route, and pending approvals by tenant', async () => {
    const agent = await server.token('bot', ['agent'], { tenant: 'metrics' });
    const ann = await server.token('ann', ['approver'], { tenant: 'metrics' });
    await api.post('/v1/conversations', agent, { id: 'm1' });
    const step = await api.post('/v1/conversations/m1/tool-calls', agent, {
      toolCalls: [
        { toolName: 'unknown_a', arguments: {} },
        { toolName: 'read_b', arguments: {}, annotations: { isReadOnly: true } },
        { toolName: 'unknown_c', arguments: {} },
      ],
    });
    expect(step.status).toBe(201);
    const [a, , c] = step.body.toolCalls;

    let text = (await api.get('/metrics')).body as string;
    expect(value(text, 'tollgate_pending_approvals{tenant="metrics"}')).toBe(2);
    expect(value(text, 'tollgate_decisions_total{outcome="approved",via="policy"}')).toBe(1);

    await api.post(`/v1/tool-calls/${a.id}/decision`, ann, { decision: 'approve' }, { 'X-Tollgate-Channel': 'web' });
    await api.post(
      `/v1/tool-calls/${c.id}/decision`,
      ann,
      { decision: 'reject', reason: 'no' },
      { 'X-Tollgate-Channel': 'cli' },
    );

    const res = await api.get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    text = res.body as string;
    expect(value(text, 'tollgate_pending_approvals{tenant="metrics"}')).toBe(0);
    expect(value(text, 'tollgate_decisions_total{outcome="approved",via="web"}')).toBe(1);
    expect(value(text, 'tollgate_decisions_total{outcome="rejected",via="cli"}')).toBe(1);
    expect(value(text, 'tollgate_approval_latency_seconds_count{outcome="approved"}')).toBe(1);
    expect(
      value(text, 'tollgate_http_requests_total{method="POST",route="/v1/tool-calls/:id/decision",status="200"}'),
    ).toBe(2);
    expect(text).toMatch(/^process_resident_memory_bytes /m);
  });

  it('labels requests no route matched as unmatched, not by their path', async () => {
    expect((await api.get('/v1/no-such-thing/123')).status).toBe(404);
    expect(
      await metric('tollgate_http_requests_total{method="GET",route="unmatched",status="404"}'),
    ).toBeGreaterThanOrEqual(1);
  });

  it("shows an outbox consumer's lag and failures while it is down, and the lag gone once it is back", async () => {
    const agent = await server.token('bot', ['agent'], { tenant: 'outbox-lag' });
    const failures = 'tollgate_outbox_failures_total{consumer="metrics-probe"}';
    const before = await metric(failures);
    probe.failing = true;
    expect((await api.post('/v1/conversations', agent, { id: 'lagging' })).status).toBe(201);

    await metricUntil(failures, (v) => v > before);
    await metricUntil('tollgate_outbox_failing_streams{consumer="metrics-probe"}', (v) => v >= 1);
    expect(await metric('tollgate_outbox_pending_events{consumer="metrics-probe"}')).toBeGreaterThanOrEqual(1);
    expect(await metric('tollgate_outbox_oldest_pending_seconds{consumer="metrics-probe"}')).toBeGreaterThan(0);

    probe.failing = false; // the stream's backoff runs out and it catches up
    await metricUntil('tollgate_outbox_pending_events{consumer="metrics-probe"}', (v) => v === 0);
    const text = (await api.get('/metrics')).body as string;
    expect(value(text, 'tollgate_outbox_failing_streams{consumer="metrics-probe"}')).toBe(0);
    expect(value(text, 'tollgate_outbox_oldest_pending_seconds{consumer="metrics-probe"}')).toBe(0);
    // Every consumer is listed, the channels' too.
    expect(text).toMatch(/^tollgate_outbox_pending_events\{consumer="webhooks"\} \d+$/m);
  });

  it('counts webhook attempts by outcome (delivered, failed and retried, given up) with their durations', async () => {
    const admin = await server.token('root', ['admin'], { tenant: 'hooks' });
    const agent = await server.token('bot', ['agent'], { tenant: 'hooks' });
    const flaky = await startWebhookReceiver(1); // 500 once, then 204
    const broken = await startWebhookReceiver(1000); // 500 every time
    receivers.push(flaky, broken);
    const series = (outcome: string) => `tollgate_webhook_deliveries_total{outcome="${outcome}"}`;
    const [delivered, failed, gaveUp] = [
      await metric(series('delivered')),
      await metric(series('failed')),
      await metric(series('gave_up')),
    ];

    for (const r of [flaky, broken])
      expect((await api.post('/v1/webhooks', admin, { url: r.url, events: ['ConversationStarted'] })).status).toBe(201);
    expect((await api.post('/v1/conversations', agent, { id: 'hooked' })).status).toBe(201);

    // flaky: failed, then delivered; broken: failed, then (maxAttempts 2) given up.
    await metricUntil(series('delivered'), (v) => v >= delivered + 1);
    await metricUntil(series('gave_up'), (v) => v >= gaveUp + 1);
    expect(await metric(series('failed'))).toBeGreaterThanOrEqual(failed + 2);
    expect(flaky.accepted()).toHaveLength(1);
    expect(
      await metric('tollgate_webhook_delivery_duration_seconds_count{outcome="delivered"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(await metric('tollgate_webhook_delivery_duration_seconds_count{outcome="gave_up"}')).toBeGreaterThanOrEqual(
      1,
    );
  });

  it('shows webhook deliveries not yet done, and their age, until the receiver answers', async () => {
    const admin = await server.token('root', ['admin'], { tenant: 'slow-hooks' });
    const agent = await server.token('bot', ['agent'], { tenant: 'slow-hooks' });
    // A receiver that holds every request until released.
    const held: Array<ServerResponse<IncomingMessage>> = [];
    let released = false;
    const slow: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => (released ? res.writeHead(204).end() : held.push(res)));
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hook`;
      expect((await api.post('/v1/webhooks', admin, { url, events: ['ConversationStarted'] })).status).toBe(201);
      expect((await api.post('/v1/conversations', agent, { id: 'slow' })).status).toBe(201);
      await until(() => held.length > 0, 20_000, 'the delivery reaching the receiver');

      expect(await metric('tollgate_webhook_deliveries_pending')).toBeGreaterThanOrEqual(1);
      expect(await metric('tollgate_webhook_oldest_pending_seconds')).toBeGreaterThan(0);

      released = true;
      for (const res of held.splice(0)) res.writeHead(204).end();
      await metricUntil('tollgate_webhook_deliveries_pending', (v) => v === 0);
      expect(await metric('tollgate_webhook_oldest_pending_seconds')).toBe(0);
    } finally {
      slow.closeAllConnections();
      await new Promise<void>((r) => slow.close(() => r()));
    }
  });

  it('counts the event streams and long-polls open on this instance, and lets them go when they end', async () => {
    const agent = await server.token('bot', ['agent'], { tenant: 'waits' });
    const ann = await server.token('ann', ['approver'], { tenant: 'waits' });

    const stream = new AbortController();
    const res = await fetch(`${server.url}/v1/events/stream`, {
      headers: { authorization: `Bearer ${ann}` },
      signal: stream.signal,
    });
    expect(res.status).toBe(200);
    await metricUntil('tollgate_open_event_streams', (v) => v === 1);
    stream.abort();
    await metricUntil('tollgate_open_event_streams', (v) => v === 0);

    await api.post('/v1/conversations', agent, { id: 'w1' });
    const call = (
      await api.post('/v1/conversations/w1/tool-calls', agent, {
        toolCalls: [{ toolName: 'needs_a_person', arguments: {} }],
      })
    ).body.toolCalls[0];
    const poll = api.get(`/v1/tool-calls/${call.id}?wait=30`, agent);
    await metricUntil('tollgate_open_long_polls', (v) => v === 1);
    await api.post(`/v1/tool-calls/${call.id}/decision`, ann, { decision: 'approve' });
    expect((await poll).body.status).toBe('approved');
    await metricUntil('tollgate_open_long_polls', (v) => v === 0);
  });

  it('reports the result and time of the last audit verification, and counts them by result', async () => {
    const auditor = await server.token('audrey', ['auditor'], { tenant: 'metrics' });
    // No verification yet: no result at all, rather than a 0 that would read as a failure.
    expect((await api.get('/metrics')).body).not.toMatch(/^tollgate_audit_verify_(ok|timestamp_seconds) /m);

    expect((await api.get('/v1/audit/verify', auditor)).body.ok).toBe(true);
    let text = (await api.get('/metrics')).body as string;
    expect(value(text, 'tollgate_audit_verify_ok')).toBe(1);
    expect(value(text, 'tollgate_audit_verifications_total{result="ok"}')).toBe(1);
    const first = value(text, 'tollgate_audit_verify_timestamp_seconds');
    expect(first).toBeGreaterThan(0);

    // A checkpoint signed by someone else does not verify: a failed verification.
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const payload = { tenant: 'metrics', seq: 1, hash: 'a'.repeat(64), at: new Date().toISOString() };
    const forged = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader({ alg: 'EdDSA', kid: (await exportJWK(privateKey)).x, typ: 'tollgate-checkpoint+jwt' })
      .sign(privateKey);
    expect((await api.get(`/v1/audit/verify?checkpoint=${forged}`, auditor)).body.ok).toBe(false);
    text = (await api.get('/metrics')).body as string;
    expect(value(text, 'tollgate_audit_verify_ok')).toBe(0);
    expect(value(text, 'tollgate_audit_verifications_total{result="failed"}')).toBe(1);
    expect(value(text, 'tollgate_audit_verify_timestamp_seconds')).toBeGreaterThanOrEqual(first);
  });
});
