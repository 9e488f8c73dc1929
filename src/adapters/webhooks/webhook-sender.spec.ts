import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo, Server as NetServer } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { EgressGuard, ResolvedAddress } from './egress-guard';
import { sendWebhook } from './webhook-sender';

/**
 * The sender against real sockets on loopback. Host names are resolved by an injected resolver, so no
 * lookup or connection ever leaves this machine: "public" answers are only ever checked, never reached.
 */
const LOOPBACK = ['127.0.0.0/8', '::1/128'];

interface Seen {
  method?: string;
  url?: string;
  headers: IncomingMessage['headers'];
  body: string;
}

const servers: NetServer[] = [];

async function listen<S extends NetServer>(server: S): Promise<{ server: S; port: number }> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

/** A receiver on 127.0.0.1 that records each request and answers `status` (with `headers`). */
async function receiver(status = 204, headers: Record<string, string> = {}): Promise<{ port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const { port } = await listen(
    createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({
          method: req.method,
          url: req.url,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        res.writeHead(status, headers).end();
      });
    }),
  );
  return { port, seen };
}

/** Answers from a list, one answer per lookup, and records each lookup. */
function resolverAnswering(...answers: string[][]) {
  const calls: string[] = [];
  const resolve = async (host: string): Promise<ResolvedAddress[]> => {
    calls.push(host);
    return (answers.shift() ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => (s.listening ? s.close(() => r()) : r()))));
});

const HEADERS = { 'content-type': 'application/json', 'webhook-id': 'evt_1' };

describe('sending a webhook', () => {
  it('connects to the address it checked, keeping the host name in Host, and looks it up once', async () => {
    const r = await receiver();
    // A second lookup would answer 10.9.9.9: the request must go where the first, checked, answer said.
    const resolver = resolverAnswering(['127.0.0.1'], ['10.9.9.9']);
    const outcome = await sendWebhook(
      new EgressGuard(LOOPBACK, resolver),
      `http://hooks.example.test:${r.port}/in?x=1`,
      HEADERS,
      '{"a":1}',
      5000,
    );
    expect(outcome).toEqual({ status: 204 });
    expect(resolver.calls).toEqual(['hooks.example.test']);
    expect(r.seen).toEqual([
      {
        method: 'POST',
        url: '/in?x=1',
        headers: expect.objectContaining({
          host: `hooks.example.test:${r.port}`,
          'webhook-id': 'evt_1',
          'content-length': '7',
        }),
        body: '{"a":1}',
      },
    ]);
  });

  it('never reaches a name that resolved to a public address at registration and to loopback at delivery (DNS rebinding)', async () => {
    const r = await receiver();
    const resolver = resolverAnswering(['93.184.215.14'], ['127.0.0.1']);
    const guard = new EgressGuard([], resolver);
    const url = `http://rebind.example.test:${r.port}/`;
    expect(await guard.check(url)).toMatchObject({ ok: true }); // registration: checked, not connected
    expect(await sendWebhook(guard, url, HEADERS, '{}', 5000)).toEqual({
      error: 'destination_not_allowed',
      cause: expect.stringContaining('resolved to 127.0.0.1'),
    });
    expect(r.seen).toEqual([]);
  });

  it.each([
    ['http://127.0.0.1:PORT/'],
    ['http://[::ffff:127.0.0.1]:PORT/'],
    ['http://2130706433:PORT/'],
    ['http://localhost:PORT/'],
  ])('refuses %s without connecting when loopback is not allowed', async (template) => {
    const r = await receiver();
    const outcome = await sendWebhook(
      new EgressGuard([], resolverAnswering(['127.0.0.1'])),
      template.replace('PORT', String(r.port)),
      HEADERS,
      '{}',
      5000,
    );
    expect(outcome).toMatchObject({ error: 'destination_not_allowed' });
    expect(r.seen).toEqual([]);
  });

  it('does not follow a redirect: the 3xx is the answer', async () => {
    const target = await receiver();
    const r = await receiver(302, { location: `http://127.0.0.1:${target.port}/elsewhere` });
    expect(await sendWebhook(new EgressGuard(LOOPBACK), `http://127.0.0.1:${r.port}/`, HEADERS, '{}', 5000)).toEqual({
      status: 302,
    });
    expect(r.seen).toHaveLength(1);
    expect(target.seen).toEqual([]);
  });

  it('says connect_failed for a port where nothing listens, and keeps what the socket said for the log only', async () => {
    const { server, port } = await listen(createServer());
    await new Promise<void>((r) => server.close(() => r()));
    const outcome = await sendWebhook(new EgressGuard(LOOPBACK), `http://127.0.0.1:${port}/`, HEADERS, '{}', 5000);
    expect(outcome).toEqual({ error: 'connect_failed', cause: expect.stringContaining('ECONNREFUSED') });
  });

  it('says timeout for a receiver that never answers, and lets go of the connection', async () => {
    let closed!: Promise<void>;
    // Accepts and reads, never answers.
    const { port } = await listen(
      new NetServer((socket) => (closed = new Promise((r) => socket.resume().on('close', () => r())))),
    );
    expect(await sendWebhook(new EgressGuard(LOOPBACK), `http://127.0.0.1:${port}/`, HEADERS, '{}', 300)).toMatchObject(
      { error: 'timeout' },
    );
    await closed;
  });

  it('says dns_failed for a name that does not resolve', async () => {
    expect(
      await sendWebhook(
        new EgressGuard(LOOPBACK, resolverAnswering([])),
        'http://nowhere.example.test/',
        HEADERS,
        '{}',
        5000,
      ),
    ).toMatchObject({ error: 'dns_failed' });
  });

  it('offers the host name for TLS (SNI) while connecting to the checked address', async () => {
    const names: string[] = [];
    // No certificate is needed to see the name: the server hears it in the ClientHello, then ends the handshake.
    const { port } = await listen(
      createTlsServer({
        SNICallback: (name, cb) => {
          names.push(name);
          cb(new Error('no certificate here'));
        },
      }),
    );
    const outcome = await sendWebhook(
      new EgressGuard(LOOPBACK, resolverAnswering(['127.0.0.1'])),
      `https://hooks.example.test:${port}/`,
      HEADERS,
      '{}',
      5000,
    );
    expect(outcome).toMatchObject({ error: 'connect_failed' });
    expect(names).toEqual(['hooks.example.test']);
  });
});
