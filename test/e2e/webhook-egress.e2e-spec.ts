/**
 * Webhook egress (issue 11, finding 8): with the default policy a webhook reaches public addresses only.
 * Loopback, private, link-local and metadata destinations are refused when the webhook is registered (400,
 * naming `url`) and again on the addresses a host name resolves to when each delivery is attempted, without
 * connecting; the attempt log then says `destination_not_allowed`, whatever is or is not listening there.
 * Nothing here leaves the machine: refused URLs are never connected to, and the one public address is
 * registered in a tenant with no events and removed at once.
 */
import { loadConfig } from '../../src/infrastructure/config/config';
import { freshDatabase, TestDatabase } from '../support/database';
import { client, Reply } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { startWebhookReceiver, WebhookReceiver } from '../support/webhook-receiver';
import { eventually } from '../support/wait';

const defaults = loadConfig({}).webhooks;

let db: TestDatabase;
/** The default policy (no private destinations), delivering. */
let server: TestServer;
let http: ReturnType<typeof client>;
let admin: string;
let receiver: WebhookReceiver;
let closedPort: number;
/** Webhooks an on-prem instance (loopback allowed) registered before the policy was tightened. */
const registered: Array<{ id: string; url: string }> = [];

function expectProblem(res: Reply, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

beforeAll(async () => {
  db = await freshDatabase();
  receiver = await startWebhookReceiver();
  const port = Number(new URL(receiver.url).port);
  const gone = await startWebhookReceiver();
  await gone.close();
  closedPort = Number(new URL(gone.url).port);

  // First an instance whose operator allowed loopback, sending nothing itself (outbox off): the webhooks pass
  // registration, and an event is queued for them.
  const onPrem = await startTestServer(
    { outboxPollMs: 0, webhooks: { ...defaults, allowPrivate: ['127.0.0.0/8', '::1/128'] } },
    { db },
  );
  const onPremAdmin = await onPrem.token('root', ['admin']);
  for (const url of [
    `http://localhost:${port}/hooks/tollgate`,
    receiver.url,
    `http://[::ffff:127.0.0.1]:${port}/hooks/tollgate`,
    `http://127.0.0.1:${closedPort}/hooks/tollgate`,
  ]) {
    const res = await client(onPrem.url).post('/v1/webhooks', onPremAdmin, { url, events: ['ConversationStarted'] });
    expect(res.status).toBe(201);
    registered.push({ id: res.body.id, url });
  }
  expect(
    (await client(onPrem.url).post('/v1/conversations', await onPrem.token('bot', ['agent']), { id: 'egress-conv' }))
      .status,
  ).toBe(201);
  await onPrem.stop();

  // Then the same database under the default policy, which delivers what is queued.
  server = await startTestServer({ outboxPollMs: 50, webhooks: { ...defaults, allowPrivate: [] } }, { db });
  http = client(server.url);
  admin = await server.token('root', ['admin']);
});

afterAll(async () => {
  await server?.stop();
  await receiver?.close();
  await db?.drop();
});

describe('registering a webhook under the default policy', () => {
  it.each([
    ['loopback', () => `http://127.0.0.1:${Number(new URL(receiver.url).port)}/`],
    ['IPv6 loopback', () => 'http://[::1]/'],
    ['IPv4-mapped loopback', () => 'http://[::ffff:127.0.0.1]/'],
    ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ['the IPv6 metadata address', () => 'http://[fd00:ec2::254]/'],
    ['an RFC 1918 address', () => 'http://10.0.0.1/'],
    ['another RFC 1918 address', () => 'https://192.168.1.1:8443/hook'],
    ['a CGNAT address', () => 'http://100.64.0.1/'],
    ['the unspecified address', () => 'http://0.0.0.0:80/'],
    ['a name that resolves to loopback', () => `http://localhost:${Number(new URL(receiver.url).port)}/`],
  ])('refuses %s with 400 naming url', async (_label, url) => {
    // An event type that never happens in this file: even a server that wrongly accepted the URL sends nothing.
    const res = await http.post('/v1/webhooks', admin, { url: url(), events: ['ToolCallExpired'] });
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.errors).toEqual([
      { path: 'url', message: expect.stringContaining('TOLLGATE_WEBHOOK_ALLOW_PRIVATE') },
    ]);
  });

  it('does not say what a refused name resolved to', async () => {
    const res = await http.post('/v1/webhooks', admin, { url: 'http://localhost/', events: ['ToolCallExpired'] });
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.detail).not.toMatch(/127\.0\.0\.1|::1/);
  });

  it('refuses credentials in the URL, even to a public address', async () => {
    const res = await http.post('/v1/webhooks', admin, {
      url: 'https://user:secret@93.184.215.14/hook',
      events: ['ToolCallExpired'],
    });
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.errors).toEqual([{ path: 'url', message: expect.stringContaining('credentials') }]);
  });

  it('accepts a public address (registration connects to nothing)', async () => {
    // A tenant with no other events, and a type that never happens here: nothing is ever sent to it.
    const quiet = await server.token('pub', ['admin'], { tenant: 'egress-public' });
    const res = await http.post('/v1/webhooks', quiet, {
      url: 'https://93.184.215.14/hook',
      events: ['ToolCallExpired'],
    });
    expect(res.status).toBe(201);
    expect((await http.call('DELETE', `/v1/webhooks/${res.body.id}`, { token: quiet })).status).toBe(204);
  });

  it('lists nothing that was refused', async () => {
    const urls = (await http.get('/v1/webhooks', admin)).body.items.map((w: { url: string }) => w.url);
    expect(urls.sort()).toEqual(registered.map((w) => w.url).sort());
  });
});

describe('delivering under the default policy', () => {
  it('checks each attempt on the addresses resolved then: webhooks registered while loopback was allowed are not sent', async () => {
    const attempts = await Promise.all(
      registered.map((w) =>
        eventually(
          async () => (await http.get(`/v1/webhooks/${w.id}/deliveries`, admin)).body.items[0]?.attempts[0],
          10_000,
          `an attempt for ${w.url}`,
        ),
      ),
    );
    // Recorded after the refusal: had a connection been made, the receiver would hold the request by now.
    expect(receiver.received).toEqual([]);
    for (const a of attempts) {
      expect(a).toEqual({ at: expect.any(String), error: 'destination_not_allowed', durationMs: expect.any(Number) });
    }
  });

  it('reads the same for an open port and a closed one: the attempt log is no port scanner', async () => {
    const byUrl = async (url: string) => {
      const w = registered.find((x) => x.url === url)!;
      const d = await eventually(async () =>
        (await http.get(`/v1/webhooks/${w.id}/deliveries`, admin)).body.items.find(
          (x: { attempts: unknown[] }) => x.attempts.length > 0,
        ),
      );
      return {
        status: d.status,
        errors: d.attempts.map((a: { error: string }) => a.error),
        statuses: d.attempts.map((a: { status?: number }) => a.status),
      };
    };
    const open = await byUrl(receiver.url);
    const closed = await byUrl(`http://127.0.0.1:${closedPort}/hooks/tollgate`);
    expect(open.errors[0]).toBe('destination_not_allowed');
    expect(closed.errors[0]).toBe('destination_not_allowed');
    expect([...open.statuses, ...closed.statuses].every((s) => s === undefined)).toBe(true);
  });
});
