/**
 * What the network and the server do to an agent, and how the SDK carries on: a response lost after the server
 * acted (retried idempotently, never proposing twice), a server restart during a wait, the caller giving up
 * (AbortSignal), rate limits and unavailability with Retry-After, and rotating tokens.
 */
import { Tollgate, TollgateError, type RetryInfo } from '@tollgate/sdk';
import { freshDatabase, type TestDatabase } from '../../../test/support/database.js';
import {
  FAST_RETRY,
  pendingIn,
  setUp,
  socketError,
  startTestServer,
  tapFetch,
  type Setup,
  type TestServer,
} from './support.js';

let db: TestDatabase;
let server: TestServer;
let s: Setup;

beforeAll(async () => {
  db = await freshDatabase();
  server = await startTestServer({}, { db });
  s = await setUp(server);
});

afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

const user = { id: 'ann', roles: ['admin'] };

/** A fetch that lets the server act on the first request matching `match`, then loses its answer. */
function losingFirst(match: (url: string, method: string) => boolean) {
  let lost = 0;
  const f = tapFetch(async (url, init, real) => {
    if (lost > 0 || !match(url, init.method ?? 'GET')) return undefined;
    lost += 1;
    await (await real(url, init)).text(); // the server did it...
    throw socketError(); // ...and the answer never arrived
  });
  return Object.assign(f, { lost: () => lost });
}

describe('a lost answer', () => {
  it('to a proposal is retried with the same tool-call id and claim key: one call on the server, run once', async () => {
    const fetch = losingFirst((url, method) => method === 'POST' && url.endsWith('/tool-calls'));
    const retries: RetryInfo[] = [];
    const conv = await s.agent({ fetch, onRetry: (r) => retries.push(r) }).conversation({ id: 'lost-proposal', user });
    const runs: unknown[] = [];
    expect(
      await conv.guard('get_source', async (a: { id: string }) => (runs.push(a), `got ${a.id}`))({ id: 'src_1' }),
    ).toBe('got src_1');

    expect(fetch.lost()).toBe(1);
    expect(retries).toMatchObject([
      {
        method: 'POST',
        path: '/v1/conversations/lost-proposal/tool-calls',
        attempt: 1,
        code: 'network_error',
        status: 0,
      },
    ]);
    const posts = fetch.calls.filter((c) => c.method === 'POST' && c.url.endsWith('/tool-calls'));
    expect(posts).toHaveLength(2);
    // The first attempt claimed the call; the retry (same claim key) was answered that claim, not refused.
    expect(fetch.calls.filter((c) => c.url.endsWith('/execution'))).toHaveLength(0);
    await conv.tollgate.flush();
    const calls = (await conv.refresh()).toolCalls!;
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ status: 'completed', externalId: expect.stringMatching(/^call_/) });
    expect(runs).toHaveLength(1);
  });

  it('to a conversation start is retried with the id made before the first attempt: one conversation', async () => {
    const fetch = losingFirst((url, method) => method === 'POST' && url.endsWith('/v1/conversations'));
    const conv = await s.agent({ fetch }).conversation({ user, title: 'started once' });
    expect(fetch.lost()).toBe(1);
    expect(conv.id).toMatch(/^conv_/);
    const mine = (await s.ann.listConversations({ limit: 1000 })).items.filter((c) => c.title === 'started once');
    expect(mine.map((c) => c.id)).toEqual([conv.id]);
  });

  it('to a result report is retried, and the server’s already_completed then means done', async () => {
    const fetch = losingFirst((url, method) => method === 'POST' && url.endsWith('/result'));
    const conv = await s.agent({ fetch }).conversation({ id: 'lost-result', user });
    expect(await conv.guard('get_source', async () => 'ok')({ id: 'src_1' })).toBe('ok');
    await conv.tollgate.flush();
    expect(fetch.lost()).toBe(1);
    const [call] = (await conv.refresh()).toolCalls!;
    expect(call).toMatchObject({ status: 'completed', result: { outcome: 'succeeded', output: 'ok' } });
  });

  it('to a claim is not retried: the run never starts without its receipt, and the call stays claimed once', async () => {
    const fetch = losingFirst((url, method) => method === 'POST' && url.endsWith('/execution'));
    const conv = await s.agent({ fetch }).conversation({ id: 'lost-claim', user });
    const runs: unknown[] = [];
    // A call a person approves is claimed on its own request (an automatic one is claimed by its proposal).
    const running = conv
      .guard('delete_source', async (a: { id: string }) => runs.push(a))({ id: 'src_1' })
      .catch((e: unknown) => e);
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().approve(pending.id);
    const error = await running;
    expect(error).toBeInstanceOf(TollgateError);
    expect(error).toMatchObject({ status: 0, code: 'network_error' });
    expect(runs).toHaveLength(0);
    expect(fetch.calls.filter((c) => c.url.endsWith('/execution'))).toHaveLength(1);
    expect((await conv.refresh()).toolCalls![0].status).toBe('executed');
  });
});

describe('a server restart during a wait', () => {
  it('is ridden out: the wait resumes against the new instance and the call runs once approved there', async () => {
    const retries: RetryInfo[] = [];
    const agent = s.agent({ onRetry: (r) => retries.push(r), pollSeconds: 30 });
    const conv = await agent.conversation({ id: 'restart-wait', user });
    const runs: unknown[] = [];
    const running = conv
      .guard(
        'delete_source',
        async (a: { id: string }) => (runs.push(a), 'deleted'),
      )({ id: 'src_7' })
      .catch((e: unknown) => e);
    const [pending] = await pendingIn(s.ann, conv.id);

    const port = Number(new URL(server.url).port);
    await server.close(); // the long-poll ends; new connections are refused
    server = await startTestServer({ port }, { db }); // the same address and database, as after a deploy
    s = await setUp(server);
    await s.ann.inbox().approve(pending.id);

    expect(await running).toBe('deleted');
    expect(runs).toEqual([{ id: 'src_7' }]);
    await agent.flush();
    expect((await s.ann.getToolCall(pending.id)).status).toBe('completed');
    // The server was away for a while (refused connections, retried), and none of that reached the caller.
    expect(retries.some((r) => r.code === 'network_error' && r.path === `/v1/tool-calls/${pending.id}`)).toBe(true);
  });
});

describe('AbortSignal', () => {
  it('ends a wait at once with the signal’s reason; the function never runs', async () => {
    const conv = await s.agent().conversation({ id: 'abort-wait', user });
    const controller = new AbortController();
    const runs: unknown[] = [];
    const running = conv
      .guard('delete_source', async () => runs.push(1), { signal: controller.signal })({ id: 'src_8' })
      .catch((e: unknown) => e);
    await pendingIn(s.ann, conv.id);
    const reason = new Error('the user closed the chat');
    controller.abort(reason);
    expect(await running).toBe(reason);
    // Approved after the caller left: nothing runs.
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().approve(pending.id);
    expect(runs).toHaveLength(0);
  });

  it('ends a proposal waiting behind an earlier step, and a per-call signal works as well as the guard’s', async () => {
    const conv = await s.agent().conversation({ id: 'abort-blocked', user });
    const first = await conv.propose({ toolName: 'delete_source', arguments: { id: 'first' } });
    const controller = new AbortController();
    const waiting = conv
      .guard('get_source', async () => 'never')({ id: 'x' }, { signal: controller.signal })
      .catch((e: unknown) => e);
    controller.abort();
    expect(await waiting).toMatchObject({ name: 'AbortError' });
    expect((await conv.refresh()).toolCalls!.map((c) => c.id)).toEqual([first.id]);
  });

  it('refuses to start when already aborted', async () => {
    const conv = await s.agent().conversation({ id: 'abort-early', user });
    await expect(
      conv.requestApproval({ toolName: 'get_source', arguments: {} }, { signal: AbortSignal.abort() }),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect((await conv.refresh()).toolCalls).toEqual([]);
  });
});

describe('429 and 503', () => {
  /** Answers the first request to `path` with `status` and these headers and problem, then passes through. */
  function refusingFirst(
    path: string,
    status: number,
    headers: Record<string, string>,
    problem: Record<string, unknown>,
  ) {
    let refused = 0;
    return tapFetch(async (url) => {
      if (refused > 0 || !new URL(url).pathname.endsWith(path)) return undefined;
      refused += 1;
      return new Response(
        JSON.stringify({ type: `urn:tollgate:problem:${problem.code}`, title: 'x', status, detail: 'x', ...problem }),
        { status, headers: { 'content-type': 'application/problem+json', ...headers } },
      );
    });
  }

  it('429 is retried after the Retry-After the server gave', async () => {
    const retries: RetryInfo[] = [];
    const fetch = refusingFirst('/v1/conversations', 429, { 'retry-after': '1' }, { code: 'rate_limited' });
    const conv = await s.agent({ fetch, onRetry: (r) => retries.push(r) }).conversation({ id: 'rate-limited', user });
    expect(conv.id).toBe('rate-limited');
    expect(retries).toEqual([
      {
        method: 'POST',
        path: '/v1/conversations',
        attempt: 1,
        delayMs: 1000,
        status: 429,
        code: 'rate_limited',
        retryAfter: true,
      },
    ]);
  });

  it('503 unavailable is retried after its Retry-After (here the problem’s retryAfter member), even for a claim', async () => {
    const retries: RetryInfo[] = [];
    const fetch = refusingFirst('/execution', 503, {}, { code: 'unavailable', retryAfter: 0 });
    const conv = await s.agent({ fetch, onRetry: (r) => retries.push(r) }).conversation({ id: 'unavailable', user });
    const running = conv.guard('delete_source', async () => 'ran')({ id: 's' });
    await s.ann.inbox().approve((await pendingIn(s.ann, conv.id))[0].id);
    expect(await running).toBe('ran');
    expect(retries).toMatchObject([
      { path: expect.stringMatching(/\/execution$/), status: 503, code: 'unavailable', delayMs: 0, retryAfter: true },
    ]);
  });

  it('503 halted is an answer, not an outage: not retried', async () => {
    const retries: RetryInfo[] = [];
    const fetch = refusingFirst('/tool-calls', 503, {}, { code: 'halted', scope: 'tenant' });
    const conv = await s.agent({ fetch, onRetry: (r) => retries.push(r) }).conversation({ id: 'halted-once', user });
    await expect(conv.requestApproval({ toolName: 'get_source', arguments: {} })).rejects.toMatchObject({
      status: 503,
      code: 'halted',
      problem: { scope: 'tenant' },
    });
    expect(retries).toEqual([]);
  });

  it('gives up after retry.maxAttempts, with the last problem', async () => {
    const always = tapFetch(
      async () =>
        new Response(
          JSON.stringify({ type: 'x', title: 'x', status: 429, detail: 'slow down', code: 'rate_limited' }),
          { status: 429, headers: { 'content-type': 'application/problem+json', 'retry-after': '0' } },
        ),
    );
    const tg = new Tollgate({
      url: server.url,
      token: s.agentToken,
      fetch: always,
      retry: { ...FAST_RETRY, maxAttempts: 3 },
    });
    await expect(tg.getTool('x')).rejects.toMatchObject({ status: 429, code: 'rate_limited', detail: 'slow down' });
    expect(always.calls).toHaveLength(3);
  });
});

describe('tokens', () => {
  it('a token function is asked before each request, and again after a 401 (a rotated token)', async () => {
    const issued: string[] = [];
    let stale = true;
    const tg = new Tollgate({
      url: server.url,
      token: async () => {
        const t = stale ? `${s.agentToken}x` : s.agentToken; // the first one no longer verifies
        stale = false;
        issued.push(t);
        return t;
      },
    });
    expect((await tg.getConversation('restart-wait')).id).toBe('restart-wait');
    expect(issued).toEqual([`${s.agentToken}x`, s.agentToken]);
    await tg.getConversation('restart-wait');
    expect(issued).toHaveLength(3);
  });

  it('a 401 with a fixed token is thrown as it is', async () => {
    const tg = new Tollgate({ url: server.url, token: 'not-a-jwt' });
    await expect(tg.getConversation('restart-wait')).rejects.toMatchObject({ status: 401, code: 'unauthenticated' });
  });
});
