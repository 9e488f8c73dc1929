import { randomBytes } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { mintToken } from '../../src/infrastructure/auth/jwt-verifier';
import { packageVersion } from '../../src/infrastructure/package-info';
import { freshDatabase, TestDatabase } from '../support/database';
import { client } from '../support/http';
import { exited, ServerProcess, spawnServer } from '../support/process';
import { TEST_SECRET } from '../support/server';
import { eventually, until } from '../support/wait';
import { startWebhookReceiver, WebhookReceiver } from '../support/webhook-receiver';

/**
 * OpenTelemetry from the standard OTEL_* env, end to end: the real CLI exports OTLP/HTTP JSON to a stand-in
 * collector. A request's `traceparent` is honoured, its queries are spans under it, its access log line names
 * its trace, and a webhook delivery is traced and sends its own `traceparent`.
 */

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  scope: string;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

const SERVER = 2;
const CLIENT = 3;

function attributes(list: Array<{ key: string; value: Record<string, unknown> }> = []): Record<string, unknown> {
  return Object.fromEntries(list.map((a) => [a.key, Object.values(a.value)[0]]));
}

/** A collector stand-in: OTLP/HTTP with JSON bodies, keeping every span it is sent. */
async function startCollector(): Promise<{ url: string; spans: ReceivedSpan[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        for (const rs of JSON.parse(body).resourceSpans ?? []) {
          const resource = attributes(rs.resource?.attributes);
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                name: s.name,
                kind: s.kind,
                scope: ss.scope?.name,
                attributes: attributes(s.attributes),
                resource,
              });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('tracing with OTEL_TRACES_EXPORTER=otlp', () => {
  let db: TestDatabase;
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let hooks: WebhookReceiver;
  let server: ServerProcess;
  let api: ReturnType<typeof client>;
  const traceId = randomBytes(16).toString('hex');
  const callerSpanId = randomBytes(8).toString('hex');

  beforeAll(async () => {
    db = await freshDatabase();
    collector = await startCollector();
    hooks = await startWebhookReceiver();
    server = await spawnServer({
      DATABASE_URL: db.url,
      TOLLGATE_DATA_DIR: db.dataDir,
      TOLLGATE_JWT_SECRET: TEST_SECRET,
      TOLLGATE_WEBHOOK_ALLOW_PRIVATE: '127.0.0.0/8',
      TOLLGATE_OUTBOX_POLL_MS: '100',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    api = client(server.url);
  }, 120_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await hooks?.close();
    await collector?.close();
    await db?.drop();
  });

  function spansOf(trace: string): ReceivedSpan[] {
    return collector.spans.filter((s) => s.traceId === trace);
  }

  /** True when `span` descends from `ancestor` through spans of the same trace. */
  function descends(span: ReceivedSpan, ancestor: ReceivedSpan): boolean {
    const byId = new Map(spansOf(span.traceId).map((s) => [s.spanId, s]));
    for (let p = span.parentSpanId; p; p = byId.get(p)?.parentSpanId) if (p === ancestor.spanId) return true;
    return false;
  }

  it('says tracing is on in the banner', () => {
    expect(server.stdout()).toContain('"tracing":"on"');
  });

  it('continues the caller’s trace: a server span under its traceparent, database spans under that, the access line naming both', async () => {
    await api.get('/health/ready'); // a probe: no span of its own
    const admin = await mintToken(TEST_SECRET, { sub: 'root', roles: ['admin'], tenant: 'traced' }, '1h');
    const agent = await mintToken(TEST_SECRET, { sub: 'bot', roles: ['agent'], tenant: 'traced' }, '1h');
    expect((await api.post('/v1/webhooks', admin, { url: hooks.url, events: ['ConversationStarted'] })).status).toBe(
      201,
    );

    const res = await api.post(
      '/v1/conversations',
      agent,
      { id: 'traced' },
      { traceparent: `00-${traceId}-${callerSpanId}-01`, 'X-Request-Id': 'traced-request' },
    );
    expect(res.status).toBe(201);

    const serverSpan = await eventually(
      () => spansOf(traceId).find((s) => s.kind === SERVER),
      20_000,
      'the server span',
    );
    expect(serverSpan).toMatchObject({
      parentSpanId: callerSpanId,
      name: 'POST /v1/conversations',
      attributes: expect.objectContaining({ 'http.route': '/v1/conversations' }),
    });
    expect(serverSpan.resource).toMatchObject({ 'service.name': 'tollgate', 'service.version': packageVersion() });

    const query = await eventually(
      () =>
        spansOf(traceId).find((s) => s.scope === '@opentelemetry/instrumentation-pg' && s.name.startsWith('pg.query')),
      20_000,
      'a query span',
    );
    expect(descends(query, serverSpan)).toBe(true);

    const line = server
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.req_id === 'traced-request' && 'status' in l);
    expect(line).toMatchObject({ trace_id: traceId, span_id: serverSpan.spanId, status: 201 });

    expect(collector.spans.filter((s) => s.attributes['url.path'] === '/health/ready')).toHaveLength(0);
  });

  it('traces the outbox and the webhook delivery, which sends its own traceparent', async () => {
    const received = await eventually(() => hooks.received[0], 20_000, 'the webhook');
    const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(received.headers.traceparent ?? '');
    expect(m).not.toBeNull();
    const [, deliveryTrace, sentSpanId] = m!;

    // The header names the POST's own client span, under the delivery's span.
    const post = await eventually(
      () => spansOf(deliveryTrace).find((s) => s.spanId === sentSpanId),
      20_000,
      'the POST span',
    );
    expect(post.kind).toBe(CLIENT);
    // The delivery's span ends after its POST, so it may reach the collector in a later export.
    const delivery = await eventually(
      () => spansOf(deliveryTrace).find((s) => s.name === 'webhook deliver'),
      20_000,
      'the delivery span',
    );
    expect(delivery.attributes).toMatchObject({ 'tollgate.tenant': 'traced', 'tollgate.webhook.outcome': 'delivered' });
    expect(descends(post, delivery)).toBe(true);

    const relay = await eventually(
      () => collector.spans.find((s) => s.name === 'outbox webhooks' && s.attributes['tollgate.tenant'] === 'traced'),
      20_000,
      'the outbox span',
    );
    expect(relay.attributes['tollgate.outbox.consumer']).toBe('webhooks');
  });

  it('makes no trace of the idle loops: every query span has a parent', async () => {
    // The sweeper runs every 500 ms and the outbox polls every 100 ms: by now they have run many times.
    await until(() => collector.spans.length > 0, 20_000, 'spans');
    const queries = collector.spans.filter((s) => s.scope === '@opentelemetry/instrumentation-pg');
    expect(queries.length).toBeGreaterThan(0);
    expect(queries.filter((s) => !s.parentSpanId)).toEqual([]);
  });

  it('stops cleanly with tracing on', async () => {
    server.child.kill('SIGTERM');
    expect(await exited(server.child)).toBe(0);
  });
});
