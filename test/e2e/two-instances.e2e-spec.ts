import { freshDatabase, TestDatabase } from '../support/database';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

/**
 * Two stateless instances on one PostgreSQL behave as one service: a decision or an expiry on one wakes
 * long-polls on the other (LISTEN/NOTIFY). PostgreSQL only: the embedded database is one process's.
 */
const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;

onPostgres('two instances sharing one PostgreSQL', () => {
  let db: TestDatabase;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    db = await freshDatabase();
    // A re-reads on its own only after a minute, longer than any wait here: only a notification can wake it in time.
    a = await startTestServer({ instanceId: 'a', sweepIntervalMs: 0, longPollRecheckMs: 60_000 }, { db });
    b = await startTestServer({ instanceId: 'b', sweepIntervalMs: 100 }, { db });
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await db?.drop();
  });

  async function pendingCall(conv: string, policyTimeout?: number): Promise<{ agent: string; id: string }> {
    const agent = await a.token('bot', ['agent']);
    await client(a.url).post('/v1/conversations', agent, { id: conv });
    const call: Record<string, unknown> = { toolName: policyTimeout ? 'short_lived' : 'unknown_tool', arguments: {} };
    const r = await client(a.url).post(`/v1/conversations/${conv}/tool-calls`, agent, { toolCalls: [call] });
    expect(r.body.toolCalls[0].status).toBe('pending');
    return { agent, id: r.body.toolCalls[0].id };
  }

  /** A 30 s long-poll; A re-reads on its own only at the end of it. */
  async function longPoll(server: TestServer, token: string, id: string): Promise<string> {
    return (await client(server.url).get(`/v1/tool-calls/${id}?wait=30`, token)).body.status;
  }

  /** Whether the long-poll answered before the wait ran out: only a wake-up can make it. */
  function beforeTheWaitEnds(poll: Promise<string>): Promise<string> {
    return Promise.race([
      poll,
      new Promise<string>((r) => setTimeout(() => r('still waiting half-way through the wait'), 15_000)),
    ]);
  }

  it('a decision taken on B wakes a long-poll on A', async () => {
    const { agent, id } = await pendingCall('conv-wake');
    const poll = longPoll(a, agent, id);
    await new Promise((r) => setTimeout(r, 300)); // the poll is waiting on A
    const ann = await b.token('ann', ['approver']);
    expect((await client(b.url).post(`/v1/tool-calls/${id}/decision`, ann, { decision: 'approve' })).status).toBe(200);
    expect(await beforeTheWaitEnds(poll)).toBe('approved');
  }, 60_000);

  it('a long-poll on A answers expired when the call expires (B sweeps, A checks on read)', async () => {
    const admin = await a.token('root', ['admin']);
    await client(a.url).put('/v1/policy', admin, {
      rules: [{ match: 'short_lived', level: 'confirm', timeoutSeconds: 1 }],
    });
    const { agent, id } = await pendingCall('conv-expire', 1);
    expect(await beforeTheWaitEnds(longPoll(a, agent, id))).toBe('expired');
  }, 60_000);

  it('an event stream on A carries what is committed on B', async () => {
    const ann = await a.token('ann', ['approver']);
    const agent = await b.token('bot', ['agent']);
    const res = await fetch(`${a.url}/v1/events/stream`, { headers: { authorization: `Bearer ${ann}` } });
    const reader = res.body!.getReader();
    let text = '';
    await client(b.url).post('/v1/conversations', agent, { id: 'streamed-from-b' });
    const deadline = Date.now() + 15_000;
    while (!text.includes('streamed-from-b') && Date.now() < deadline) {
      const { value, done } = await Promise.race([
        reader.read(),
        new Promise<{ value: undefined; done: true }>((r) =>
          setTimeout(() => r({ value: undefined, done: true }), 15_000),
        ),
      ]);
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    await reader.cancel();
    expect(text).toMatch(/event: ConversationStarted\ndata: .*"conversationId":"streamed-from-b"/);
  }, 30_000);

  it('both instances see the same state and the audit chain stays whole', async () => {
    const auditor = await a.token('audrey', ['auditor']);
    const fromA = (await client(a.url).get('/v1/audit/events?limit=1000', auditor)).body.events;
    const fromB = (await client(b.url).get('/v1/audit/events?limit=1000', auditor)).body.events;
    expect(fromA).toEqual(fromB);
    expect(new Set(fromA.map((e: { instanceId: string }) => e.instanceId))).toEqual(new Set(['a', 'b']));
    expect((await client(b.url).get('/v1/audit/verify', auditor)).body).toMatchObject({ ok: true });
  });
});
