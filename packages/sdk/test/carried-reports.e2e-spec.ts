/**
 * A guarded call's background report waits one turn for the agent's next proposal in its conversation and goes
 * with it (`results`): one request per call when an agent runs its calls back to back. When nothing follows, or
 * the carrying proposal is refused, the report is sent alone. Read on the wire with a fetch that passes every
 * request to the real server (or, where a test says so, changes it on the way).
 */
import { TollgateError, type JsonValue, type ToolCall } from '@tollgate/sdk';
import { pendingIn, socketError, tapFetch, until, type Setup, withServer } from './support.js';

let s: Setup;
withServer((_server, setup) => {
  s = setup;
});

interface Sent {
  method: string;
  path: string;
  body?: { results?: Array<{ toolCallId: string; outcome: string; output?: JsonValue; error?: string }> };
  /** The answer's status, once it came. */
  status?: number;
  /** The problem's code and detail, for an answer that is one. */
  problem?: { code: string; detail: string };
}

/**
 * The agent's client over a fetch that records each request (its body parsed) and its answer's status.
 * `change` may answer a request itself, or send it on changed (a new init).
 */
function wired(
  o: {
    report?: 'background' | 'await';
    change?: (sent: Sent, init: RequestInit) => Promise<Response | RequestInit | undefined> | undefined;
  } = {},
) {
  const sent: Sent[] = [];
  const fetch = tapFetch(async (url, init, real) => {
    const one: Sent = { method: init.method ?? 'GET', path: new URL(url).pathname };
    if (typeof init.body === 'string') one.body = JSON.parse(init.body) as Sent['body'];
    sent.push(one);
    const changed = await o.change?.(one, init);
    if (changed instanceof Response) return ((one.status = changed.status), changed);
    const answer = await real(url, changed ?? init);
    one.status = answer.status;
    if (answer.status >= 400) one.problem = (await answer.clone().json()) as Sent['problem'];
    return answer;
  });
  const reportErrors: Array<{ error: unknown; call: ToolCall }> = [];
  const tollgate = s.agent({
    fetch,
    retry: { initialDelayMs: 10, maxDelayMs: 20, maxAttempts: 2 },
    onReportError: (error, call) => reportErrors.push({ error, call }),
    ...(o.report ? { report: o.report } : {}),
  });
  return { tollgate, sent, reportErrors };
}

let n = 0;
async function conversationOf(tollgate: ReturnType<typeof wired>['tollgate']) {
  n += 1;
  return tollgate.conversation({ id: `carried-${n}`, user: { id: 'ann', roles: ['admin'], name: 'Ann' } });
}

const proposalsOf = (sent: Sent[]) => sent.filter((r) => r.method === 'POST' && r.path.endsWith('/tool-calls'));
const resultPath = (id: string) => `/v1/tool-calls/${id}/result`;
/** What the server holds of each call, by id. */
async function onRecord(conv: Awaited<ReturnType<typeof conversationOf>>): Promise<Map<string, ToolCall>> {
  return new Map((await conv.refresh()).toolCalls!.map((t) => [t.id, t]));
}

/** A function for guard() that answers its arguments and the id of its call. */
const echo = async (a: { id: string }, ctx: { toolCall: ToolCall }) => ({ id: a.id, call: ctx.toolCall.id });

describe('back-to-back guarded calls', () => {
  it('20 in a row: each proposal after the first carries the previous result, one request per call', async () => {
    const c = wired();
    const conv = await conversationOf(c.tollgate);
    const before = c.sent.length;
    const guarded = conv.guard('get_source', echo);
    const outs: Array<{ id: string; call: string }> = [];
    for (let i = 0; i < 20; i++) outs.push(await guarded({ id: `src_${i}` }));
    const byLoop = c.sent.slice(before);
    const ids = outs.map((o) => o.call);
    const proposals = proposalsOf(byLoop);
    expect(proposals).toHaveLength(20);
    expect(proposals[0].body).not.toHaveProperty('results');
    proposals.slice(1).forEach((p, i) => {
      expect(p.body!.results).toEqual([{ toolCallId: ids[i], outcome: 'succeeded', output: outs[i] }]);
      expect(p.status).toBe(201);
    });
    // Nothing but proposals on the wire, save the last call's report, which nothing took along.
    const others = byLoop.filter((r) => !proposals.includes(r));
    expect(others.every((r) => r.path === resultPath(ids[19]))).toBe(true);

    await c.tollgate.close();
    expect(c.sent.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual([
      ...proposals.map(() => `POST /v1/conversations/${conv.id}/tool-calls`),
      `POST ${resultPath(ids[19])}`,
    ]);
    const held = await onRecord(conv);
    expect(held.size).toBe(20);
    outs.forEach((out) =>
      expect(held.get(out.call)).toMatchObject({ status: 'completed', result: { outcome: 'succeeded', output: out } }),
    );
    expect(c.reportErrors).toEqual([]);
  });

  it('framework ids the API would refuse (hashed, which takes more than a turn): the reports wait for the hash', async () => {
    const c = wired();
    const conv = await conversationOf(c.tollgate);
    const before = c.sent.length;
    const guarded = conv.guard('get_source', echo);
    const outs: Array<{ id: string; call: string }> = [];
    for (let i = 0; i < 5; i++) outs.push(await guarded({ id: `src_${i}` }, { id: `framework id #${i}` }));
    await c.tollgate.close();
    const proposals = proposalsOf(c.sent.slice(before));
    expect(proposals.map((p) => p.body?.results?.map((r) => r.toolCallId))).toEqual([
      undefined,
      ...outs.slice(0, -1).map((o) => [o.call]),
    ]);
    expect(c.sent.slice(before).filter((r) => r.path.endsWith('/result'))).toHaveLength(1);
    const held = await onRecord(conv);
    outs.forEach((out) => expect(held.get(out.call)?.status).toBe('completed'));
  });

  it('a single call with nothing after it: the report goes alone, and flush() waits for it', async () => {
    const c = wired();
    const conv = await conversationOf(c.tollgate);
    const before = c.sent.length;
    const out = await conv.guard('get_source', echo)({ id: 'src_1' });
    // It waits a turn for a proposal that may follow: not sent yet when the guard returns.
    expect(c.sent.slice(before).map((r) => r.path)).toEqual([`/v1/conversations/${conv.id}/tool-calls`]);
    // Answered by the time flush() returns.
    await c.tollgate.flush();
    expect(c.sent.slice(before).map((r) => [r.path, r.status])).toEqual([
      [`/v1/conversations/${conv.id}/tool-calls`, 201],
      [resultPath(out.call), 200],
    ]);
    expect((await onRecord(conv)).get(out.call)).toMatchObject({
      status: 'completed',
      result: { outcome: 'succeeded', output: out },
    });
  });

  it('three in parallel in one turn, then another step: the step carries all three results', async () => {
    const c = wired();
    const conv = await conversationOf(c.tollgate);
    const before = c.sent.length;
    const guarded = conv.guard('get_source', echo);
    const step = await Promise.all(['a', 'b', 'c'].map((id) => guarded({ id })));
    const next = await guarded({ id: 'd' });
    const proposals = proposalsOf(c.sent.slice(before));
    expect(proposals.map((p) => p.body as { toolCalls: unknown[] }).map((b) => b.toolCalls.length)).toEqual([3, 1]);
    expect(proposals[0].body).not.toHaveProperty('results');
    expect(proposals[1].body!.results).toEqual(
      expect.arrayContaining(step.map((out) => ({ toolCallId: out.call, outcome: 'succeeded', output: out }))),
    );
    expect(proposals[1].body!.results).toHaveLength(3);
    await c.tollgate.close();
    expect(c.sent.slice(before).filter((r) => r.path.endsWith('/result'))).toEqual([
      expect.objectContaining({ path: resultPath(next.call), status: 200 }),
    ]);
    const held = await onRecord(conv);
    expect([...held.values()].map((t) => t.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    for (const out of [...step, next])
      expect(held.get(out.call)!.result).toMatchObject({ outcome: 'succeeded', output: out });
  });

  it('a function that throws: its failed report goes with the next proposal', async () => {
    const c = wired();
    const conv = await conversationOf(c.tollgate);
    const before = c.sent.length;
    let failedId = '';
    const boom = new Error('backend said 502');
    await expect(
      conv.guard('get_source', async (_a, ctx) => {
        failedId = ctx.toolCall.id;
        throw boom;
      })({ id: 'x' }),
    ).rejects.toBe(boom);
    const next = await conv.guard('get_source', echo)({ id: 'y' });
    const proposals = proposalsOf(c.sent.slice(before));
    expect(proposals[1].body!.results).toEqual([
      { toolCallId: failedId, outcome: 'failed', error: 'backend said 502' },
    ]);
    await c.tollgate.flush();
    const held = await onRecord(conv);
    expect(held.get(failedId)).toMatchObject({
      status: 'completed',
      result: { outcome: 'failed', error: 'backend said 502' },
    });
    expect(held.get(next.call)!.status).toBe('completed');
    expect(
      c.sent
        .slice(before)
        .filter((r) => r.path.endsWith('/result'))
        .map((r) => r.path),
    ).toEqual([resultPath(next.call)]);
  });
});

describe("report: 'await'", () => {
  it('never sends results: each report goes alone before the guard returns', async () => {
    const c = wired({ report: 'await' });
    const conv = await conversationOf(c.tollgate);
    const before = c.sent.length;
    const guarded = conv.guard('get_source', echo);
    const outs = [];
    for (let i = 0; i < 3; i++) outs.push(await guarded({ id: `s${i}` }));
    await c.tollgate.close();
    const sent = c.sent.slice(before);
    expect(sent.map((r) => r.path)).toEqual(
      outs.flatMap((o) => [`/v1/conversations/${conv.id}/tool-calls`, resultPath(o.call)]),
    );
    expect(proposalsOf(sent).filter((p) => p.body && 'results' in p.body)).toEqual([]);
  });

  it('as a guard option on a background client, likewise', async () => {
    const c = wired();
    const conv = await conversationOf(c.tollgate);
    const before = c.sent.length;
    const guarded = conv.guard('get_source', echo, { report: 'await' });
    const first = await guarded({ id: 'a' });
    const second = await guarded({ id: 'b' });
    expect(c.sent.slice(before).map((r) => r.path)).toEqual([
      `/v1/conversations/${conv.id}/tool-calls`,
      resultPath(first.call),
      `/v1/conversations/${conv.id}/tool-calls`,
      resultPath(second.call),
    ]);
    expect(proposalsOf(c.sent.slice(before)).filter((p) => p.body && 'results' in p.body)).toEqual([]);
  });
});

/** 70,000 bytes of JSON: over the 64 KiB the server takes as an output. */
const TOO_LARGE = 'x'.repeat(70_000);

/** The init with its body's first carried result's output replaced by one too large. */
function withLargeResult(init: RequestInit): RequestInit {
  const body = JSON.parse(init.body as string) as { results: Array<{ output?: JsonValue }> };
  body.results[0].output = TOO_LARGE;
  return { ...init, body: JSON.stringify(body) };
}

describe('a carrying proposal that is refused', () => {
  it('for its result (413): the report goes alone, the proposal again without it, and later ones carry again', async () => {
    let refusals = 0;
    const c = wired({
      change: async (r, init) => {
        if (!r.body?.results || refusals > 0) return undefined;
        refusals += 1;
        return withLargeResult(init);
      },
    });
    const conv = await conversationOf(c.tollgate);
    const before = c.sent.length;
    const guarded = conv.guard('get_source', echo);
    const first = await guarded({ id: 'a' });
    const second = await guarded({ id: 'b' });
    const third = await guarded({ id: 'c' });
    // The function ran: the proposal went again without the refused result.
    expect(second).toEqual({ id: 'b', call: second.call });
    await c.tollgate.flush();
    const sent = c.sent.slice(before);
    const proposals = proposalsOf(sent);
    expect(proposals.map((p) => [p.body!.results?.map((x) => x.toolCallId), p.status])).toEqual([
      [undefined, 201],
      [[first.call], 413],
      [undefined, 201],
      [[second.call], 201],
    ]);
    expect(proposals[1].problem).toMatchObject({
      code: 'payload_too_large',
      detail: expect.stringContaining('results[0].output'),
    });
    expect(sent.filter((r) => r.path.endsWith('/result')).map((r) => [r.path, r.body, r.status])).toEqual([
      [resultPath(first.call), { outcome: 'succeeded', output: first }, 200],
      [resultPath(third.call), { outcome: 'succeeded', output: third }, 200],
    ]);
    expect(c.reportErrors).toEqual([]);
    const held = await onRecord(conv);
    for (const out of [first, second, third])
      expect(held.get(out.call)).toMatchObject({ status: 'completed', result: { outcome: 'succeeded', output: out } });
  });

  it('and the report alone is refused too: only that one goes to onReportError; the proposal still succeeds', async () => {
    let firstId = '';
    const c = wired({
      change: async (r, init) => {
        if (r.body?.results?.[0]?.toolCallId === firstId) return withLargeResult(init);
        if (r.path === resultPath(firstId)) return { ...init, body: JSON.stringify({ ...r.body, output: TOO_LARGE }) };
        return undefined;
      },
    });
    const conv = await conversationOf(c.tollgate);
    const guarded = conv.guard('get_source', echo);
    const first = await guarded({ id: 'a' });
    firstId = first.call;
    // Set in the turn the report waits, before the next proposal takes it along.
    const second = await guarded({ id: 'b' });
    await c.tollgate.flush();
    expect(c.reportErrors).toHaveLength(1);
    expect(c.reportErrors[0].call).toMatchObject({ id: first.call, status: 'executed' });
    expect(c.reportErrors[0].error).toBeInstanceOf(TollgateError);
    expect(c.reportErrors[0].error).toMatchObject({ status: 413, code: 'payload_too_large' });
    const held = await onRecord(conv);
    expect(held.get(first.call)!.status).toBe('executed');
    expect(held.get(second.call)).toMatchObject({
      status: 'completed',
      result: { outcome: 'succeeded', output: second },
    });
  });

  it('by a server that knows no results (unknown field): that conversation carries nothing from then on', async () => {
    const c = wired({
      change: async (r) =>
        r.body?.results
          ? new Response(
              JSON.stringify({
                type: 'urn:tollgate:problem:validation_failed',
                title: 'Bad Request',
                status: 400,
                detail: 'results: unknown field "results"',
                code: 'validation_failed',
                errors: [{ path: 'results', message: 'unknown field "results"' }],
              }),
              { status: 400, headers: { 'content-type': 'application/problem+json' } },
            )
          : undefined,
    });
    const conv = await conversationOf(c.tollgate);
    const before = c.sent.length;
    const guarded = conv.guard('get_source', echo);
    const outs = [];
    for (let i = 0; i < 4; i++) outs.push(await guarded({ id: `s${i}` }));
    await c.tollgate.flush();
    const sent = c.sent.slice(before);
    // One refusal, then each report alone.
    expect(proposalsOf(sent).map((p) => [p.body!.results?.length, p.status])).toEqual([
      [undefined, 201],
      [1, 400],
      [undefined, 201],
      [undefined, 201],
      [undefined, 201],
    ]);
    expect(sent.filter((r) => r.path.endsWith('/result')).map((r) => [r.path, r.status])).toEqual(
      outs.map((o) => [resultPath(o.call), 200]),
    );
    expect(c.reportErrors).toEqual([]);
    const held = await onRecord(conv);
    for (const out of outs) expect(held.get(out.call)!.status).toBe('completed');

    // Another conversation of the same client still carries.
    const other = await conversationOf(c.tollgate);
    const mark = c.sent.length;
    await other.guard('get_source', echo)({ id: 'o1' });
    await other.guard('get_source', echo)({ id: 'o2' });
    await c.tollgate.flush();
    expect(proposalsOf(c.sent.slice(mark)).map((p) => [p.body!.results?.length, p.status])).toEqual([
      [undefined, 201],
      [1, 400],
      [undefined, 201],
    ]);
  });

  it('blocked by a pending call: the report goes alone at once, not after the wait', async () => {
    const c = wired();
    const conv = await conversationOf(c.tollgate);
    const before = c.sent.length;
    const guarded = conv.guard('get_source', echo);
    // One step: the guarded call, and one for a person, which stays pending and blocks the next step.
    const [first, pending] = await Promise.all([
      guarded({ id: 'a' }),
      conv.propose({ toolName: 'delete_source', arguments: { id: 'src_9' } }),
    ]);
    const next = guarded({ id: 'b' });
    await pendingIn(s.ann, conv.id);
    await until(
      async () => (await onRecord(conv)).get(first.call)!.status === 'completed',
      10_000,
      'the first report, alone',
    );
    const blocked = proposalsOf(c.sent.slice(before)).filter((p) => p.status === 409);
    expect(blocked.map((p) => p.body!.results)).toEqual([
      [{ toolCallId: first.call, outcome: 'succeeded', output: first }],
    ]);
    await s.ann.inbox().approve(pending.id);
    const second = await next;
    await c.tollgate.flush();
    expect(
      c.sent
        .slice(before)
        .filter((r) => r.path.endsWith('/result'))
        .map((r) => [r.path, r.status]),
    ).toEqual([
      [resultPath(first.call), 200],
      [resultPath(second.call), 200],
    ]);
    expect(c.reportErrors).toEqual([]);
  });

  it('halted: the report goes alone (accepted during the halt) and the proposal throws halted', async () => {
    let convId = '';
    const c = wired({
      // The halt comes between the guard's return and the next proposal's arrival.
      change: async (r) => {
        if (r.body?.results) await s.ann.halt({ scope: 'conversation', id: convId, reason: 'drill' });
        return undefined;
      },
    });
    const conv = await conversationOf(c.tollgate);
    convId = conv.id;
    const before = c.sent.length;
    const guarded = conv.guard('get_source', echo);
    const first = await guarded({ id: 'a' });
    try {
      const error = await guarded({ id: 'b' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TollgateError);
      expect(error).toMatchObject({ status: 503, code: 'halted' });
      await c.tollgate.flush();
      expect(
        c.sent
          .slice(before)
          .filter((r) => r.path.endsWith('/result'))
          .map((r) => [r.path, r.status]),
      ).toEqual([[resultPath(first.call), 200]]);
      expect(c.reportErrors).toEqual([]);
      expect((await onRecord(conv)).get(first.call)).toMatchObject({
        status: 'completed',
        result: { outcome: 'succeeded', output: first },
      });
    } finally {
      await s.ann.resume({ scope: 'conversation', id: conv.id });
    }
  });
});

describe('a carrying proposal whose answers are lost', () => {
  it('the report goes alone, sent before: already on record is taken as done, not as an error', async () => {
    const c = wired({
      change: async (r, init) => {
        if (!r.body?.results) return undefined;
        // It reaches the server, and its answer never comes back.
        await fetch(`${s.server.url}${r.path}`, init);
        throw socketError();
      },
    });
    const conv = await conversationOf(c.tollgate);
    const before = c.sent.length;
    const guarded = conv.guard('get_source', echo);
    const first = await guarded({ id: 'a' });
    const error = await guarded({ id: 'b' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'network_error' });
    await c.tollgate.flush();
    const sent = c.sent.slice(before);
    expect(proposalsOf(sent).map((p) => p.body!.results?.length)).toEqual([undefined, 1, 1]);
    // Already on record from the lost attempt: answered `already_completed`, taken as done.
    expect(sent.filter((r) => r.path.endsWith('/result')).map((r) => [r.path, r.status, r.problem?.code])).toEqual([
      [resultPath(first.call), 409, 'already_completed'],
    ]);
    expect(c.reportErrors).toEqual([]);
    expect((await onRecord(conv)).get(first.call)).toMatchObject({
      status: 'completed',
      result: { outcome: 'succeeded', output: first },
    });
  });
});
