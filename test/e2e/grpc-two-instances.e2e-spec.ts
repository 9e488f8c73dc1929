import { freshDatabase, TestDatabase } from '../support/database';
import { struct, TollgateGrpc, Watch } from '../support/grpc';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

/**
 * A gRPC watch on one instance is woken by what another instance commits (LISTEN/NOTIFY), as a REST long-poll
 * is. PostgreSQL only: the embedded database is one process's.
 */
const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;

onPostgres('a gRPC watch with two instances sharing one PostgreSQL', () => {
  let db: TestDatabase;
  let a: TestServer;
  let b: TestServer;
  let rpcA: TollgateGrpc;
  let rpcB: TollgateGrpc;

  beforeAll(async () => {
    db = await freshDatabase();
    // A re-reads on its own only after a minute, longer than any wait here: only a notification can wake it in time.
    a = await startTestServer({ instanceId: 'a', sweepIntervalMs: 0, longPollRecheckMs: 60_000 }, { db });
    b = await startTestServer({ instanceId: 'b', sweepIntervalMs: 100 }, { db });
    rpcA = new TollgateGrpc(a.grpcAddress!);
    rpcB = new TollgateGrpc(b.grpcAddress!);
  });

  afterAll(async () => {
    rpcA?.close();
    rpcB?.close();
    await a?.stop();
    await b?.stop();
    await db?.drop();
  });

  async function pendingCall(
    conversationId: string,
    toolName = 'unknown_tool',
  ): Promise<{ agent: string; id: string }> {
    const agent = await a.token('bot', ['agent']);
    await rpcA.call('StartConversation', { id: conversationId }, agent);
    const { toolCalls } = await rpcA.call(
      'ProposeToolCalls',
      { conversationId, toolCalls: [{ toolName, arguments: struct({}) }] },
      agent,
    );
    expect(toolCalls[0].status).toBe('TOOL_CALL_STATUS_PENDING');
    return { agent, id: toolCalls[0].id };
  }

  /** How the watch ended, or a note that it had not within 15 s, half of A's re-check period. */
  function endedInTime(watch: Watch): Promise<unknown> {
    return Promise.race([watch.ended, new Promise((r) => setTimeout(() => r('still watching after 15 s'), 15_000))]);
  }

  it('a REST decision taken on B ends a watch on A with the decision', async () => {
    const { agent, id } = await pendingCall('conv-rest-on-b');
    const watch = rpcA.watch(id, agent);
    await watch.received(1);
    const ann = await b.token('ann', ['approver'], { name: 'Ann' });
    expect(
      (
        await client(b.url).post(
          `/v1/tool-calls/${id}/decision`,
          ann,
          { decision: 'approve' },
          { 'X-Tollgate-Channel': 'web' },
        )
      ).status,
    ).toBe(200);
    expect(await endedInTime(watch)).toEqual({ ok: true });
    expect(watch.messages.map((m) => m.status)).toEqual(['TOOL_CALL_STATUS_PENDING', 'TOOL_CALL_STATUS_APPROVED']);
    expect(watch.messages[1].decision.by).toMatchObject({ id: 'ann', via: 'CHANNEL_WEB' });
  }, 60_000);

  it('a gRPC rejection on B ends a watch on A', async () => {
    const { agent, id } = await pendingCall('conv-grpc-on-b');
    const watch = rpcA.watch(id, agent);
    await watch.received(1);
    await rpcB.call(
      'DecideToolCall',
      { id, decision: 'DECISION_KIND_REJECT', reason: 'not today' },
      await b.token('ann', ['approver']),
    );
    expect(await endedInTime(watch)).toEqual({ ok: true });
    expect(watch.messages[1]).toMatchObject({
      status: 'TOOL_CALL_STATUS_REJECTED',
      decision: { reason: 'not today', by: { via: 'CHANNEL_GRPC' } },
    });
  }, 60_000);

  it('a watch on A ends expired when the call expires (B sweeps)', async () => {
    await client(a.url).put('/v1/policy', await a.token('root', ['admin']), {
      rules: [{ match: 'short_lived', level: 'confirm', timeoutSeconds: 1 }],
    });
    const { agent, id } = await pendingCall('conv-expire', 'short_lived');
    const watch = rpcA.watch(id, agent);
    expect(await endedInTime(watch)).toEqual({ ok: true });
    expect(watch.messages.map((m) => m.status)).toEqual(['TOOL_CALL_STATUS_PENDING', 'TOOL_CALL_STATUS_EXPIRED']);
  }, 60_000);
});
