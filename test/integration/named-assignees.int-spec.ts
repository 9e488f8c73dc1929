/**
 * People named in a policy (`person:<id or email>`) against the real service and database: the policy is read and
 * stored lowercased, the named person lists the call in GET /v1/approvals (and only that call), opens it, gets its
 * events on the live stream, and decides it; someone whose role the call does not list may not; a quorum that
 * names a person counts that person's approval and no one else's.
 */
import { client, Reply } from '../support/http';
import { startTestServer, TestServer } from '../support/server';
import { until } from '../support/wait';

let server: TestServer;
let http: ReturnType<typeof client>;
let admin: string;
let agent: string;
/** Named by email, written in other capitals than the policy's; a role that decides nothing by itself. */
let ann: string;
/** A role approver the policy does not name. */
let bob: string;
let cfo: string;
let carol: string;

beforeAll(async () => {
  server = await startTestServer({ streamPollMs: 100 });
  http = client(server.url);
  admin = await server.token('root', ['admin']);
  agent = await server.token('bot', ['agent']);
  ann = await server.token('u-ann', ['viewer'], { email: 'Ann@Example.com', name: 'Ann' });
  bob = await server.token('bob', ['approver']);
  cfo = await server.token('cfo', ['viewer']);
  carol = await server.token('carol', ['admin']);
  const put = await http.put('/v1/policy', admin, {
    rules: [
      { match: 'send_invoice', level: 'confirm', approvers: ['person:ANN@example.com'] },
      { match: 'pay_vendor', level: 'confirm', approvers: ['person:ann@example.com', 'approver'] },
      { match: 'wire_money', level: 'confirm', approvers: ['admin'], quorum: { count: 1, of: ['person:cfo'] } },
      { match: 'refund', level: 'notify', approvers: ['person:ann@example.com'] },
      {
        match: 'close_account',
        level: 'confirm',
        approvers: ['admin'],
        // Long enough for the checks before it, even on a busy machine.
        escalate: [{ after: 3, approvers: ['person:Ann@example.com'], notify: ['push', 'email'] }],
      },
    ],
  });
  expect(put.status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
});

function expectProblem(res: Reply, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

let n = 0;
/** One call in a conversation of its own (a conversation holds one pending step at a time). */
async function propose(toolName: string): Promise<{ id: string; conversationId: string }> {
  const conversationId = `conv-${toolName}-${++n}`;
  expect((await http.post('/v1/conversations', agent, { id: conversationId })).status).toBe(201);
  const r = await http.post(`/v1/conversations/${conversationId}/tool-calls`, agent, {
    toolCalls: [{ toolName, arguments: { amount: n } }],
  });
  expect(r.status).toBe(201);
  expect(r.body.toolCalls[0].status).toBe('pending');
  return { id: r.body.toolCalls[0].id, conversationId };
}

const pendingIds = async (token: string) =>
  ((await http.get('/v1/approvals', token)).body.items as Array<{ id: string }>).map((i) => i.id);
const decide = (id: string, token: string, decision = 'approve') =>
  http.post(`/v1/tool-calls/${id}/decision`, token, { decision, ...(decision === 'reject' && { reason: 'no' }) });

describe('a policy naming people', () => {
  it('is stored with the names lowercased, and a malformed name is refused with 400 at its path', async () => {
    const policy = (await http.get('/v1/policy', admin)).body;
    expect(policy.rules[0].approvers).toEqual(['person:ann@example.com']);
    const bad = await http.put('/v1/policy', admin, {
      rules: [{ match: 'x', level: 'confirm', quorum: { count: 1, of: ['person:c f o'] } }],
    });
    expectProblem(bad, 400, 'validation_failed');
    expect(bad.body.errors).toEqual([
      { path: 'rules[0].quorum.of[0]', message: expect.stringContaining('without whitespace') },
    ]);
  });
});

describe('a person named among the approvers', () => {
  it('lists, opens and approves the call, matched by email whatever its capitals; a role approver may not', async () => {
    const unnamed = await propose('wire_money');
    const invoice = await propose('send_invoice');
    const listed = await pendingIds(ann);
    expect(listed).toContain(invoice.id);
    expect(listed).not.toContain(unnamed.id);
    expect(await pendingIds(bob)).not.toContain(invoice.id);

    // The call, not the rest of its conversation; nor another's call.
    const opened = await http.get(`/v1/tool-calls/${invoice.id}`, ann);
    expect(opened.status).toBe(200);
    expect(opened.body.approval.approvers).toEqual(['person:ann@example.com']);
    expectProblem(await http.get(`/v1/conversations/${invoice.conversationId}`, ann), 404, 'not_found');
    expectProblem(await http.get(`/v1/tool-calls/${unnamed.id}`, ann), 404, 'not_found');

    expectProblem(await decide(invoice.id, bob), 403, 'forbidden');
    const approved = await decide(invoice.id, ann);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', decision: { by: { id: 'u-ann', name: 'Ann' } } });
    expect(await pendingIds(ann)).not.toContain(invoice.id);
    // Still theirs to read once decided (the card of a call that left the inbox).
    expect((await http.get(`/v1/tool-calls/${invoice.id}`, ann)).status).toBe(200);
    expect((await http.get('/v1/approvals?status=approved', ann)).body.items.map((i: any) => i.id)).toContain(
      invoice.id,
    );
  });

  it('leaves a role listed beside the person to decide too', async () => {
    const vendor = await propose('pay_vendor');
    expect(await pendingIds(ann)).toContain(vendor.id);
    expect(await pendingIds(bob)).toContain(vendor.id);
    expect((await decide(vendor.id, bob)).status).toBe(200);
  });

  it('is refused without the email on the token: a name is matched, not guessed', async () => {
    const invoice = await propose('send_invoice');
    const noEmail = await server.token('u-ann', ['viewer']);
    expect(await pendingIds(noEmail)).not.toContain(invoice.id);
    expectProblem(await decide(invoice.id, noEmail), 404, 'not_found');
    expect((await decide(invoice.id, ann, 'reject')).status).toBe(200);
  });

  it("gets the call's events on the live stream, and not those of calls that do not name them", async () => {
    const stream = await openStream(ann);
    try {
      const unnamed = await propose('wire_money');
      const invoice = await propose('send_invoice');
      await stream.until((f) => f.some((e) => e.type === 'ApprovalRequested' && e.toolCallId === invoice.id));
      expect((await decide(invoice.id, ann)).status).toBe(200);
      await stream.until((f) => f.some((e) => e.type === 'ToolCallApproved' && e.toolCallId === invoice.id));
      // A notify call waits for no one: the person it names is told, by its ToolCallNotified alone.
      const refund = await http.post(`/v1/conversations/${invoice.conversationId}/tool-calls`, agent, {
        toolCalls: [{ toolName: 'refund', arguments: {} }],
      });
      expect(refund.body.toolCalls[0].status).toBe('approved');
      const refundId = refund.body.toolCalls[0].id;
      await stream.until((f) => f.some((e) => e.type === 'ToolCallNotified' && e.toolCallId === refundId));
      expect(stream.frames.filter((e) => e.toolCallId === refundId).map((e) => e.type)).toEqual(['ToolCallNotified']);
      // Seq order: anything of the unnamed call, proposed first, would have come before.
      expect(stream.frames.filter((e) => e.conversationId === unnamed.conversationId)).toEqual([]);
      expect(stream.frames.filter((e) => e.toolCallId === invoice.id).map((e) => e.type)).toEqual([
        'ToolCallProposed',
        'ApprovalRequested',
        'ToolCallApproved',
      ]);
    } finally {
      await stream.close();
    }
  });

  // Two instances share one database on PostgreSQL only: embedded PGlite belongs to the one process that opened it.
  (process.env.DATABASE_URL ? it : it.skip)(
    'gets them from another instance too, resuming after the request: who is named is read from the call',
    async () => {
      const invoice = await propose('send_invoice');
      const trail = (await http.get(`/v1/audit/events?toolCallId=${invoice.id}`, admin)).body.events;
      const asked = trail.find((e: any) => e.type === 'ApprovalRequested').seq;
      // A second instance on the same database has never seen the request: it learns who the call names from it.
      const other = await startTestServer({ streamPollMs: 100 }, { db: server.db });
      const stream = await openStream(ann, other.url, String(asked));
      try {
        expect((await decide(invoice.id, ann)).status).toBe(200);
        await stream.until((f) => f.some((e) => e.type === 'ToolCallApproved' && e.toolCallId === invoice.id));
        expect(stream.frames.every((e) => e.toolCallId === invoice.id)).toBe(true);
      } finally {
        await stream.close();
        await other.stop();
      }
    },
  );
});

describe('an escalation step that names a person', () => {
  it('lets them list and decide the call once the step is taken, and not before', async () => {
    const close = await propose('close_account');
    expect(await pendingIds(ann)).not.toContain(close.id);
    expectProblem(await decide(close.id, ann), 404, 'not_found');
    await until(async () => (await pendingIds(ann)).includes(close.id), 15_000, 'the escalation');
    const trail = (await http.get(`/v1/audit/events?toolCallId=${close.id}`, admin)).body.events;
    expect(trail.find((e: any) => e.type === 'ToolCallEscalated').data).toMatchObject({
      added: ['person:ann@example.com'],
      approvers: ['admin', 'person:ann@example.com'],
      notify: ['push', 'email'],
    });
    expect((await decide(close.id, ann)).status).toBe(200);
  });
});

describe('a quorum that names a person', () => {
  it("lets the named person decide and counts their approval; an admin's does not count", async () => {
    const wire = await propose('wire_money');
    const opened = await http.get(`/v1/tool-calls/${wire.id}`, admin);
    expect(opened.body.approval.approvers).toEqual(['admin', 'person:cfo']);
    expect(await pendingIds(cfo)).toContain(wire.id);

    expectProblem(await decide(wire.id, carol), 403, 'forbidden');
    expect((await http.get(`/v1/tool-calls/${wire.id}`, admin)).body.status).toBe('pending');
    const approved = await decide(wire.id, cfo);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', decision: { by: { id: 'cfo' } } });
  });

  it('still lets an admin among the approvers reject it', async () => {
    const wire = await propose('wire_money');
    const rejected = await decide(wire.id, carol, 'reject');
    expect(rejected.status).toBe(200);
    expect(rejected.body.status).toBe('rejected');
  });
});

interface StreamEvent {
  type: string;
  toolCallId?: string;
  conversationId?: string;
}

/** GET /v1/events/stream as `token` (after `lastEventId`, when given), its events collected as they come. */
async function openStream(token: string, url = server.url, lastEventId?: string) {
  const controller = new AbortController();
  const frames: StreamEvent[] = [];
  const res = await fetch(`${url}/v1/events/stream`, {
    headers: { authorization: `Bearer ${token}`, ...(lastEventId && { 'last-event-id': lastEventId }) },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  const reading = (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const data = buffer
          .slice(0, cut)
          .split('\n')
          .find((l) => l.startsWith('data: '));
        buffer = buffer.slice(cut + 2);
        if (data) frames.push(JSON.parse(data.slice('data: '.length)));
      }
    }
  })();
  return {
    frames,
    async until(pred: (f: StreamEvent[]) => boolean, ms = 10_000) {
      const end = Date.now() + ms;
      while (!pred(frames)) {
        if (Date.now() > end) throw new Error(`the stream did not get there: ${JSON.stringify(frames)}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async close() {
      controller.abort();
      await reading.catch(() => undefined);
    },
  };
}
