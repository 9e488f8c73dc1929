/**
 * "Ask a human" through HTTP: an agent asks a question in a conversation, long-polls for the answer, and a
 * person answers it from the same inbox as approvals. First answer wins, choices are enforced, agents never
 * answer, tenants are walls, unanswered questions expire and a halt cancels them; every step is in the chain.
 */
import { Tollgate } from '@tollgate/sdk';
import { eventsOf, expectIntactChain } from '../support/audit';
import { client, Reply } from '../support/http';
import { freshDatabase } from '../support/database';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;
let agent: string;
let ann: string; // the conversations' end user, no role
let bob: string; // an approver
let root: string; // an admin
let audrey: string; // an auditor
let stranger: string; // another tenant's admin

beforeAll(async () => {
  server = await startTestServer({ sweepIntervalMs: 100 });
  http = client(server.url);
  agent = await server.token('bot', ['agent']);
  ann = await server.token('ann', [], { name: 'Ann' });
  bob = await server.token('bob', ['approver'], { name: 'Bob' });
  root = await server.token('root', ['admin']);
  audrey = await server.token('audrey', ['auditor']);
  stranger = await server.token('root', ['admin'], { tenant: 'other' });
});

afterAll(async () => {
  await server?.stop();
});

function expectProblem(res: Reply, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

async function conversation(id: string) {
  expect((await http.post('/v1/conversations', agent, { id, user: { id: 'ann', name: 'Ann' } })).status).toBe(201);
}

async function ask(convId: string, body: Record<string, unknown>) {
  const res = await http.post(`/v1/conversations/${convId}/questions`, agent, body);
  expect(res.status).toBe(201);
  return res.body;
}

describe('an agent asks and waits; a person answers', () => {
  let q: any;
  let waited: Promise<Reply>;

  beforeAll(async () => {
    await conversation('qa-1');
    q = await ask('qa-1', { text: 'Proceed with the EU or the US region?', choices: ['EU', 'US'] });
  });

  it('answers the question pending, with its defaults', () => {
    expect(q).toMatchObject({
      id: expect.stringMatching(/^q_/),
      conversationId: 'qa-1',
      text: 'Proceed with the EU or the US region?',
      choices: ['EU', 'US'],
      allowFreeText: false,
      askTo: ['requester', 'approver', 'admin'],
      status: 'pending',
      timeoutSeconds: 300,
    });
    expect(Date.parse(q.expiresAt) - Date.parse(q.createdAt)).toBe(300_000);
  });

  it('shows it in the inboxes of the user, approvers and admins, not of auditors; agents are refused the inbox', async () => {
    for (const t of [ann, bob, root]) {
      const page = await http.get('/v1/questions?status=pending', t);
      expect(page.status).toBe(200);
      expect(page.body.items.map((i: any) => i.id)).toContain(q.id);
    }
    expect((await http.get('/v1/questions', audrey)).body.items).toEqual([]);
    expectProblem(await http.get('/v1/questions', agent), 403, 'forbidden');
  });

  it('wakes the long-polling agent with the answer', async () => {
    waited = http.get(`/v1/questions/${q.id}?wait=30`, agent);
    // The answer may land before or after the poll opens its watch: either way it comes back answered.
    await new Promise((r) => setTimeout(r, 200));
    const res = await http.post(`/v1/questions/${q.id}/answer`, ann, { answer: 'EU' }, { 'X-Tollgate-Channel': 'web' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'answered',
      answer: { text: 'EU', by: { id: 'ann', name: 'Ann', via: 'web' } },
    });
    const woke = await waited;
    expect(woke.status).toBe(200);
    expect(woke.body).toMatchObject({ id: q.id, status: 'answered', answer: { text: 'EU', by: { id: 'ann' } } });
  });

  it('takes the same answer from the same person again unchanged, and refuses any other', async () => {
    const again = await http.post(`/v1/questions/${q.id}/answer`, ann, { answer: 'EU' });
    expect(again.status).toBe(200);
    expect(again.body.answer.at).toBeDefined();
    expectProblem(await http.post(`/v1/questions/${q.id}/answer`, ann, { answer: 'US' }), 409, 'already_answered');
    const other = await http.post(`/v1/questions/${q.id}/answer`, bob, { answer: 'EU' });
    expectProblem(other, 409, 'already_answered');
    expect(other.body.questionStatus).toBe('answered');
  });

  it('lists it among the answered ones', async () => {
    const page = await http.get('/v1/questions?status=answered', bob);
    expect(page.body.items.map((i: any) => i.id)).toContain(q.id);
  });
});

describe('rules', () => {
  beforeAll(async () => {
    await conversation('qa-2');
  });

  it('enforces choices, naming the field', async () => {
    const q = await ask('qa-2', { text: 'Region?', choices: ['EU', 'US'] });
    const res = await http.post(`/v1/questions/${q.id}/answer`, bob, { answer: 'APAC' });
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.errors.map((e: any) => e.path)).toEqual(['answer']);
    const free = await ask('qa-2', { text: 'Region?', choices: ['EU', 'US'], allowFreeText: true });
    expect((await http.post(`/v1/questions/${free.id}/answer`, bob, { answer: 'APAC' })).body.answer.text).toBe('APAC');
  });

  it('refuses a bad question naming each field', async () => {
    const res = await http.post('/v1/conversations/qa-2/questions', agent, {
      text: 'Region?',
      choices: ['EU', 'EU'],
      timeoutSeconds: 0,
      askTo: ['auditor'],
    });
    expectProblem(res, 400, 'validation_failed');
    expect(res.body.errors.map((e: any) => e.path).sort()).toEqual(['askTo[0]', 'choices[1]', 'timeoutSeconds']);
    expectProblem(
      await http.post('/v1/conversations/qa-2/questions', agent, { text: 'Region?', extra: 1 }),
      400,
      'validation_failed',
    );
  });

  it('lets one of two simultaneous answers win: one 200, one 409 already_answered', async () => {
    const q = await ask('qa-2', { text: 'Go?', choices: ['yes', 'no'] });
    const [a, b] = await Promise.all([
      http.post(`/v1/questions/${q.id}/answer`, bob, { answer: 'yes' }),
      http.post(`/v1/questions/${q.id}/answer`, root, { answer: 'no' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const loser = a.status === 409 ? a : b;
    expect(loser.body.code).toBe('already_answered');
    const winner = a.status === 200 ? a : b;
    expect((await http.get(`/v1/questions/${q.id}`, agent)).body.answer).toEqual(winner.body.answer);
  });

  it('never takes an answer from an agent (403), and askTo limits who answers', async () => {
    const q = await ask('qa-2', { text: 'Which account?', askTo: ['requester'] });
    expectProblem(await http.post(`/v1/questions/${q.id}/answer`, agent, { answer: 'acme' }), 403, 'forbidden');
    expectProblem(await http.post(`/v1/questions/${q.id}/answer`, agent, { nope: 1 }), 403, 'forbidden');
    expectProblem(await http.post(`/v1/questions/${q.id}/answer`, root, { answer: 'acme' }), 403, 'forbidden');
    expect((await http.post(`/v1/questions/${q.id}/answer`, ann, { answer: 'acme' })).status).toBe(200);
  });

  it('only the conversation agent asks', async () => {
    const other = await server.token('other-bot', ['agent']);
    expectProblem(await http.post('/v1/conversations/qa-2/questions', other, { text: 'hi?' }), 404, 'not_found');
    expectProblem(await http.post('/v1/conversations/qa-2/questions', root, { text: 'hi?' }), 403, 'forbidden');
  });

  it('is idempotent by the agent id: same content answers the same question, other content 409', async () => {
    const first = await ask('qa-2', { id: 'ask_1', text: 'EU or US?', choices: ['EU', 'US'] });
    const again = await http.post('/v1/conversations/qa-2/questions', agent, {
      id: 'ask_1',
      text: 'EU or US?',
      choices: ['EU', 'US'],
    });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.id);
    expect(again.body.externalId).toBe('ask_1');
    expectProblem(
      await http.post('/v1/conversations/qa-2/questions', agent, {
        id: 'ask_1',
        text: 'EU or APAC?',
        choices: ['EU', 'APAC'],
      }),
      409,
      'idempotency_mismatch',
    );
  });

  it('is a 404 in another tenant, and for people who may not read the conversation', async () => {
    const q = await ask('qa-2', { text: 'Hidden?' });
    expectProblem(await http.get(`/v1/questions/${q.id}`, stranger), 404, 'not_found');
    expectProblem(await http.post(`/v1/questions/${q.id}/answer`, stranger, { answer: 'x' }), 404, 'not_found');
    const carl = await server.token('carl', []);
    expectProblem(await http.get(`/v1/questions/${q.id}`, carl), 404, 'not_found');
    expect((await http.get(`/v1/questions/${q.id}`, audrey)).status).toBe(200);
  });
});

describe('endings', () => {
  it('expires an unanswered question by the sweeper, without anyone reading it', async () => {
    await conversation('qa-3');
    const q = await ask('qa-3', { text: 'Quick?', timeoutSeconds: 1 });
    let seen: any;
    for (let i = 0; i < 100; i++) {
      // The inbox list does not expire anything itself.
      const page = await http.get('/v1/questions?status=expired', bob);
      seen = page.body.items.find((x: any) => x.id === q.id);
      if (seen) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(seen).toMatchObject({ status: 'expired', endedAt: expect.any(String) });
    expectProblem(await http.post(`/v1/questions/${q.id}/answer`, bob, { answer: 'late' }), 409, 'already_answered');
  });

  it('a halt cancels the open questions of its scope and refuses new ones', async () => {
    await conversation('qa-4');
    const q = await ask('qa-4', { text: 'Still there?' });
    const waited = http.get(`/v1/questions/${q.id}?wait=30`, agent);
    expect(
      (await http.post('/v1/halt', root, { scope: 'conversation', id: 'qa-4', reason: 'incident drill' })).status,
    ).toBe(200);
    const res = await waited;
    expect(res.body).toMatchObject({ status: 'cancelled', reason: 'incident drill' });
    expectProblem(await http.post('/v1/conversations/qa-4/questions', agent, { text: 'Again?' }), 503, 'halted');
    expect((await http.post('/v1/resume', root, { scope: 'conversation', id: 'qa-4' })).status).toBe(200);
  });
});

describe('the audit trail', () => {
  it('holds every question event, readable by the conversation parties, and the chain is intact', async () => {
    const trail = await http.get('/v1/audit/events?conversationId=qa-1', root);
    const types = trail.body.events.map((e: any) => e.type);
    expect(types).toEqual(expect.arrayContaining(['QuestionAsked', 'QuestionAnswered']));
    const answered = trail.body.events.find((e: any) => e.type === 'QuestionAnswered');
    expect(answered.data).toMatchObject({ by: 'ann', via: 'web', answer: 'EU', latencyMs: expect.any(Number) });
    const all = await http.get('/v1/audit/events?type=QuestionExpired,QuestionCancelled', root);
    expect(all.body.events.map((e: any) => e.type).sort()).toEqual(
      expect.arrayContaining(['QuestionCancelled', 'QuestionExpired']),
    );
    expectIntactChain(await eventsOf(server.dataSource, 'default'));
    expect((await http.get('/v1/audit/verify', root)).body).toMatchObject({ ok: true });
  });
});

/** The types of the event stream's frames from the start (Last-Event-ID: 0) until `enough` holds of them. */
async function streamTypes(
  token: string,
  enough: (frames: Array<{ type: string; conversationId?: string }>) => boolean,
) {
  const controller = new AbortController();
  const res = await fetch(`${server.url}/v1/events/stream`, {
    headers: { authorization: `Bearer ${token}`, 'last-event-id': '0' },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  const frames: Array<{ type: string; conversationId?: string }> = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    while (!enough(frames)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const data = buffer
          .slice(0, cut)
          .split('\n')
          .find((l) => l.startsWith('data: '));
        buffer = buffer.slice(cut + 2);
        if (data) frames.push(JSON.parse(data.slice(6)));
      }
    }
  } finally {
    controller.abort();
  }
  return frames;
}

describe('the live event stream', () => {
  it("carries question events to the conversation's user, and not to another agent", async () => {
    const mine = await streamTypes(ann, (f) =>
      f.some((e) => e.type === 'QuestionAnswered' && e.conversationId === 'qa-1'),
    );
    expect(mine.filter((e) => e.conversationId === 'qa-1').map((e) => e.type)).toEqual(
      expect.arrayContaining(['QuestionAsked', 'QuestionAnswered']),
    );
    const otherBot = await server.token('stream-bot', ['agent']);
    expect((await http.post('/v1/conversations', otherBot, { id: 'qa-marker' })).status).toBe(201);
    const theirs = await streamTypes(otherBot, (f) => f.some((e) => e.conversationId === 'qa-marker'));
    expect(theirs.filter((e) => e.type.startsWith('Question'))).toEqual([]);
  });
});

describe('the SDK', () => {
  it('conv.ask waits for the answer a person gives with tollgate.answer', async () => {
    const agentSdk = new Tollgate({ url: server.url, token: agent });
    const bobSdk = new Tollgate({ url: server.url, token: bob, channel: 'cli' });
    const conv = await agentSdk.conversation({ id: 'qa-sdk', user: { id: 'ann' } });
    const asked = conv.ask('Bill ACME or Globex?', { choices: ['ACME', 'Globex'], id: 'bill_1' });
    let pending: any[] = [];
    for (let i = 0; i < 100 && pending.length === 0; i++) {
      pending = (await bobSdk.questions.pending()).items.filter((q) => q.conversationId === 'qa-sdk');
      if (pending.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(pending).toHaveLength(1);
    await bobSdk.answer(pending[0].id, 'Globex');
    await expect(asked).resolves.toMatchObject({ status: 'answered', answer: 'Globex', by: { id: 'bob', via: 'cli' } });
  });
});

// Two instances share nothing but PostgreSQL (the embedded database is one instance).
(process.env.DATABASE_URL ? describe : describe.skip)('two instances', () => {
  it('an answer on one instance wakes a long-poll on the other through the database notification', async () => {
    const db = await freshDatabase();
    // Instance a re-reads only every minute and the poll waits as long: only the notification can end it before
    // the test's own timeout.
    const a = await startTestServer({ instanceId: 'a', sweepIntervalMs: 0, longPollRecheckMs: 60_000 }, { db });
    const b = await startTestServer({ instanceId: 'b' }, { db });
    try {
      const onA = client(a.url);
      const onB = client(b.url);
      const bot = await a.token('bot', ['agent']);
      expect((await onA.post('/v1/conversations', bot, { id: 'qa-two', user: { id: 'ann' } })).status).toBe(201);
      const q = (await onA.post('/v1/conversations/qa-two/questions', bot, { text: 'Across?' })).body;
      const waited = onA.get(`/v1/questions/${q.id}?wait=60`, bot);
      await new Promise((r) => setTimeout(r, 300));
      expect(
        (await onB.post(`/v1/questions/${q.id}/answer`, await b.token('bob', ['approver']), { answer: 'yes' })).status,
      ).toBe(200);
      expect((await waited).body).toMatchObject({ status: 'answered', answer: { text: 'yes' } });
    } finally {
      await a.stop();
      await b.stop();
      await db.drop();
    }
  });
});

describe('open questions are bounded per conversation and per agent', () => {
  let bounded: TestServer;
  let api: ReturnType<typeof client>;
  let bot: string;
  let person: string;

  beforeAll(async () => {
    bounded = await startTestServer({ openQuestions: { perConversation: 3, perAgent: 5 } });
    api = client(bounded.url);
    bot = await bounded.token('flood-bot', ['agent']);
    person = await bounded.token('ann', []);
    for (const id of ['lim-1', 'lim-2'])
      expect((await api.post('/v1/conversations', bot, { id, user: { id: 'ann' } })).status).toBe(201);
  });

  afterAll(async () => {
    await bounded?.stop();
  });

  it('takes exactly the limit of concurrent asks in one conversation, refuses the rest with 409 too_many_open_questions, and frees a place on an answer', async () => {
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        api.post('/v1/conversations/lim-1/questions', bot, { text: `Question ${i}?`, id: `ask-${i}` }),
      ),
    );
    const created = answers.filter((r) => r.status === 201);
    expect(created).toHaveLength(3);
    const refused = answers.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(5);
    for (const r of refused) {
      expectProblem(r, 409, 'too_many_open_questions');
      expect(r.body).toMatchObject({ limit: 3, scope: 'conversation' });
    }
    // The agent's retry of a question it asked is answered as it stands, full or not.
    const first = created[0].body;
    expect(
      (await api.post('/v1/conversations/lim-1/questions', bot, { text: first.text, id: first.externalId })).status,
    ).toBe(200);
    expect((await api.post(`/v1/questions/${first.id}/answer`, person, { answer: 'yes' })).status).toBe(200);
    expect((await api.post('/v1/conversations/lim-1/questions', bot, { text: 'One more?' })).status).toBe(201);
  });

  it("takes exactly the agent's limit of concurrent asks spread over its conversations", async () => {
    const racer = await bounded.token('race-bot', ['agent']);
    const convs = ['race-1', 'race-2', 'race-3', 'race-4', 'race-5', 'race-6', 'race-7', 'race-8'];
    for (const id of convs)
      expect((await api.post('/v1/conversations', racer, { id, user: { id: 'ann' } })).status).toBe(201);
    const answers = await Promise.all(
      convs.map((id) => api.post(`/v1/conversations/${id}/questions`, racer, { text: `In ${id}?` })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(5);
    for (const r of answers.filter((r) => r.status !== 201))
      expect(r.body).toMatchObject({ code: 'too_many_open_questions', scope: 'agent', limit: 5 });
  });

  it("counts the agent's open questions across its conversations", async () => {
    expect((await api.post('/v1/conversations/lim-2/questions', bot, { text: 'Elsewhere?' })).status).toBe(201);
    expect((await api.post('/v1/conversations/lim-2/questions', bot, { text: 'And here?' })).status).toBe(201);
    const sixth = await api.post('/v1/conversations/lim-2/questions', bot, { text: 'Sixth?' });
    expectProblem(sixth, 409, 'too_many_open_questions');
    expect(sixth.body).toMatchObject({ limit: 5, scope: 'agent' });
    // Another agent of the tenant has its own count.
    const other = await bounded.token('other-bot', ['agent']);
    expect((await api.post('/v1/conversations', other, { id: 'lim-3' })).status).toBe(201);
    expect(
      (await api.post('/v1/conversations/lim-3/questions', other, { text: 'Mine?', askTo: ['approver'] })).status,
    ).toBe(201);
  });
});
