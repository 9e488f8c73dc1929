import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { collectSseFrames, type SseFrame } from '../support/sse';

type Frame = SseFrame<{ seq: number; type: string; tenant: string; conversationId?: string }>;

/** Reads an SSE response frame by frame. */
function open(url: string, token: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const frames: Frame[] = [];
  let status = 0;
  let contentType = '';
  const done = (async () => {
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${token}`, ...headers },
      signal: controller.signal,
    });
    status = res.status;
    contentType = res.headers.get('content-type') ?? '';
    if (!res.ok || !res.body) return;
    await collectSseFrames(res.body, frames);
  })();
  return {
    frames,
    status: () => status,
    contentType: () => contentType,
    /** Until the answer's head arrived (the stream is open, or refused): no guess at how long that takes. */
    async opened(ms = 10_000) {
      const end = Date.now() + ms;
      while (status === 0) {
        if (Date.now() > end) throw new Error('the stream answered nothing');
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async until(pred: (f: Frame[]) => boolean, ms = 10_000) {
      const end = Date.now() + ms;
      while (!pred(frames)) {
        if (Date.now() > end)
          throw new Error(`stream did not get there: ${JSON.stringify(frames.map((f) => [f.id, f.event]))}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async close() {
      controller.abort();
      await done.catch(() => undefined);
    },
  };
}

describe('GET /v1/events/stream', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    server = await startTestServer({ streamPollMs: 200 });
    api = client(server.url);
  });
  afterAll(() => server.stop());

  it('streams new events of the tenant live, as id/event/data frames in seq order', async () => {
    const ann = await server.token('ann', ['approver'], { tenant: 'live' });
    const agent = await server.token('bot', ['agent'], { tenant: 'live' });
    await api.post('/v1/conversations', agent, { id: 'before' }); // before the stream: not replayed
    const s = open(`${server.url}/v1/events/stream`, ann);
    await s.opened();
    expect(s.status()).toBe(200);
    expect(s.contentType()).toMatch(/^text\/event-stream/);
    await api.post('/v1/conversations', agent, { id: 'during' });
    await api.post('/v1/conversations/during/tool-calls', agent, {
      toolCalls: [{ toolName: 'needs_person', arguments: {} }],
    });
    await s.until((f) => f.length >= 3);
    expect(s.frames.map((f) => f.event)).toEqual(['ConversationStarted', 'ToolCallProposed', 'ApprovalRequested']);
    for (const f of s.frames) expect(f.id).toBe(f.data.seq);
    expect(s.frames[0].data.conversationId).toBe('during');
    await s.close();
  });

  it('resumes after Last-Event-ID with what happened while disconnected', async () => {
    const ann = await server.token('ann', ['admin'], { tenant: 'resume' });
    const agent = await server.token('bot', ['agent'], { tenant: 'resume' });
    await api.post('/v1/conversations', agent, { id: 'r1' });
    await api.post('/v1/conversations', agent, { id: 'r2' });
    await api.post('/v1/conversations', agent, { id: 'r3' });
    const all = (await api.get('/v1/audit/events', ann)).body.events as Array<{ seq: number }>;
    const s = open(`${server.url}/v1/events/stream`, ann, { 'Last-Event-ID': String(all[0].seq) });
    await s.until((f) => f.length >= 2);
    expect(s.frames.map((f) => f.data.conversationId)).toEqual(['r2', 'r3']);
    await s.close();
    const q = open(`${server.url}/v1/events/stream?lastEventId=${all[1].seq}`, ann);
    await q.until((f) => f.length >= 1);
    expect(q.frames.map((f) => f.data.conversationId)).toEqual(['r3']);
    await q.close();
  });

  it('shows agents only the events of their own conversations, and never another tenant', async () => {
    const mine = await server.token('bot-a', ['agent'], { tenant: 'walls' });
    const theirs = await server.token('bot-b', ['agent'], { tenant: 'walls' });
    const stranger = await server.token('bot-a', ['agent'], { tenant: 'elsewhere' });
    const s = open(`${server.url}/v1/events/stream?lastEventId=0`, mine);
    await s.opened();
    await api.post('/v1/conversations', theirs, { id: 'b-conv' });
    await api.post('/v1/conversations', stranger, { id: 'a-conv' });
    await api.post('/v1/conversations', mine, { id: 'a-conv' });
    await s.until((f) => f.length >= 1);
    await new Promise((r) => setTimeout(r, 500));
    expect(s.frames.map((f) => [f.data.tenant, f.data.conversationId])).toEqual([['walls', 'a-conv']]);
    await s.close();
  });

  describe('shows each principal only what its roles may read over REST', () => {
    interface Listed {
      seq: number;
      type: string;
      conversationId?: string;
    }
    let all: Listed[];
    const tenant = 'roles';

    beforeAll(async () => {
      const t = (sub: string, roles: string[]) => server.token(sub, roles, { tenant });
      const admin = await t('ada', ['admin']);
      const botA = await t('bot-a', ['agent']);
      const botB = await t('bot-b', ['agent']);
      const step = async (r: Promise<{ status: number }>) => expect((await r).status).toBeLessThan(300);
      await step(
        api.put('/v1/policy', admin, {
          defaults: { unknownTools: 'confirm' },
          rules: [{ match: 'get_*', level: 'automatic' }],
        }),
      );
      await step(api.put('/v1/tools/get_weather', botA, { isReadOnly: true }));
      await step(api.post('/v1/webhooks', admin, { url: 'http://127.0.0.1:9/hook', events: ['ToolCallApproved'] }));
      await step(api.post('/v1/conversations', botA, { id: 'for-rita', user: { id: 'rita' } }));
      await step(
        api.post('/v1/conversations/for-rita/tool-calls', botA, {
          toolCalls: [{ toolName: 'delete_source', arguments: { id: 'src_1' } }],
        }),
      );
      await step(api.post('/v1/conversations', botB, { id: 'for-sam', user: { id: 'sam' } }));
      await step(
        api.post('/v1/conversations/for-sam/tool-calls', botB, {
          toolCalls: [{ toolName: 'wire_money', arguments: { amount: 1e6 } }],
        }),
      );
      await step(api.post('/v1/halt', admin, { scope: 'agent', id: 'bot-b', reason: 'review' }));
      await step(api.post('/v1/resume', admin, { scope: 'agent', id: 'bot-b' }));
      // Last, for each principal something it may see, so its stream is known to have gone past everything before.
      await step(api.post('/v1/conversations', botB, { id: 'm-weird', user: { id: 'weird' } }));
      await step(api.post('/v1/conversations', botB, { id: 'm-nobody', user: { id: 'nobody' } }));
      await step(api.post('/v1/conversations', botA, { id: 'm-rita', user: { id: 'rita' } }));
      await step(api.put('/v1/tools/get_time', admin, { isReadOnly: true }));
      all = (await api.get(`/v1/audit/events?limit=1000`, admin)).body.events;
      expect(new Set(all.map((e) => e.type))).toEqual(
        new Set([
          'PolicyUpdated',
          'ToolRegistered',
          'WebhookCreated',
          'ConversationStarted',
          'ToolCallProposed',
          'ApprovalRequested',
          'ToolCallCancelled',
          'Halted',
          'Resumed',
        ]),
      );
    });

    /** Opens the stream from the start and checks it carries exactly `expected`, in order. */
    async function seesExactly(sub: string, roles: string[], expected: Listed[]) {
      expect(expected.length).toBeGreaterThan(0);
      const s = open(`${server.url}/v1/events/stream?lastEventId=0`, await server.token(sub, roles, { tenant }));
      const last = expected[expected.length - 1].seq;
      await s.until((f) => f.some((x) => x.id >= last));
      await s.close();
      expect(s.frames.filter((f) => f.id <= last).map((f) => [f.id, f.event])).toEqual(
        expected.map((e) => [e.seq, e.type]),
      );
    }
    const inConversations =
      (...ids: string[]) =>
      () =>
        all.filter((e) => e.conversationId !== undefined && ids.includes(e.conversationId));

    it('a token with no role: only the conversations it is the requester of', async () => {
      await seesExactly('nobody', [], inConversations('m-nobody')());
    });

    it('a token with an unknown role: the same as no role', async () => {
      await seesExactly('weird', ['aprover'], inConversations('m-weird')());
    });

    it('the requester: its own conversations, nothing of the tenant beyond them', async () => {
      await seesExactly('rita', [], inConversations('for-rita', 'm-rita')());
    });

    it('an agent: the conversations it started, even with admin beside agent', async () => {
      await seesExactly('bot-a', ['agent'], inConversations('for-rita', 'm-rita')());
      await seesExactly('bot-a', ['agent', 'admin'], inConversations('for-rita', 'm-rita')());
    });

    it('an approver: every conversation, the policy, tools and halts, but not webhooks', async () => {
      await seesExactly(
        'appr',
        ['approver'],
        all.filter(
          (e) =>
            e.conversationId !== undefined || ['PolicyUpdated', 'ToolRegistered', 'Halted', 'Resumed'].includes(e.type),
        ),
      );
      expect(all.some((e) => e.type === 'WebhookCreated')).toBe(true);
    });

    it('an auditor and an admin: everything of the tenant', async () => {
      await seesExactly('aud', ['auditor'], all);
      await seesExactly('ada', ['admin'], all);
    });
  });

  it('refuses a missing token and a malformed Last-Event-ID', async () => {
    expect((await api.get('/v1/events/stream')).status).toBe(401);
    const ann = await server.token('ann', ['approver'], { tenant: 'live' });
    const r = await api.get('/v1/events/stream', ann, { 'Last-Event-ID': 'yesterday' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
  });
});
