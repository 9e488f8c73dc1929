/**
 * The guard lifecycle against the real server: propose → wait → claim → run → report, through every way a
 * call can end: approved, approved with edited arguments, rejected, denied by the policy, expired, cancelled
 * by a halt, blocked by an earlier step, and a function that throws.
 */
import {
  TollgateError,
  ToolCallRejectedError,
  verifyReceipt,
  type RunContext,
  type Tollgate,
  type TollgateConversation,
} from '@tollgate/sdk';
import { pendingIn, withServer, type Setup, type TestServer } from './support.js';

let server: TestServer;
let s: Setup;

withServer((started, setup) => {
  server = started;
  s = setup;
});

let n = 0;
async function conversation(): Promise<TollgateConversation> {
  n += 1;
  return s.agent().conversation({
    id: `conv-guard-${n}`,
    user: { id: 'ann', roles: ['admin'], name: 'Ann' },
    title: `guard test ${n}`,
  });
}

/** A tool that records each run: the arguments and context it was given. */
function recorder<R>(result: (args: { id: string }) => R) {
  const runs: Array<{ args: { id: string }; ctx: RunContext }> = [];
  const fn = async (args: { id: string }, ctx: RunContext) => {
    runs.push({ args, ctx });
    return result(args);
  };
  return { runs, fn };
}

describe('guard: a call a person approves', () => {
  it('runs the function once, after the approval, returns its result and reports it', async () => {
    const conv = await conversation();
    const tool = recorder((a) => ({ deleted: a.id }));
    const deleteSource = conv.guard('delete_source', tool.fn, {
      display: (a) => ({ title: `Delete ${a.id}` }),
      reason: 'the user asked',
    });
    const running = deleteSource({ id: 'src_2' });

    const [pending] = await pendingIn(s.ann, conv.id);
    expect(pending).toMatchObject({
      toolName: 'delete_source',
      arguments: { id: 'src_2' },
      display: { title: 'Delete src_2' },
      reason: 'the user asked',
      status: 'pending',
    });
    expect(tool.runs).toHaveLength(0); // nothing runs before a person decides
    await s.ann.inbox().approve(pending.id, { reason: 'fine' });

    expect(await running).toEqual({ deleted: 'src_2' });
    expect(tool.runs).toHaveLength(1);
    expect(tool.runs[0].args).toEqual({ id: 'src_2' });
    expect(tool.runs[0].ctx.edited).toBe(false);
    expect(tool.runs[0].ctx.toolCall).toMatchObject({ id: pending.id, status: 'executed' });
    await conv.tollgate.flush(); // the report goes in the background
    const after = await s.ann.getToolCall(pending.id);
    expect(after).toMatchObject({
      status: 'completed',
      result: { outcome: 'succeeded', output: { deleted: 'src_2' } },
      decision: { outcome: 'approved', by: { id: 'ann', via: 'cli' } },
    });
  });

  it('runs with the arguments the approver edited, and the receipt vouches for those', async () => {
    const conv = await conversation();
    const tool = recorder((a) => `deleted ${a.id}`);
    const running = conv.guard('delete_source', tool.fn)({ id: 'src_2' });
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().approve(pending.id, { arguments: { id: 'src_2_archive' } });

    expect(await running).toBe('deleted src_2_archive');
    expect(tool.runs.map((r) => r.args)).toEqual([{ id: 'src_2_archive' }]);
    const { ctx } = tool.runs[0];
    expect(ctx.edited).toBe(true);
    const jwksUrl = `${server.url}/.well-known/jwks.json`;
    const claims = await verifyReceipt(ctx.receipt, {
      jwksUrl,
      tenant: 'default',
      toolName: 'delete_source',
      arguments: { id: 'src_2_archive' },
      toolCallId: pending.id,
    });
    expect(claims).toMatchObject({ tcid: pending.id, conv: conv.id, tool: 'delete_source', approvedBy: 'ann' });
    await expect(
      verifyReceipt(ctx.receipt, { jwksUrl, tenant: 'default', toolName: 'delete_source', arguments: { id: 'src_2' } }),
    ).rejects.toMatchObject({ code: 'receipt_mismatch' });
  });

  it('requestApproval answers the outcome with the edited arguments, without running anything', async () => {
    const conv = await conversation();
    const asking = conv.requestApproval({
      toolName: 'send_email',
      arguments: { to: 'bea@example.com', body: 'hi' },
      reason: 'a reply',
      display: { title: 'Email Bea' },
    });
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().approve(pending.id, { arguments: { to: 'bea@example.com', body: 'Hello Bea' } });
    const approval = await asking;
    expect(approval.status).toBe('approved');
    expect(approval.arguments).toEqual({ to: 'bea@example.com', body: 'Hello Bea' });
    expect(approval.decision).toMatchObject({ outcome: 'approved', by: { id: 'ann', via: 'cli' } });
    expect(approval.toolCall).toMatchObject({
      id: pending.id,
      status: 'approved',
      arguments: { to: 'bea@example.com', body: 'hi' },
    });
  });
});

describe('guard: calls that do not run', () => {
  it('a rejection throws ToolCallRejectedError saying who rejected it, through what, and why', async () => {
    const conv = await conversation();
    const tool = recorder(() => 'never');
    // The refusal is caught from the start: it may arrive before the reject call itself answers.
    const running = conv
      .guard(
        'delete_source',
        tool.fn,
      )({ id: 'src_9' })
      .catch((e: unknown) => e);
    const [pending] = await pendingIn(s.ann, conv.id);
    await s.ann.inbox().reject(pending.id, { reason: 'not today' });

    const error = await running;
    expect(error).toBeInstanceOf(ToolCallRejectedError);
    expect(error).toMatchObject({
      status: 'rejected',
      reason: 'not today',
      decidedBy: { id: 'ann', name: 'Ann', via: 'cli' },
      via: 'cli',
      toolCall: { id: pending.id, status: 'rejected' },
    });
    expect((error as Error).message).toBe('delete_source was rejected by Ann via cli: not today');
    expect(tool.runs).toHaveLength(0);
  });

  it('a call the policy denies throws at once with status denied, via policy', async () => {
    const conv = await conversation();
    const tool = recorder(() => 'never');
    const error = await conv
      .guard(
        'shell',
        tool.fn as never,
      )({ cmd: 'rm -rf /' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolCallRejectedError);
    expect(error).toMatchObject({
      status: 'denied',
      via: 'policy',
      decidedBy: { id: 'policy' },
      reason: expect.stringContaining('Denied by policy rule 1'),
    });
    expect(tool.runs).toHaveLength(0);
    expect(await conv.requestApproval({ toolName: 'shell', arguments: { cmd: 'rm -r /tmp' } })).toMatchObject({
      status: 'denied',
    });
  });

  it('a call nobody decides in time throws with status expired', async () => {
    const conv = await conversation();
    const tool = recorder(() => 'never');
    const error = await conv
      .guard(
        'flash',
        tool.fn,
      )({ id: 'x' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolCallRejectedError);
    expect(error).toMatchObject({ status: 'expired', toolCall: { status: 'expired' } });
    expect(tool.runs).toHaveLength(0);
  });

  it('a halt cancels the waiting call: status cancelled, with the halt’s reason and who halted', async () => {
    const conv = await conversation();
    const tool = recorder(() => 'never');
    const running = conv
      .guard(
        'delete_source',
        tool.fn,
      )({ id: 'src_5' })
      .catch((e: unknown) => e);
    await pendingIn(s.ann, conv.id);
    await s.ann.halt({ scope: 'conversation', id: conv.id, reason: 'incident drill' });
    try {
      const error = await running;
      expect(error).toBeInstanceOf(ToolCallRejectedError);
      expect(error).toMatchObject({ status: 'cancelled', reason: 'incident drill', decidedBy: { id: 'ann' } });
      // While halted, a new proposal is refused as a TollgateError (503 halted), not retried.
      const halted = await conv
        .guard(
          'get_source',
          tool.fn,
        )({ id: 'src_5' })
        .catch((e: unknown) => e);
      expect(halted).toBeInstanceOf(TollgateError);
      expect(halted).toMatchObject({ status: 503, code: 'halted' });
    } finally {
      await s.ann.resume({ scope: 'conversation', id: conv.id });
    }
    expect(tool.runs).toHaveLength(0);
  });

  it('an approved call that a halt cancels before the claim is a refusal too', async () => {
    const conv = await conversation();
    const handle = await conv.propose({ toolName: 'delete_source', arguments: { id: 'src_6' } });
    await s.ann.inbox().approve(handle.id);
    await s.ann.halt({ scope: 'conversation', id: conv.id, reason: 'stop everything' });
    try {
      const ran: unknown[] = [];
      const error = await handle.run((a) => ran.push(a)).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'ToolCallRejectedError', status: 'cancelled', reason: 'stop everything' });
      expect(ran).toHaveLength(0);
    } finally {
      await s.ann.resume({ scope: 'conversation', id: conv.id });
    }
  });
});

describe('guard: a function that throws', () => {
  it('is reported as failed with its message, and its own error is thrown again', async () => {
    const conv = await conversation();
    const boom = new Error('backend said 502');
    const getSource = conv.guard('get_source', async () => {
      throw boom;
    });
    await expect(getSource({ id: 'src_1' })).rejects.toBe(boom);
    await conv.tollgate.flush();
    const [call] = (await conv.refresh()).toolCalls!;
    expect(call).toMatchObject({
      toolName: 'get_source',
      status: 'completed',
      result: { outcome: 'failed', error: 'backend said 502' },
    });
  });
});

describe('guard: automatic calls', () => {
  it('run at once, with a receipt approved by the policy', async () => {
    const conv = await conversation();
    const tool = recorder((a) => ({ title: `Source ${a.id}` }));
    expect(await conv.guard('get_source', tool.fn)({ id: 'src_1' })).toEqual({ title: 'Source src_1' });
    const claims = await verifyReceipt(tool.runs[0].ctx.receipt, {
      jwksUrl: `${server.url}/.well-known/jwks.json`,
      tenant: 'default',
      toolName: 'get_source',
      arguments: { id: 'src_1' },
    });
    expect(claims.approvedBy).toBe('policy');
  });
});

describe('conversation_blocked', () => {
  it('a proposal while an earlier step waits for a person waits for it, then goes ahead', async () => {
    const conv = await conversation();
    const first = await conv.propose({ toolName: 'delete_source', arguments: { id: 'first' } });
    const tool = recorder((a) => a.id);
    const second = conv.guard('get_source', tool.fn)({ id: 'second' });

    // Refused as blocked while the first waits: with onBlocked 'throw' the caller sees the problem itself.
    const blocked = await conv
      .requestApproval({ toolName: 'get_source', arguments: { id: 'third' } }, { onBlocked: 'throw' })
      .catch((e: unknown) => e);
    expect(blocked).toMatchObject({
      name: 'TollgateError',
      status: 409,
      code: 'conversation_blocked',
      problem: { pendingToolCallIds: [first.id] },
    });
    expect(tool.runs).toHaveLength(0);
    expect((await conv.refresh()).toolCalls!.map((c) => c.arguments.id)).toEqual(['first']);

    await s.ann.inbox().reject(first.id, { reason: 'no' });
    expect(await second).toBe('second');
    expect((await conv.refresh()).toolCalls!.map((c) => c.arguments.id)).toEqual(['first', 'second']);
  });
});

describe('parallel calls', () => {
  it('proposeStep proposes several calls as one step: one handle per call, each run on its own', async () => {
    const conv = await conversation();
    const [read, del] = await conv.proposeStep([
      { toolName: 'get_source', arguments: { id: 'src_1' } },
      { toolName: 'delete_source', arguments: { id: 'src_1' }, display: { title: 'Delete src_1' } },
    ]);
    expect([read.toolCall.status, del.toolCall.status]).toEqual(['approved', 'pending']);
    // The read runs while the delete still waits: a pending sibling does not hold it up.
    expect(await read.run((a) => `read ${a.id}`)).toBe('read src_1');
    expect((await s.ann.getToolCall(del.id)).status).toBe('pending');
    await s.ann.inbox().approve(del.id);
    expect(await del.run((a) => `deleted ${a.id}`)).toBe('deleted src_1');
  });

  it('guarded calls made together (one model step) reach people together, as one step', async () => {
    const conv = await conversation();
    const tool = recorder((a) => a.id);
    const deleteSource = conv.guard('delete_source', tool.fn);
    const both = Promise.all([deleteSource({ id: 'a' }), deleteSource({ id: 'b' })]);
    const pending = await pendingIn(s.ann, conv.id, 2);
    expect(pending.map((p) => p.arguments.id).sort()).toEqual(['a', 'b']);
    for (const p of pending) await s.ann.inbox().approve(p.id);
    expect(await both).toEqual(['a', 'b']);
    expect(tool.runs.map((r) => r.args.id).sort()).toEqual(['a', 'b']);
  });

  it('one bad call among calls made together does not sink the others', async () => {
    const conv = await conversation();
    const getSource = conv.guard('get_source', async (a: { id: string }) => a.id);
    const results = await Promise.allSettled([
      getSource({ id: 'ok' }),
      conv.guard('bad name!', async () => 'x')({ id: 'x' }),
      getSource({ id: 'fine' }),
    ]);
    expect(results[0]).toEqual({ status: 'fulfilled', value: 'ok' });
    expect(results[1]).toMatchObject({ status: 'rejected', reason: { code: 'validation_failed', status: 400 } });
    expect(results[2]).toEqual({ status: 'fulfilled', value: 'fine' });
  });

  it('a framework tool-call id is the idempotency key: the same id twice is one call, run once', async () => {
    const conv = await conversation();
    const tool = recorder((a) => a.id);
    const getSource = conv.guard('get_source', tool.fn);
    expect(await getSource({ id: 's' }, { id: 'call_abc' })).toBe('s');
    // A second run of the same framework call (a replayed step) finds it claimed already: it cannot run twice.
    await expect(getSource({ id: 's' }, { id: 'call_abc' })).rejects.toMatchObject({ code: 'already_executed' });
    // An id the API would refuse is mapped to a stable key.
    expect(await getSource({ id: 't' }, { id: 'toolu 01/ü' })).toBe('t');
    const calls = (await conv.refresh()).toolCalls!;
    expect(calls.map((c) => c.externalId)).toEqual(['call_abc', expect.stringMatching(/^x_[0-9a-f]{64}$/)]);
    expect(tool.runs).toHaveLength(2);
  });
});

describe('the conversation’s client', () => {
  it('is the Tollgate that started it, typed as one: its helpers are reachable through conv.tollgate', async () => {
    const agent = s.agent();
    const conv = await agent.conversation({ id: 'conv-guard-client', user: { id: 'ann', roles: ['admin'] } });
    // Typed, not only at run time: a conversation typed with the bare TollgateClient would not compile here.
    const client: Tollgate = conv.tollgate;
    expect(client).toBe(agent);
    expect(conv.tollgate.inbox()).toBeDefined();
  });
});
