import type { Principal } from '../shared/actor';
import { DomainError } from '../shared/domain-error';
import type { PolicyVerdict, ProposedCallFacts } from '../policy/approval-policy';
import { Conversation } from './conversation.aggregate';
import { ToolCall } from './tool-call.entity';

/**
 * `complete(…, again = true)`: a result sent with a proposal (`results`) may be sent again by a retry of that
 * request, so the same result for a completed call is taken as recorded (no event, nothing changed); any other
 * result is still refused as already_completed. Without `again` (POST /v1/tool-calls/{id}/result), a second
 * result is refused whatever it is.
 */

const T0 = new Date('2025-03-01T12:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const agent: Principal = { id: 'agent-1', tenant: 't1', roles: ['agent'] };

type Result = { outcome: 'succeeded' | 'failed'; output?: unknown; error?: string };

const automatic = (_: ProposedCallFacts): PolicyVerdict => ({
  level: 'automatic',
  rule: 0,
  policyVersion: 1,
  reason: 'level automatic by rule 0',
  approvers: ['approver'],
  timeoutSeconds: 300,
  grants: 'tenant',
});

/** A conversation whose one call was claimed at T0+5s; events and changes already pulled. */
function executed(): { conv: Conversation; call: ToolCall } {
  const conv = Conversation.start({
    id: 'conv_1',
    tenantId: 't1',
    agentId: agent.id,
    agentName: 'Bot',
    user: null,
    title: 'Clean up',
    at: at(0),
  });
  let n = 0;
  const { calls } = conv.propose(
    [{ toolName: 'get_source', arguments: { id: 'src_1' } }],
    automatic,
    () => `tc_${++n}`,
    at(1),
    null,
  );
  conv.claim(calls[0].id, agent, at(5), null);
  conv.pullEvents();
  conv.pullChangedCalls();
  return { conv, call: calls[0] };
}

/** The call completed at T0+7s with `first`; events and changes already pulled. */
function completedWith(first: Result): { conv: Conversation; call: ToolCall } {
  const { conv, call } = executed();
  conv.complete(call.id, first, agent, at(7));
  conv.pullEvents();
  conv.pullChangedCalls();
  return { conv, call };
}

function thrown(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('expected a DomainError, nothing was thrown');
}

/** Nothing recorded and nothing for the repository to write. */
function expectUntouched(conv: Conversation) {
  expect(conv.pullEvents()).toEqual([]);
  expect(conv.pullChangedCalls()).toEqual({ added: [], changed: [] });
}

describe('a result carried again (again = true)', () => {
  it('on an executed call records it as a first result does: completed, one ToolCallCompleted', () => {
    const { conv, call } = executed();
    expect(conv.complete(call.id, { outcome: 'succeeded', output: { rows: 3 } }, agent, at(7), true)).toBe(call);
    expect(call.snapshot().result).toEqual({ outcome: 'succeeded', output: { rows: 3 }, at: at(7) });
    expect(conv.pullEvents().map((e) => e.type)).toEqual(['ToolCallCompleted']);
  });

  it('the same result again is a no-op: no event, the first result and its time stand', () => {
    const first: Result = { outcome: 'failed', output: { rows: [1, 2] }, error: 'timeout' };
    const { conv, call } = completedWith(first);
    expect(conv.complete(call.id, { ...first }, agent, at(9), true)).toBe(call);
    expect(call.status).toBe('completed');
    expect(call.snapshot().result).toEqual({ ...first, at: at(7) });
    expectUntouched(conv);
  });

  it('ignores the order of keys in the output, at any depth', () => {
    const { conv, call } = completedWith({ outcome: 'succeeded', output: { a: 1, b: { c: 2, d: [{ e: 3, f: 4 }] } } });
    conv.complete(
      call.id,
      { outcome: 'succeeded', output: { b: { d: [{ f: 4, e: 3 }], c: 2 }, a: 1 } },
      agent,
      at(9),
      true,
    );
    expectUntouched(conv);
  });

  it.each<[string, Result]>([
    ['another outcome', { outcome: 'failed', output: { rows: 3 } }],
    ['another output value', { outcome: 'succeeded', output: { rows: 4 } }],
    ['an output with a member more', { outcome: 'succeeded', output: { rows: 3, more: true } }],
    ['no output', { outcome: 'succeeded' }],
    ['an error where there was none', { outcome: 'succeeded', output: { rows: 3 }, error: 'late' }],
  ])('refuses %s as already_completed, recording nothing', (_, second) => {
    const { conv, call } = completedWith({ outcome: 'succeeded', output: { rows: 3 } });
    const err = thrown(() => conv.complete(call.id, second, agent, at(9), true));
    expect(err).toMatchObject({ code: 'already_completed', kind: 'conflict' });
    expect(call.snapshot().result).toEqual({ outcome: 'succeeded', output: { rows: 3 }, at: at(7) });
    expectUntouched(conv);
  });

  it('refuses another error text, or no error for a failure that had one', () => {
    const { conv, call } = completedWith({ outcome: 'failed', error: 'timeout' });
    expect(thrown(() => conv.complete(call.id, { outcome: 'failed', error: 'Timeout' }, agent, at(9), true)).code).toBe(
      'already_completed',
    );
    expect(thrown(() => conv.complete(call.id, { outcome: 'failed' }, agent, at(9), true)).code).toBe(
      'already_completed',
    );
    expectUntouched(conv);
  });

  it('keeps array order significant: the same items in another order are another output', () => {
    const { conv, call } = completedWith({ outcome: 'succeeded', output: [1, 2] });
    expect(
      thrown(() => conv.complete(call.id, { outcome: 'succeeded', output: [2, 1] }, agent, at(9), true)).code,
    ).toBe('already_completed');
  });

  it('still refuses a result for a call not run yet as not_executed', () => {
    const conv = executed().conv;
    const { calls } = conv.propose(
      [{ toolName: 'get_report', arguments: {} }],
      automatic,
      () => 'tc_fresh',
      at(6),
      null,
    );
    conv.pullEvents();
    expect(thrown(() => conv.complete(calls[0].id, { outcome: 'succeeded' }, agent, at(7), true)).code).toBe(
      'not_executed',
    );
    expect(calls[0].status).toBe('approved');
    expect(conv.pullEvents()).toEqual([]);
  });
});

describe('a second result without again (the result endpoint)', () => {
  it('refuses even the very same result as already_completed', () => {
    const first: Result = { outcome: 'succeeded', output: { rows: 3 } };
    const { conv, call } = completedWith(first);
    expect(thrown(() => conv.complete(call.id, { ...first }, agent, at(9))).code).toBe('already_completed');
    expect(thrown(() => conv.complete(call.id, { ...first }, agent, at(9), false)).code).toBe('already_completed');
    expectUntouched(conv);
  });
});
