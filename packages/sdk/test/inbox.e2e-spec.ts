/**
 * Approver programs: `tollgate.inbox()` lists what the caller may decide, decides (recorded with the client's
 * channel), and watches the live event stream, resuming with Last-Event-ID after a drop so nothing is missed.
 */
import { Tollgate, TollgateError, type AuditEvent, type StreamState } from '@tollgate/sdk';
import { withServer, tapFetch, until, type Setup, type TestServer } from './support.js';

let server: TestServer;
let s: Setup;

withServer((started, setup) => {
  server = started;
  s = setup;
});

const user = { id: 'ann', roles: ['admin'] };

/** Proposes one held call in a conversation of its own; answers the call's id. */
async function held(conv: string, id: string): Promise<string> {
  const c = await s.agent().conversation({ id: conv, user });
  return (await c.propose({ toolName: 'send_email', arguments: { to: `${id}@example.com` } })).id;
}

/** Reads events off `stream` until `stop` holds for one, answering all read. */
async function readUntil(stream: AsyncIterable<AuditEvent>, stop: (e: AuditEvent) => boolean): Promise<AuditEvent[]> {
  const seen: AuditEvent[] = [];
  for await (const e of stream) {
    seen.push(e);
    if (stop(e)) break;
  }
  return seen;
}

describe('inbox.list and inbox.all', () => {
  it('list pages through the pending calls, oldest first; all follows the cursors', async () => {
    const ids = [await held('inbox-list-1', 'a'), await held('inbox-list-2', 'b'), await held('inbox-list-3', 'c')];
    const inbox = s.ann.inbox();
    const first = await inbox.list({ limit: 2 });
    expect(first.items.map((i) => i.id)).toEqual(ids.slice(0, 2));
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await inbox.list({ limit: 2, cursor: first.nextCursor! });
    expect(second).toEqual({
      items: [
        expect.objectContaining({
          id: ids[2],
          conversation: {
            id: 'inbox-list-3',
            agentId: 'support-bot',
            user: { id: 'ann', roles: ['admin'], assurance: 'asserted' }, // named by the agent, not verified
            title: null,
          },
        }),
      ],
      nextCursor: null,
    });
    expect((await inbox.all()).map((i) => i.id)).toEqual(ids);
    for (const id of ids) await inbox.reject(id, { reason: 'cleanup' });
    expect(await inbox.all()).toEqual([]);
    expect((await inbox.all({ status: 'rejected' })).map((i) => i.id)).toEqual(ids);
  });
});

describe('inbox.decide', () => {
  it('records the channel, takes edited arguments, and refuses a second decision with the standing one', async () => {
    const id = await held('inbox-decide', 'd');
    const web = new Tollgate({ url: server.url, token: s.annToken, channel: 'web' });
    const call = await web
      .inbox()
      .decide(id, { decision: 'approve', reason: 'ok', arguments: { to: 'bea@example.com' } });
    expect(call.decision).toMatchObject({
      outcome: 'approved',
      by: { id: 'ann', via: 'web' },
      reason: 'ok',
      editedArguments: { to: 'bea@example.com' },
    });
    // The same request again changes nothing and answers 200; another one is refused.
    expect(
      (await web.inbox().decide(id, { decision: 'approve', reason: 'ok', arguments: { to: 'bea@example.com' } }))
        .status,
    ).toBe('approved');
    const refused = await s.ann
      .inbox()
      .reject(id, { reason: 'too late' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TollgateError);
    expect(refused).toMatchObject({
      status: 409,
      code: 'already_decided',
      problem: { toolCallStatus: 'approved', decision: { outcome: 'approved', by: { via: 'web' } } },
      requestId: expect.any(String),
    });
    expect((refused as TollgateError).extensions).toMatchObject({ toolCallStatus: 'approved' });
  });

  it('an agent token may not decide: 403 forbidden', async () => {
    const id = await held('inbox-agent', 'e');
    await expect(s.agent().inbox().approve(id)).rejects.toMatchObject({ status: 403, code: 'forbidden' });
  });
});

describe('inbox.watch', () => {
  it('yields the events as they happen, starting from now', async () => {
    const stream = s.ann.inbox().watch();
    const reading = readUntil(stream, (e) => e.type === 'ApprovalRequested' && e.conversationId === 'watch-live');
    // The stream opens before the proposal: it begins with what happens next, so wait for it to be live.
    const id = await openThen(stream, () => held('watch-live', 'f'));
    const seen = await reading;
    expect(seen.at(-1)).toMatchObject({
      type: 'ApprovalRequested',
      toolCallId: id,
      conversationId: 'watch-live',
      toolName: 'send_email',
      tenant: 'default',
    });
    expect(seen.map((e) => e.seq)).toEqual([...seen.map((e) => e.seq)].sort((a, b) => a - b));
  });

  it('after a dropped connection resumes with Last-Event-ID: nothing missed, nothing twice', async () => {
    // The first connection is cut after its first event; whatever happens meanwhile must arrive on the second.
    let connections = 0;
    const fetch = tapFetch(async (url, init, real) => {
      if (!url.includes('/v1/events/stream')) return undefined;
      connections += 1;
      const res = await real(url, init);
      if (connections > 1 || !res.body) return res;
      const reader = res.body.getReader();
      let text = '';
      const cut = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { value, done } = await reader.read();
          if (done) return controller.close();
          controller.enqueue(value);
          text += new TextDecoder().decode(value);
          if (/\nid: \d+\n[\s\S]*\n\n/.test(text)) {
            await reader.cancel();
            controller.error(new TypeError('terminated'));
          }
        },
      });
      return new Response(cut, { status: res.status, headers: res.headers });
    });
    const ann = new Tollgate({ url: server.url, token: s.annToken, fetch });
    const states: StreamState[] = [];
    const stream = ann.inbox().watch({ onState: (st) => states.push(st), maxDelayMs: 100 });
    const reading = readUntil(stream, (e) => e.type === 'ApprovalRequested' && e.conversationId === 'watch-drop-3');
    await openThen(stream, async () => {
      await held('watch-drop-1', 'g');
      await held('watch-drop-2', 'h');
      await held('watch-drop-3', 'i');
    });
    const seen = await reading;
    const requested = seen.filter((e) => e.type === 'ApprovalRequested').map((e) => e.conversationId);
    expect(requested).toEqual(['watch-drop-1', 'watch-drop-2', 'watch-drop-3']);
    const seqs = seen.map((e) => e.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(seqs.at(-1)! - seqs[0] + 1).toBe(seqs.length); // the admin sees every event: no gap

    const streams = fetch.calls.filter((c) => c.url.includes('/v1/events/stream'));
    expect(streams.length).toBeGreaterThanOrEqual(2);
    expect(streams[1].headers['last-event-id']).toBe(String(seqs[0]));
    expect(states.filter((st) => st.state === 'live').map((st) => st.opened)).toEqual(expect.arrayContaining([1, 2]));
    expect(states.some((st) => st.state === 'reconnecting' && st.error instanceof Error)).toBe(true);
  });

  it('resumes from a given lastEventId', async () => {
    await held('watch-from', 'j');
    const [event] = (await s.ann.listAuditEvents({ conversationId: 'watch-from', type: 'ConversationStarted' })).events;
    const seen = await readUntil(
      s.ann.inbox().watch({ lastEventId: event.seq - 1 }),
      (e) => e.type === 'ApprovalRequested' && e.conversationId === 'watch-from',
    );
    expect(seen[0]).toMatchObject({ seq: event.seq, type: 'ConversationStarted' });
  });

  it('a token the server refuses ends the iteration with a TollgateError; reconnecting would not help', async () => {
    const stream = new Tollgate({ url: server.url, token: 'nope' }).inbox().watch();
    await expect(readUntil(stream, () => true)).rejects.toMatchObject({ status: 401, code: 'unauthenticated' });
  });

  it('close() ends it quietly; the signal ends it with its reason', async () => {
    const quiet = s.ann.inbox().watch();
    const a = readUntil(quiet, () => false);
    await openThen(quiet, async () => undefined);
    quiet.close();
    expect(await a).toEqual([]);

    const controller = new AbortController();
    const loud = s.ann.inbox().watch({ signal: controller.signal });
    const b = readUntil(loud, () => false).catch((e: unknown) => e);
    await openThen(loud, async () => undefined);
    const reason = new Error('shutting down');
    controller.abort(reason);
    expect(await b).toBe(reason);
  });
});

/** Runs `then` once `stream` is live (its first connection accepted), answering what `then` answers. */
async function openThen<T>(stream: { lastEventId: string | undefined }, then: () => Promise<T>): Promise<T> {
  // The server's first comment names where the stream starts: once the stream knows it, it is live.
  await until(() => stream.lastEventId !== undefined, 10_000, 'the stream to open');
  return then();
}
