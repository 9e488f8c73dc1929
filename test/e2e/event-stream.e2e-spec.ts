import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

interface Frame {
  id: number;
  event: string;
  data: { seq: number; type: string; tenant: string; conversationId?: string };
}

/** Reads an SSE response frame by frame. */
function open(url: string, token: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const frames: Frame[] = [];
  let status = 0;
  let contentType = '';
  const done = (async () => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, ...headers }, signal: controller.signal });
    status = res.status;
    contentType = res.headers.get('content-type') ?? '';
    if (!res.ok || !res.body) return;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done: end } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (end) return;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const field = (name: string) => block.split('\n').find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
        if (field('id')) frames.push({ id: Number(field('id')), event: field('event')!, data: JSON.parse(field('data')!) });
      }
    }
  })();
  return {
    frames,
    status: () => status,
    contentType: () => contentType,
    async until(pred: (f: Frame[]) => boolean, ms = 10_000) {
      const end = Date.now() + ms;
      while (!pred(frames)) {
        if (Date.now() > end) throw new Error(`stream did not get there: ${JSON.stringify(frames.map((f) => [f.id, f.event]))}`);
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
    await new Promise((r) => setTimeout(r, 300));
    expect(s.status()).toBe(200);
    expect(s.contentType()).toMatch(/^text\/event-stream/);
    await api.post('/v1/conversations', agent, { id: 'during' });
    await api.post('/v1/conversations/during/tool-calls', agent, { toolCalls: [{ toolName: 'needs_person', arguments: {} }] });
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
    await new Promise((r) => setTimeout(r, 300));
    await api.post('/v1/conversations', theirs, { id: 'b-conv' });
    await api.post('/v1/conversations', stranger, { id: 'a-conv' });
    await api.post('/v1/conversations', mine, { id: 'a-conv' });
    await s.until((f) => f.length >= 1);
    await new Promise((r) => setTimeout(r, 500));
    expect(s.frames.map((f) => [f.data.tenant, f.data.conversationId])).toEqual([['walls', 'a-conv']]);
    await s.close();
  });

  it('refuses a missing token and a malformed Last-Event-ID', async () => {
    expect((await api.get('/v1/events/stream')).status).toBe(401);
    const ann = await server.token('ann', ['approver'], { tenant: 'live' });
    const r = await api.get('/v1/events/stream', ann, { 'Last-Event-ID': 'yesterday' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
  });
});
