import { InProcessWaiters } from '../../src/infrastructure/waiting/in-process-waiters';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { until } from '../support/wait';

/** A request held open (a long-poll or an event stream) until the test lets it go. */
function hold(url: string, token: string) {
  const controller = new AbortController();
  const answer = fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal }).then(
    async (r) => ({
      status: r.status,
      retryAfter: r.headers.get('retry-after'),
      body: r.headers.get('content-type')?.includes('json') ? await r.json() : undefined,
    }),
    () => ({ status: 0, retryAfter: null, body: undefined }),
  );
  return { answer, leave: () => controller.abort() };
}

/** Open long-polls and event streams are bounded per token and per tenant, and a client that leaves gives its slot back. */
describe('wait limits', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let waiters: InProcessWaiters;
  const held: Array<ReturnType<typeof hold>> = [];

  beforeAll(async () => {
    server = await startTestServer({ maxWaitsPerToken: 2, maxWaitsPerTenant: 3, streamPollMs: 200 });
    api = client(server.url);
    waiters = server.app.get(InProcessWaiters);
  });
  afterEach(() => {
    for (const h of held.splice(0)) h.leave();
  });
  afterAll(() => server.stop());

  /** A pending call in `tenant`, for long-polls to wait on. */
  async function pendingCall(tenant: string, conv: string): Promise<string> {
    const agent = await server.token('bot', ['agent'], { tenant });
    await api.post('/v1/conversations', agent, { id: conv });
    const r = await api.post(`/v1/conversations/${conv}/tool-calls`, agent, {
      toolCalls: [{ toolName: 'needs_person', arguments: {} }],
    });
    expect(r.body.toolCalls[0].status).toBe('pending');
    return r.body.toolCalls[0].id;
  }

  function longPoll(id: string, token: string, seconds = 60) {
    const h = hold(`${server.url}/v1/tool-calls/${id}?wait=${seconds}`, token);
    held.push(h);
    return h;
  }

  it('a long-poll whose client goes away frees its slot and its waiter at once', async () => {
    const id = await pendingCall('solo', 'c-solo');
    const ann = await server.token('ann', ['approver'], { tenant: 'solo' });
    const base = waiters.size;
    const first = longPoll(id, ann);
    longPoll(id, ann);
    await until(() => waiters.size === base + 2, 10_000, 'both long-polls waiting');
    const third = await longPoll(id, ann).answer;
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({ status: 429, code: 'rate_limited' });

    first.leave();
    // Before the fix the waiter, and the slot, stayed until the 60 s wait ran out.
    await until(() => waiters.size === base + 1, 10_000, 'the waiter of the client that left is gone');
    const again = await longPoll(id, ann, 1).answer; // past the bound but for the slot given back
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('pending');
  });

  it('answers a refused wait with 429 and Retry-After', async () => {
    const id = await pendingCall('retry', 'c-retry');
    const ann = await server.token('ann', ['approver'], { tenant: 'retry' });
    const base = waiters.size;
    longPoll(id, ann);
    longPoll(id, ann);
    await until(() => waiters.size === base + 2, 10_000, 'both long-polls waiting');
    const refused = await longPoll(id, ann).answer;
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('rate_limited');
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it('bounds the waits of a whole tenant across its tokens, streams included, and no other tenant', async () => {
    const id = await pendingCall('crowd', 'c-crowd');
    const [p1, p2, p3] = await Promise.all(
      ['p1', 'p2', 'p3'].map((sub) => server.token(sub, ['approver'], { tenant: 'crowd' })),
    );
    const base = waiters.size;
    const p1First = longPoll(id, p1);
    longPoll(id, p1);
    longPoll(id, p2);
    await until(() => waiters.size === base + 3, 10_000, 'three long-polls waiting');

    // p2 and p3 are each under the per-token bound of 2; the tenant's 3 are taken.
    for (const token of [p2, p3]) {
      const r = await longPoll(id, token).answer;
      expect(r.status).toBe(429);
      expect(r.body.code).toBe('rate_limited');
      expect(r.body.detail).toMatch(/tenant/);
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    const stream = hold(`${server.url}/v1/events/stream`, p3);
    held.push(stream);
    expect((await stream.answer).status).toBe(429);

    // Another tenant is not held back by this one.
    const otherId = await pendingCall('calm', 'c-calm');
    const calm = await server.token('p1', ['approver'], { tenant: 'calm' });
    expect((await longPoll(otherId, calm, 1).answer).status).toBe(200);

    // A slot given back by one token can be taken by another.
    p1First.leave();
    await until(() => waiters.size === base + 2, 10_000, 'the waiter of the client that left is gone');
    expect((await longPoll(id, p3, 1).answer).status).toBe(200);
  });
});
