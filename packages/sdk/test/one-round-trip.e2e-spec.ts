/**
 * A guarded auto-approved call costs the agent one request: the proposal claims it (`claim: true`), the function
 * runs with the claim's arguments and receipt, and the result is reported in the background (`report`), which
 * `flush()` and `close()` wait for. Counted on the wire with a fetch that passes every request to the real server.
 */
import { TollgateError, verifyReceipt, type ToolCall } from '@tollgate/sdk';
import { jest } from '@jest/globals';
import { pendingIn, tapFetch, until, type Setup, type TestServer, withServer } from './support.js';

let server: TestServer;
let s: Setup;
withServer((started, setup) => {
  server = started;
  s = setup;
});

/** The agent's client over a counting fetch; `fail` makes chosen requests fail as a network error would. */
function counted(o: { report?: 'background' | 'await'; fail?: (url: string) => boolean } = {}) {
  const fetch = tapFetch((url) => (o.fail?.(url) ? Promise.reject(new TypeError('fetch failed')) : undefined));
  const reportErrors: Array<{ error: unknown; call: ToolCall }> = [];
  const tollgate = s.agent({
    fetch,
    retry: { initialDelayMs: 10, maxDelayMs: 20, maxAttempts: 2 },
    onReportError: (error, call) => reportErrors.push({ error, call }),
    ...(o.report ? { report: o.report } : {}),
  });
  const paths = () => fetch.calls.map((c) => `${c.method} ${new URL(c.url).pathname}`);
  return { tollgate, fetch, paths, reportErrors };
}

let n = 0;
async function conversationOf(tollgate: ReturnType<typeof counted>['tollgate']) {
  n += 1;
  return tollgate.conversation({ id: `one-trip-${n}`, user: { id: 'ann', roles: ['admin'], name: 'Ann' } });
}

describe('guard of an auto-approved call', () => {
  it('makes one request before the function runs and none more before it returns; the report lands by flush()', async () => {
    const c = counted();
    const conv = await conversationOf(c.tollgate);
    const before = c.fetch.calls.length;
    let seenWhileRunning: string[] = [];
    const getSource = conv.guard('get_source', async (args: { id: string }, ctx) => {
      seenWhileRunning = c.paths().slice(before);
      return { id: args.id, receipt: ctx.receipt };
    });
    const out = await getSource({ id: 'src_1' });
    const byReturn = c.paths().slice(before);
    expect(seenWhileRunning).toEqual([`POST /v1/conversations/${conv.id}/tool-calls`]);
    // The report may be on the wire already, but the guard did not wait for it.
    expect(byReturn.filter((p) => !p.endsWith('/result'))).toEqual(seenWhileRunning);
    const claims = await verifyReceipt(out.receipt, {
      jwksUrl: `${server.url}/.well-known/jwks.json`,
      tenant: 'default',
      toolName: 'get_source',
      arguments: { id: 'src_1' },
    });
    await c.tollgate.flush();
    expect(c.paths().slice(before)).toEqual([...seenWhileRunning, `POST /v1/tool-calls/${claims.tcid}/result`]);
    const [call] = (await conv.refresh()).toolCalls!;
    expect(call).toMatchObject({ id: claims.tcid, status: 'completed', result: { outcome: 'succeeded' } });
    const events = await s.ann.listAuditEvents({ toolCallId: call.id });
    expect(events.events.map((e) => e.type)).toEqual([
      'ToolCallProposed',
      'ToolCallAutoApproved',
      'ToolCallExecuted',
      'ToolCallCompleted',
    ]);
  });

  it("with report: 'await' the result is on record when the guard returns", async () => {
    const c = counted({ report: 'await' });
    const conv = await conversationOf(c.tollgate);
    const before = c.fetch.calls.length;
    expect(await conv.guard('get_source', async (a: { id: string }) => a.id)({ id: 'src_2' })).toBe('src_2');
    const [call] = (await conv.refresh()).toolCalls!;
    expect(call.status).toBe('completed');
    expect(c.paths().slice(before, before + 2)).toEqual([
      `POST /v1/conversations/${conv.id}/tool-calls`,
      `POST /v1/tool-calls/${call.id}/result`,
    ]);
  });

  it('a guard option overrides the client’s report mode', async () => {
    const c = counted({ report: 'background' });
    const conv = await conversationOf(c.tollgate);
    await conv.guard('get_source', async () => 'ok', { report: 'await' })({ id: 'x' });
    expect((await conv.refresh()).toolCalls![0].status).toBe('completed');
  });

  it('a function that throws is reported failed in the background; its error is thrown at once', async () => {
    const c = counted();
    const conv = await conversationOf(c.tollgate);
    const boom = new Error('backend said 502');
    await expect(
      conv.guard('get_source', async () => {
        throw boom;
      })({ id: 'x' }),
    ).rejects.toBe(boom);
    await c.tollgate.flush();
    expect((await conv.refresh()).toolCalls![0]).toMatchObject({
      status: 'completed',
      result: { outcome: 'failed', error: 'backend said 502' },
    });
  });

  it('a background report that cannot be sent goes to onReportError, and flush() still returns', async () => {
    const c = counted({ fail: (url) => url.endsWith('/result') });
    const conv = await conversationOf(c.tollgate);
    expect(await conv.guard('get_source', async () => 'ran')({ id: 'x' })).toBe('ran');
    await c.tollgate.flush();
    expect(c.reportErrors).toHaveLength(1);
    expect(c.reportErrors[0].call).toMatchObject({ toolName: 'get_source', status: 'executed' });
    // The run is on record, its outcome is not: the audit's gap finding, as documented.
    expect((await conv.refresh()).toolCalls![0].status).toBe('executed');
  });

  it('close() waits for the reports in flight', async () => {
    const c = counted();
    const conv = await conversationOf(c.tollgate);
    await Promise.all([1, 2, 3].map((i) => conv.guard('get_source', async () => i)({ id: `s${i}` })));
    await c.tollgate.close();
    expect((await conv.refresh()).toolCalls!.map((t) => t.status)).toEqual(['completed', 'completed', 'completed']);
  });
});

describe('guard of a call that needs a person', () => {
  it('proposes with claim, waits, then claims on its own: the claim is never taken for a pending call', async () => {
    const c = counted();
    const conv = await conversationOf(c.tollgate);
    const before = c.fetch.calls.length;
    const running = conv.guard('delete_source', async (a: { id: string }) => `deleted ${a.id}`)({ id: 'src_3' });
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().approve(pending.id);
    expect(await running).toBe('deleted src_3');
    const sent = c.paths().slice(before);
    expect(sent[0]).toBe(`POST /v1/conversations/${conv.id}/tool-calls`);
    expect(sent).toContain(`POST /v1/tool-calls/${pending.id}/execution`);
    await c.tollgate.flush();
  });
});

describe('proposals made together', () => {
  it('a step of guarded calls claims together; a step mixing in requestApproval claims none of them', async () => {
    const c = counted();
    const conv = await conversationOf(c.tollgate);
    const bodies: unknown[] = [];
    const real = c.tollgate.request.bind(c.tollgate);
    c.tollgate.request = ((method: string, path: string, o: { body?: unknown } = {}) => {
      if (path.endsWith('/tool-calls')) bodies.push(o.body);
      return real(method, path, o);
    }) as typeof c.tollgate.request;
    const guarded = conv.guard('get_source', async (a: { id: string }) => a.id);
    expect(await Promise.all([guarded({ id: 'a' }), guarded({ id: 'b' })])).toEqual(['a', 'b']);
    expect(bodies.pop()).toMatchObject({ claim: true, toolCalls: [{}, {}] });
    const [ran, outcome] = await Promise.all([
      guarded({ id: 'c' }),
      conv.requestApproval({ toolName: 'get_source', arguments: { id: 'd' } }),
    ]);
    expect(ran).toBe('c');
    expect(bodies.pop()).not.toHaveProperty('claim');
    // The call that was only asked about stays approved, unclaimed, for its caller to run or not.
    expect(outcome.toolCall.status).toBe('approved');
    await c.tollgate.flush();
  });

  it('a guarded call replayed after its run (the same framework id) is refused already_executed, never run twice', async () => {
    const c = counted();
    const conv = await conversationOf(c.tollgate);
    let runs = 0;
    const guarded = conv.guard('get_source', async () => ++runs);
    expect(await guarded({ id: 'a' }, { id: 'call_1' })).toBe(1);
    const again = guarded({ id: 'a' }, { id: 'call_1' });
    await expect(again).rejects.toBeInstanceOf(TollgateError);
    await expect(again).rejects.toMatchObject({ code: 'already_executed' });
    expect(runs).toBe(1);
    await c.tollgate.flush();
  });
});

describe('a claim its caller gives up on', () => {
  it('an abort while the claiming proposal is under way: the function never runs, the call is reported failed', async () => {
    // The proposal's answer is held back until the caller has given up.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const fetch = tapFetch(async (url, init, real) => {
      if (!(init.method === 'POST' && url.endsWith('/tool-calls'))) return undefined;
      const answer = await real(url, init);
      await held;
      return answer;
    });
    const tollgate = s.agent({ fetch });
    const conv = await conversationOf(tollgate);
    const abort = new AbortController();
    let runs = 0;
    const running = conv.guard('get_source', async () => ++runs)({ id: 'x' }, { signal: abort.signal });
    await until(async () => fetch.calls.some((c) => c.url.endsWith('/tool-calls')), 10_000, 'the proposal sent');
    abort.abort(new Error('the user pressed stop'));
    await expect(running).rejects.toThrow('the user pressed stop');
    release();
    await until(async () => (await conv.refresh()).toolCalls!.length === 1, 10_000, 'the call proposed');
    await tollgate.flush();
    await until(async () => (await conv.refresh()).toolCalls![0].status === 'completed', 10_000, 'the report');
    expect((await conv.refresh()).toolCalls![0]).toMatchObject({
      status: 'completed',
      result: { outcome: 'failed', error: 'the caller gave up before it ran (aborted)' },
    });
    expect(runs).toBe(0);
  });

  it('an onReportError hook that throws does not sink flush()', async () => {
    const tollgate = s.agent({
      fetch: tapFetch((url) => (url.endsWith('/result') ? Promise.reject(new TypeError('fetch failed')) : undefined)),
      retry: { initialDelayMs: 10, maxDelayMs: 20, maxAttempts: 2 },
      onReportError: () => {
        throw new Error('a broken hook');
      },
    });
    const conv = await conversationOf(tollgate);
    const warned = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      expect(await conv.guard('get_source', async () => 'ran')({ id: 'x' })).toBe('ran');
      await expect(tollgate.flush()).resolves.toBeUndefined();
      await expect(tollgate.close()).resolves.toBeUndefined();
      expect(warned.mock.calls.map((c) => String(c[0]))).toEqual([expect.stringContaining('a broken hook')]);
    } finally {
      warned.mockRestore();
    }
  });

  it('requestApproval never claims, even when asked to', async () => {
    const c = counted();
    const conv = await conversationOf(c.tollgate);
    const outcome = await conv.requestApproval({ toolName: 'get_source', arguments: { id: 'y' } }, { claim: true });
    expect(outcome).toMatchObject({ status: 'approved', toolCall: { status: 'approved' } });
  });
});
