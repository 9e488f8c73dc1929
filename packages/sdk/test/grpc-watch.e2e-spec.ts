/**
 * Waiting over the gRPC watch (`new Tollgate({ url, token, grpc })`) against the real server: the guard wakes on
 * WatchToolCall and never long-polls; approvals, rejections, a server restart, an AbortSignal and a bad token.
 * Also: the package ships the repository's proto (copied by the build).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tollgate, TollgateError, ToolCallRejectedError, type TollgateConversation } from '@tollgate/sdk';
import { retryAfterOf } from '@tollgate/sdk/grpc-watch';
import { freshDatabase, type TestDatabase } from '../../../test/support/database.js';
import { FAST_RETRY, pendingIn, setUp, startTestServer, tapFetch, type Setup, type TestServer } from './support.js';

const root = join(__dirname, '..', '..', '..');
let db: TestDatabase;
let server: TestServer;
let s: Setup;
const clients: Tollgate[] = [];

beforeAll(async () => {
  db = await freshDatabase();
  server = await startTestServer({}, { db });
  s = await setUp(server);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server?.stop();
  await db?.drop();
});

const user = { id: 'ann', roles: ['admin'], name: 'Ann' };

/** An agent waiting over gRPC, with a fetch that records each REST request. */
function grpcAgent(token = s.agentToken) {
  const fetch = tapFetch(() => undefined);
  const agent = new Tollgate({ url: server.url, token, retry: FAST_RETRY, fetch, grpc: server.grpcAddress! });
  clients.push(agent);
  return { agent, fetch, longPolls: () => fetch.calls.filter((c) => /[?&]wait=/.test(c.url)) };
}

async function grpcWatches(): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('tollgate_grpc_requests_total{') && l.includes('method="WatchToolCall"'))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

describe('the shipped proto', () => {
  it('is the repository’s proto, copied into packages/sdk/proto by the build', () => {
    const shipped = readFileSync(join(root, 'packages', 'sdk', 'proto', 'tollgate', 'v1', 'tollgate.proto'), 'utf8');
    expect(shipped).toBe(readFileSync(join(root, 'proto', 'tollgate', 'v1', 'tollgate.proto'), 'utf8'));
    expect(JSON.parse(readFileSync(join(root, 'packages', 'sdk', 'package.json'), 'utf8')).files).toContain('proto');
  });
});

describe('guard with { grpc }', () => {
  it('runs once approved over REST, woken by WatchToolCall, without a single long-poll', async () => {
    const { agent, fetch, longPolls } = grpcAgent();
    const conv: TollgateConversation = await agent.conversation({ id: 'grpc-approved', user });
    const watchesBefore = await grpcWatches();
    const runs: unknown[] = [];
    const running = conv.guard(
      'delete_source',
      async (a: { id: string }) => (runs.push(a), `deleted ${a.id}`),
    )({ id: 'src_1' });
    const [pending] = await pendingIn(s.ann, conv.id);
    expect(runs).toEqual([]);
    await s.ann.inbox().approve(pending.id, { reason: 'fine' });

    expect(await running).toBe('deleted src_1');
    expect(runs).toEqual([{ id: 'src_1' }]);
    await conv.tollgate.flush(); // the result report goes in the background
    expect((await s.ann.getToolCall(pending.id)).status).toBe('completed');
    expect(longPolls()).toEqual([]);
    expect(fetch.calls.some((c) => c.method === 'GET' && c.url.endsWith(`/v1/tool-calls/${pending.id}`))).toBe(true);
    expect(await grpcWatches()).toBeGreaterThan(watchesBefore);
  });

  it('throws ToolCallRejectedError when a person rejects it', async () => {
    const { agent, longPolls } = grpcAgent();
    const conv = await agent.conversation({ id: 'grpc-rejected', user });
    const runs: unknown[] = [];
    const running = conv
      .guard('delete_source', async () => runs.push(1))({ id: 'src_2' })
      .catch((e: unknown) => e);
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().reject(pending.id, { reason: 'not today' });

    const e = await running;
    expect(e).toBeInstanceOf(ToolCallRejectedError);
    expect(e).toMatchObject({ status: 'rejected', reason: 'not today', decidedBy: { id: 'ann' }, via: 'cli' });
    expect(runs).toEqual([]);
    expect(longPolls()).toEqual([]);
  });

  it('ends at once with the signal’s reason when aborted; the function never runs', async () => {
    const { agent } = grpcAgent();
    const conv = await agent.conversation({ id: 'grpc-abort', user });
    const controller = new AbortController();
    const runs: unknown[] = [];
    const running = conv
      .guard('delete_source', async () => runs.push(1), { signal: controller.signal })({ id: 'src_3' })
      .catch((e: unknown) => e);
    const [pending] = await pendingIn(s.ann, conv.id);
    const reason = new Error('the user closed the chat');
    controller.abort(reason);
    expect(await running).toBe(reason);
    await s.ann.inbox().approve(pending.id);
    expect(runs).toEqual([]);
    expect((await s.ann.getToolCall(pending.id)).status).toBe('approved'); // never claimed
  });

  it('with a token the server refuses, fails with the tollgate-code of the refusal', async () => {
    const { agent: good } = grpcAgent();
    const conv = await good.conversation({ id: 'grpc-badtoken', user });
    const [call] = await conv
      .proposeStep([{ toolName: 'delete_source', arguments: { id: 'src_4' } }])
      .then((hs) => hs.map((h) => h.toolCall));
    expect(call.status).toBe('pending');
    // REST answers with the good token; only the watch carries the bad one.
    let grpcToken = 'not-a-jwt';
    const agent = new Tollgate({
      url: server.url,
      token: () => grpcToken,
      retry: FAST_RETRY,
      grpc: server.grpcAddress!,
      fetch: (u, i) =>
        fetch(u, {
          ...i,
          headers: { ...(i.headers as Record<string, string>), authorization: `Bearer ${s.agentToken}` },
        }),
    });
    clients.push(agent);
    const e = await agent.waitForDecision(call).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TollgateError);
    expect(e).toMatchObject({ status: 401, code: 'unauthenticated' });
    grpcToken = s.agentToken;
  });

  it('rides out a server restart: the watch is opened again on the new instance', async () => {
    const { agent, longPolls } = grpcAgent();
    const conv = await agent.conversation({ id: 'grpc-restart', user });
    const runs: unknown[] = [];
    const running = conv
      .guard(
        'delete_source',
        async (a: { id: string }) => (runs.push(a), 'deleted'),
      )({ id: 'src_5' })
      .catch((e: unknown) => e);
    const [pending] = await pendingIn(s.ann, conv.id);

    const port = Number(new URL(server.url).port);
    const grpcPort = Number(server.grpcAddress!.split(':').pop());
    await server.close(); // the watch ends UNAVAILABLE; new connections are refused
    server = await startTestServer({ port, grpcPort }, { db }); // the same addresses and database
    s = await setUp(server);
    await s.ann.inbox().approve(pending.id);

    expect(await running).toBe('deleted');
    expect(runs).toEqual([{ id: 'src_5' }]);
    await conv.tollgate.flush();
    expect((await s.ann.getToolCall(pending.id)).status).toBe('completed');
    expect(longPolls()).toEqual([]);
    expect(await grpcWatches()).toBeGreaterThanOrEqual(1); // the new instance served a watch
  });
});

describe('the delay a rate-limited watch is asked to wait', () => {
  it('is read from the server’s own grpc-status-details-bin (ErrorInfo retryAfter)', async () => {
    const { statusDetails } = await import('../../../src/adapters/grpc/grpc-errors.js');
    expect(retryAfterOf(statusDetails(8, 'slow down', 'rate_limited', { retryAfter: 7.2 }))).toBe(7.2);
    expect(retryAfterOf(statusDetails(8, 'slow down', 'rate_limited', { retryAfter: '3' }))).toBe(3);
    expect(retryAfterOf(statusDetails(8, 'slow down', 'rate_limited', {}))).toBeUndefined();
    expect(retryAfterOf(undefined)).toBeUndefined();
    expect(retryAfterOf(new Uint8Array([0x1a, 0x05, 0x01]))).toBeUndefined(); // truncated
  });
});
