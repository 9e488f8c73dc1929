import { SignJWT } from 'jose';
import { request } from 'node:http';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

/** Per-token rate limits and a bound on open long-polls, answered as 429 problems. */
describe('abuse limits', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    server = await startTestServer({ rateLimitPer10s: 20, maxWaitsPerToken: 2 });
    api = client(server.url);
  });
  afterAll(() => server.stop());

  it('answers 429 rate_limited with Retry-After once a token exceeds its rate, and other tokens are unaffected', async () => {
    const noisy = await server.token('noisy', ['auditor']);
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await api.get('/v1/tools', noisy)).status);
    expect(statuses.slice(0, 20).every((s) => s === 200)).toBe(true);
    const limited = await api.get('/v1/tools', noisy);
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(limited.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);

    const quiet = await server.token('quiet', ['auditor']);
    expect((await api.get('/v1/tools', quiet)).status).toBe(200);
    // Probes are never throttled.
    expect((await api.get('/health/live')).status).toBe(200);
  });

  it('bounds the long-polls one token holds open', async () => {
    const agent = await server.token('waiter', ['agent']);
    await api.post('/v1/conversations', agent, { id: 'w1' });
    const r = await api.post('/v1/conversations/w1/tool-calls', agent, {
      toolCalls: [{ toolName: 'needs_person', arguments: {} }],
    });
    const id = r.body.toolCalls[0].id;
    const polls = [api.get(`/v1/tool-calls/${id}?wait=3`, agent), api.get(`/v1/tool-calls/${id}?wait=3`, agent)];
    await new Promise((res) => setTimeout(res, 300));
    const third = await api.get(`/v1/tool-calls/${id}?wait=3`, agent);
    expect(third.status).toBe(429);
    expect(third.body.code).toBe('rate_limited');
    expect((await api.get(`/v1/tool-calls/${id}`, agent)).status).toBe(200); // a plain read needs no slot
    for (const p of await Promise.all(polls)) expect(p.status).toBe(200);
    expect((await api.get(`/v1/tool-calls/${id}?wait=1`, agent)).status).toBe(200); // slots come back
  });
});

/** Failed authentication is limited per client address, before any token is verified (finding 16). */
describe('failed authentication limit', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    server = await startTestServer({ authFailuresPer10s: 5 });
    api = client(server.url);
  });
  afterAll(() => server.stop());

  /** A GET from the given loopback address (all of 127.0.0.0/8 reaches a server on 127.0.0.1). */
  function getFrom(localAddress: string, path: string, token: string): Promise<number> {
    const url = new URL(server.url);
    return new Promise((resolve, reject) => {
      const req = request(
        { host: url.hostname, port: url.port, path, localAddress, headers: { authorization: `Bearer ${token}` } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  it('answers 429 rate_limited with Retry-After past the limit, even to a valid token from that address, before verifying it', async () => {
    const forged = await new SignJWT({ roles: ['admin'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('mallory')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('x'.repeat(32)));
    const failures = [
      await api.get('/v1/tools'),
      await api.get('/v1/tools', 'not-a-jwt'),
      await api.get('/v1/tools', forged),
      await api.get('/v1/policy', forged),
      await api.call('GET', '/v1/tools', { headers: { authorization: 'Basic YWxpY2U6c2VjcmV0' } }),
    ];
    expect(failures.map((r) => r.status)).toEqual([401, 401, 401, 401, 401]);

    const limited = await api.get('/v1/tools', forged);
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(limited.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(10);

    const valid = await server.token('alice', ['approver']);
    expect((await api.get('/v1/tools', valid)).status).toBe(429); // refused before the token is read
    expect((await api.get('/health/live')).status).toBe(200); // public routes need no token and are not counted
    expect(await getFrom('127.0.0.2', '/v1/tools', valid)).toBe(200); // another address is unaffected
  });

  it('lets a token it has verified before through from an address past the limit: forged tokens sent through a shared address (a gateway) lock out no one', async () => {
    const admin = await server.token('ann', ['admin']);
    expect(await getFrom('127.0.0.3', '/v1/tools', admin)).toBe(200); // verified once, from the gateway's address
    const forged = await new SignJWT({ roles: ['admin'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('mallory')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('y'.repeat(32)));
    const flood = [];
    for (let i = 0; i < 8; i++) flood.push(await getFrom('127.0.0.3', '/v1/tools', forged));
    expect(flood.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(flood.slice(5)).toEqual([429, 429, 429]); // failures are still counted and refused
    expect(await getFrom('127.0.0.3', '/v1/tools', admin)).toBe(200); // the known-good token is not
    expect(await getFrom('127.0.0.3', '/v1/tools', await server.token('bob', ['admin']))).toBe(429); // a new one waits for the window
  });
});
