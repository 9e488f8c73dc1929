import fc from 'fast-check';
import { Actor, Principal } from '../shared/actor';
import { DomainError } from '../shared/domain-error';
import { DomainEvent, EventType } from '../shared/domain-event';
import type { GrantScope, PolicyVerdict, ProposedCallFacts } from '../policy/approval-policy';
import type { SupervisionLevel } from '../policy/supervision-level';
import {
  Conversation,
  ConversationUser,
  Decider,
  DecisionResult,
  HaltInForce,
  policyUser,
  ProposedCall,
} from './conversation.aggregate';
import { standingDecision } from './rules/first-decision-wins';
import { ToolCall } from './tool-call.entity';

// ---------------------------------------------------------------- fixtures

const T0 = new Date('2025-03-01T12:00:00.000Z');
/** A fixed clock: `at(s)` is T0 plus s seconds. */
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

function idGen(prefix = 'tc'): () => string {
  let n = 0;
  return () => `${prefix}_${++n}`;
}

const TENANT = 't1';
const AGENT_ID = 'agent-1';
const USER: ConversationUser = { id: 'u-requester', roles: ['member'], name: 'Rita' };

const agent: Principal = { id: AGENT_ID, tenant: TENANT, roles: ['agent'] };
const person = (id: string, roles: string[], via: Decider['via'] = 'web', name?: string): Decider => ({
  id,
  tenant: TENANT,
  roles,
  via,
  ...(name ? { name } : {}),
});
const alice = person('alice', ['approver'], 'web', 'Alice');
const bob = person('bob', ['approver'], 'cli');
const carol = person('carol', ['admin'], 'slack');
const auditor = person('audrey', ['auditor']);
const admin: Actor = { id: 'root', kind: 'person', via: 'api', roles: ['admin'] };

const HALT: HaltInForce = { scope: 'conversation', reason: 'incident' };

function verdict(level: SupervisionLevel, over: Partial<PolicyVerdict> = {}): PolicyVerdict {
  return {
    level,
    rule: 0,
    policyVersion: 3,
    reason: `level ${level} by rule 0`,
    approvers: ['approver', 'admin'],
    timeoutSeconds: 300,
    grants: 'tenant',
    ...over,
  };
}

/** A policy stand-in: the level of each call is named by its tool (`auto_*`, `notify_*`, `deny_*`, `confirm_*`, `manual_*`). */
function levelOf(toolName: string): SupervisionLevel {
  const prefix = toolName.split('_')[0];
  const levels: Record<string, SupervisionLevel> = {
    auto: 'automatic',
    notify: 'notify',
    deny: 'deny',
    confirm: 'confirm',
    manual: 'manual',
  };
  const level = levels[prefix];
  if (!level) throw new Error(`test tool ${toolName} names no level`);
  return level;
}
const byName =
  (over: Partial<PolicyVerdict> = {}) =>
  (c: ProposedCallFacts) =>
    verdict(levelOf(c.toolName), over);

function call(toolName: string, externalId?: string, args: Record<string, unknown> = { id: 'src_1' }): ProposedCall {
  return { toolName, arguments: args, ...(externalId ? { externalId } : {}) };
}

function started(user: ConversationUser | null = USER): Conversation {
  const c = Conversation.start({
    id: 'conv_1',
    tenantId: TENANT,
    agentId: AGENT_ID,
    agentName: 'Bot',
    user,
    title: 'Clean up',
    at: at(0),
  });
  c.pullEvents();
  c.pullChangedCalls();
  return c;
}

/** A conversation with one call of the given level, proposed at T0+1s; events already pulled. */
function withOne(
  toolName: string,
  over: Partial<PolicyVerdict> = {},
  user: ConversationUser | null = USER,
): { conv: Conversation; call: ToolCall } {
  const conv = started(user);
  const { calls } = conv.propose([call(toolName, 'ext_1')], byName(over), idGen(), at(1), null);
  conv.pullEvents();
  conv.pullChangedCalls();
  return { conv, call: calls[0] };
}

const types = (events: DomainEvent[]) => events.map((e) => e.type);
const only = <T extends EventType>(events: DomainEvent[], type: T) => events.filter((e) => e.type === type);

function thrown(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('expected a DomainError, nothing was thrown');
}

function refusal(r: DecisionResult | { kind: string; error?: DomainError }): DomainError {
  if (r.kind !== 'refused' || !('error' in r) || !r.error) throw new Error(`expected a refusal, got ${r.kind}`);
  return r.error;
}

// ---------------------------------------------------------------- start

describe('starting a conversation', () => {
  it('records ConversationStarted with the agent, the user and the title', () => {
    const conv = Conversation.start({
      id: 'conv_1',
      tenantId: TENANT,
      agentId: AGENT_ID,
      agentName: 'Bot',
      user: USER,
      title: 'Clean up',
      at: at(0),
    });
    const events = conv.pullEvents();
    expect(types(events)).toEqual(['ConversationStarted']);
    expect(events[0]).toMatchObject({
      tenantId: TENANT,
      at: at(0),
      conversationId: 'conv_1',
      actor: { id: AGENT_ID, kind: 'agent', name: 'Bot' },
      data: { agentId: AGENT_ID, user: USER, title: 'Clean up' },
    });
  });

  it('is active, holds no calls and has nothing left to pull once pulled', () => {
    const conv = Conversation.start({ id: 'conv_1', tenantId: TENANT, agentId: AGENT_ID, at: at(0) });
    conv.pullEvents();
    expect(conv.status).toBe('active');
    expect(conv.pendingCount).toBe(0);
    expect(conv.pullChangedCalls()).toEqual({ added: [], changed: [] });
    expect(conv.user).toBeNull();
    expect(conv.pullEvents()).toEqual([]);
    expect(conv.hasChanges).toBe(false);
  });

  it("records how Tollgate knows the user: the agent's word unless verified, and the policy sees only verified as verified", () => {
    const start = (user: ConversationUser) =>
      Conversation.start({ id: 'conv_1', tenantId: TENANT, agentId: AGENT_ID, user, at: at(0) });
    const asserted = start(USER);
    expect(asserted.user).toEqual({ ...USER, assurance: 'asserted' });
    expect(asserted.pullEvents()[0]).toMatchObject({ data: { user: { ...USER, assurance: 'asserted' } } });
    const verified = start({ ...USER, assurance: 'verified' });
    expect(verified.pullEvents()[0]).toMatchObject({ data: { user: { assurance: 'verified' } } });
    expect(policyUser(verified.user)).toEqual({ id: USER.id, roles: USER.roles, verified: true });
    expect(policyUser(asserted.user)).toEqual({ id: USER.id, roles: USER.roles, verified: false });
    expect(policyUser({ id: 'u', roles: [] })).toEqual({ id: 'u', roles: [], verified: false });
    expect(policyUser(null)).toBeUndefined();
  });

  it('recognises the same agent starting it again as a replay', () => {
    const conv = started();
    expect(conv.isSameStart(AGENT_ID)).toBe(true);
    expect(conv.isSameStart('agent-2')).toBe(false);
  });
});

// ---------------------------------------------------------------- propose

describe('proposing tool calls', () => {
  it.each(['auto_read', 'notify_send'])('approves a %s call at once in the name of the policy', (tool) => {
    const conv = started();
    const { calls, replay } = conv.propose([call(tool, 'ext_1')], byName(), idGen(), at(1), null);
    expect(replay).toBe(false);
    expect(calls).toHaveLength(1);
    const c = calls[0];
    expect(c.status).toBe('approved');
    expect(c.decision).toMatchObject({ outcome: 'approved', by: { id: 'policy', via: 'policy' }, at: at(1) });
    expect(c.approval).toBeUndefined();
    expect(conv.status).toBe('active');

    const events = conv.pullEvents();
    expect(types(events)).toEqual([
      'ToolCallProposed',
      'ToolCallAutoApproved',
      ...(tool === 'notify_send' ? ['ToolCallNotified'] : []),
    ]);
    expect(events[0]).toMatchObject({
      toolCallId: c.id,
      toolName: tool,
      conversationId: 'conv_1',
      actor: { id: AGENT_ID, kind: 'agent' },
    });
    expect(events[0].data).toMatchObject({
      externalId: 'ext_1',
      arguments: { id: 'src_1' },
      policy: { level: levelOf(tool), rule: 0, policyVersion: 3 },
    });
    expect(events[1]).toMatchObject({
      actor: { id: 'policy', via: 'policy' },
      data: { level: levelOf(tool), rule: 0, policyVersion: 3 },
    });
  });

  it('names the grant that let a call through', () => {
    const conv = started();
    const { calls } = conv.propose(
      [call('auto_read')],
      () => verdict('automatic', { rule: null, reason: 'standing grant g_1', grantId: 'g_1' }),
      idGen(),
      at(1),
      null,
    );
    expect(calls[0].policy).toMatchObject({ grantId: 'g_1', reason: 'standing grant g_1', rule: null });
    expect(only(conv.pullEvents(), 'ToolCallAutoApproved')[0].data).toMatchObject({
      grantId: 'g_1',
      reason: 'standing grant g_1',
    });
  });

  it('rejects a denied call at once with the reason in its decision', () => {
    const conv = started();
    const reason = 'Permission denied: admin role required';
    const { calls } = conv.propose([call('deny_rm')], () => verdict('deny', { reason, rule: 2 }), idGen(), at(1), null);
    const c = calls[0];
    expect(c.status).toBe('rejected');
    expect(c.decision).toMatchObject({ outcome: 'rejected', by: { id: 'policy', via: 'policy' }, reason });
    expect(c.policy).toMatchObject({ level: 'deny', reason, rule: 2 });
    expect(conv.status).toBe('active');
    const events = conv.pullEvents();
    expect(types(events)).toEqual(['ToolCallProposed', 'ToolCallRejected']);
    expect(events[1].data).toMatchObject({
      rejectedBy: 'policy',
      via: 'policy',
      latencyMs: 0,
      reason,
      rule: 2,
      policyVersion: 3,
    });
  });

  it.each(['confirm_delete', 'manual_wire'])(
    'leaves a %s call pending with its approvers and expiry, and blocks the conversation',
    (tool) => {
      const conv = started();
      const { calls } = conv.propose(
        [call(tool)],
        byName({ approvers: ['requester', 'admin'], timeoutSeconds: 120 }),
        idGen(),
        at(10),
        null,
      );
      const c = calls[0];
      expect(c.status).toBe('pending');
      expect(c.decision).toBeUndefined();
      expect(c.approval).toEqual({ approvers: ['requester', 'admin'], expiresAt: at(130) });
      expect(conv.status).toBe('blocked');
      expect(conv.pendingCount).toBe(1);
      const events = conv.pullEvents();
      expect(types(events)).toEqual(['ToolCallProposed', 'ApprovalRequested']);
      expect(events[1].data).toMatchObject({
        level: levelOf(tool),
        approvers: ['requester', 'admin'],
        expiresAt: at(130).toISOString(),
      });
    },
  );

  it('keeps every field the agent sent on the call', () => {
    const conv = started();
    const p: ProposedCall = {
      externalId: 'call_abc',
      toolName: 'confirm_delete',
      arguments: { id: 'src_1' },
      annotations: { destructive: true },
      reason: 'user asked',
      confidence: 0.9,
      estimatedCost: 0,
      display: { title: 'Delete source', fields: [{ label: 'Objects', value: '1,204' }] },
    };
    const c = conv.propose([p], byName(), idGen(), at(1), null).calls[0];
    expect(c.snapshot()).toMatchObject({ ...p, conversationId: 'conv_1', createdAt: at(1), updatedAt: at(1) });
  });

  it('gives each call a fresh server id from the generator', () => {
    const conv = started();
    const { calls } = conv.propose([call('auto_a', 'x'), call('auto_b', 'y')], byName(), idGen('srv'), at(1), null);
    expect(calls.map((c) => c.id)).toEqual(['srv_1', 'srv_2']);
    expect(calls.map((c) => c.externalId)).toEqual(['x', 'y']);
    expect(conv.pullChangedCalls().added.map((c) => c.id)).toEqual(['srv_1', 'srv_2']);
  });

  it('refuses a new proposal while a call is pending, listing the pending ids', () => {
    const { conv, call: pending } = withOne('confirm_delete');
    const err = thrown(() => conv.propose([call('auto_read', 'ext_2')], byName(), idGen('n'), at(2), null));
    expect(err.code).toBe('conversation_blocked');
    expect(err.details).toEqual({ pendingToolCallIds: [pending.id] });
    expect(err.message).toContain(pending.id);
    expect(conv.pullEvents()).toEqual([]);
    expect(conv.pullChangedCalls().added).toEqual([]);
  });

  it('accepts new proposals again once the pending call is decided', () => {
    const { conv, call: pending } = withOne('confirm_delete');
    conv.decide(pending.id, { decision: 'reject' }, alice, at(5));
    const { calls } = conv.propose([call('auto_read', 'ext_2')], byName(), idGen('n'), at(6), null);
    expect(calls[0].status).toBe('approved');
  });

  it('judges the calls of one step together: a pending sibling does not stop the auto-approved one', () => {
    const conv = started();
    const { calls } = conv.propose(
      [call('confirm_delete', 'a'), call('auto_read', 'b'), call('deny_rm', 'c')],
      byName(),
      idGen(),
      at(1),
      null,
    );
    expect(calls.map((c) => c.status)).toEqual(['pending', 'approved', 'rejected']);
    expect(conv.status).toBe('blocked');
    expect(types(conv.pullEvents())).toEqual([
      'ToolCallProposed',
      'ApprovalRequested',
      'ToolCallProposed',
      'ToolCallAutoApproved',
      'ToolCallProposed',
      'ToolCallRejected',
    ]);
    // the auto-approved sibling may run while the conversation is blocked
    expect(conv.claim(calls[1].id, agent, at(2), null).kind).toBe('claimed');
  });

  it('evaluates each call with the facts the agent proposed', () => {
    const conv = started();
    const seen: ProposedCallFacts[] = [];
    const evaluate = (f: ProposedCallFacts) => (seen.push(f), verdict('automatic'));
    conv.propose(
      [
        {
          toolName: 'auto_x',
          arguments: { a: 1 },
          annotations: { isReadOnly: true },
          confidence: 0.4,
          estimatedCost: 7,
        },
      ],
      evaluate,
      idGen(),
      at(1),
      null,
    );
    expect(seen).toEqual([
      expect.objectContaining({
        toolName: 'auto_x',
        arguments: { a: 1 },
        annotations: { isReadOnly: true },
        confidence: 0.4,
        estimatedCost: 7,
      }),
    ]);
  });

  it('refuses new proposals while a halt is in force', () => {
    const conv = started();
    const err = thrown(() => conv.propose([call('auto_read')], byName(), idGen(), at(1), HALT));
    expect(err.code).toBe('halted');
    expect(err.kind).toBe('unavailable');
    expect(conv.pullChangedCalls().added).toEqual([]);
    expect(conv.pullEvents()).toEqual([]);
  });

  it('does not count a call past its expiresAt as blocking a new proposal', () => {
    const { conv, call: pending } = withOne('confirm_delete'); // expires at T0+301s
    const { calls } = conv.propose([call('auto_read', 'ext_2')], byName(), idGen('n'), at(400), null);
    expect(calls[0].status).toBe('approved');
    expect(pending.status).toBe('expired');
  });
});

describe('proposing the same call again', () => {
  it('answers the existing call and records nothing when id, tool and arguments match', () => {
    const { conv, call: first } = withOne('auto_read');
    const { calls, replay } = conv.propose([call('auto_read', 'ext_1')], byName(), idGen('n'), at(5), null);
    expect(replay).toBe(true);
    expect(calls).toEqual([first]);
    expect(conv.pullEvents()).toEqual([]);
    expect(conv.pullChangedCalls()).toEqual({ added: [], changed: [] });
  });

  it('ignores key order when comparing arguments', () => {
    const conv = started();
    const first = conv.propose([call('auto_read', 'e', { a: 1, b: { c: [1, 2] } })], byName(), idGen(), at(1), null)
      .calls[0];
    conv.pullEvents();
    const { calls, replay } = conv.propose(
      [call('auto_read', 'e', { b: { c: [1, 2] }, a: 1 })],
      byName(),
      idGen('n'),
      at(2),
      null,
    );
    expect(replay).toBe(true);
    expect(calls[0]).toBe(first);
  });

  it('refuses the same id with different arguments as idempotency_mismatch', () => {
    const { conv } = withOne('auto_read');
    const err = thrown(() =>
      conv.propose([call('auto_read', 'ext_1', { id: 'src_2' })], byName(), idGen('n'), at(5), null),
    );
    expect(err.code).toBe('idempotency_mismatch');
    expect(conv.pullEvents()).toEqual([]);
  });

  it('refuses the same id with a different tool as idempotency_mismatch', () => {
    const { conv } = withOne('auto_read');
    const err = thrown(() => conv.propose([call('auto_write', 'ext_1')], byName(), idGen('n'), at(5), null));
    expect(err.code).toBe('idempotency_mismatch');
  });

  it('refuses the same id twice in one step as validation_failed', () => {
    const conv = started();
    const err = thrown(() =>
      conv.propose([call('auto_read', 'dup'), call('auto_read', 'dup')], byName(), idGen(), at(1), null),
    );
    expect(err.code).toBe('validation_failed');
    expect(err.details).toEqual({ errors: [{ path: 'toolCalls[1].id', message: expect.stringContaining('dup') }] });
    expect(conv.pullChangedCalls().added).toEqual([]);
    expect(conv.pullEvents()).toEqual([]);
  });

  it('allows calls without an id to repeat freely', () => {
    const conv = started();
    const { calls } = conv.propose([call('auto_read'), call('auto_read')], byName(), idGen(), at(1), null);
    expect(calls).toHaveLength(2);
    expect(calls[0].id).not.toBe(calls[1].id);
  });

  it('answers a replay even while the conversation is blocked', () => {
    const { conv, call: pending } = withOne('confirm_delete');
    const { calls, replay } = conv.propose([call('confirm_delete', 'ext_1')], byName(), idGen('n'), at(5), null);
    expect(replay).toBe(true);
    expect(calls).toEqual([pending]);
    expect(conv.pullEvents()).toEqual([]);
  });

  it('answers a replay even while a halt is in force', () => {
    const { conv, call: first } = withOne('auto_read');
    const { calls, replay } = conv.propose([call('auto_read', 'ext_1')], byName(), idGen('n'), at(5), HALT);
    expect(replay).toBe(true);
    expect(calls).toEqual([first]);
  });

  it('still refuses a step that mixes a repeat with a new call while blocked', () => {
    const { conv, call: pending } = withOne('confirm_delete');
    const err = thrown(() =>
      conv.propose([call('confirm_delete', 'ext_1'), call('auto_read', 'ext_2')], byName(), idGen('n'), at(5), null),
    );
    expect(err.code).toBe('conversation_blocked');
    expect(err.details).toEqual({ pendingToolCallIds: [pending.id] });
  });

  it('reuses the earlier call and proposes only the new ones in a mixed step', () => {
    const { conv, call: first } = withOne('auto_read');
    const { calls, replay } = conv.propose(
      [call('auto_read', 'ext_1'), call('auto_write', 'ext_2')],
      byName(),
      idGen('n'),
      at(5),
      null,
    );
    expect(replay).toBe(false);
    expect(calls[0]).toBe(first);
    expect(calls[1].id).toBe('n_1');
    expect(types(conv.pullEvents())).toEqual(['ToolCallProposed', 'ToolCallAutoApproved']);
  });
});

// ---------------------------------------------------------------- decide

describe('deciding a pending call', () => {
  it('approving moves it to approved and records ToolCallApproved with approvedBy, via and latencyMs', () => {
    const { conv, call: c } = withOne('confirm_delete');
    const r = conv.decide(c.id, { decision: 'approve', reason: 'looks fine' }, alice, at(31));
    expect(r.kind).toBe('decided');
    expect(r.kind === 'decided' && r.grant).toBeUndefined();
    expect(c.status).toBe('approved');
    expect(c.decision).toMatchObject({
      outcome: 'approved',
      by: { id: 'alice', name: 'Alice', via: 'web' },
      at: at(31),
      reason: 'looks fine',
    });
    expect(conv.status).toBe('active');
    const events = conv.pullEvents();
    expect(types(events)).toEqual(['ToolCallApproved']);
    expect(events[0]).toMatchObject({ toolCallId: c.id, actor: { id: 'alice', kind: 'person', via: 'web' } });
    expect(events[0].data).toMatchObject({
      approvedBy: 'alice',
      via: 'web',
      latencyMs: 30_000,
      decision: 'approve',
      reason: 'looks fine',
      policyVersion: 3,
    });
    expect(conv.pullChangedCalls().changed.map((x) => x.id)).toEqual([c.id]);
    expect(conv.updatedAt).toEqual(at(31));
  });

  it('approving with edited arguments runs the edit and keeps the original', () => {
    const { conv, call: c } = withOne('confirm_delete');
    conv.decide(c.id, { decision: 'approve', arguments: { id: 'src_1', dryRun: true } }, alice, at(2));
    expect(c.arguments).toEqual({ id: 'src_1' });
    expect(c.decision?.editedArguments).toEqual({ id: 'src_1', dryRun: true });
    expect(c.argumentsToRun).toEqual({ id: 'src_1', dryRun: true });
    expect(conv.pullEvents()[0].data).toMatchObject({ editedArguments: { id: 'src_1', dryRun: true } });

    const claimed = conv.claim(c.id, agent, at(3), null);
    expect(claimed.kind).toBe('claimed');
    const executed = only(conv.pullEvents(), 'ToolCallExecuted')[0];
    expect(executed.data).toMatchObject({ arguments: { id: 'src_1', dryRun: true }, edited: true });
  });

  it('always_allow approves the call and asks for a grant of the same tool', () => {
    const { conv, call: c } = withOne('confirm_delete');
    const r = conv.decide(c.id, { decision: 'always_allow' }, alice, at(2));
    expect(r).toMatchObject({ kind: 'decided', grant: { toolName: 'confirm_delete' } });
    expect(c.status).toBe('approved');
    expect(conv.pullEvents()[0].data).toMatchObject({ decision: 'always_allow', approvedBy: 'alice' });
  });

  it('always_allow on a manual call approves it but asks for no grant', () => {
    const { conv, call: c } = withOne('manual_wire');
    const r = conv.decide(c.id, { decision: 'always_allow' }, alice, at(2));
    expect(r.kind).toBe('decided');
    expect(r.kind === 'decided' && r.grant).toBeUndefined();
    expect(c.status).toBe('approved');
  });

  it('rejecting moves it to rejected with the reason and records ToolCallRejected with rejectedBy, via and latencyMs', () => {
    const { conv, call: c } = withOne('confirm_delete');
    const r = conv.decide(c.id, { decision: 'reject', reason: 'wrong source' }, bob, at(11));
    expect(r.kind).toBe('decided');
    expect(c.status).toBe('rejected');
    expect(c.decision).toMatchObject({ outcome: 'rejected', by: { id: 'bob', via: 'cli' }, reason: 'wrong source' });
    const events = conv.pullEvents();
    expect(types(events)).toEqual(['ToolCallRejected']);
    expect(events[0].data).toMatchObject({
      rejectedBy: 'bob',
      via: 'cli',
      latencyMs: 10_000,
      reason: 'wrong source',
      policyVersion: 3,
    });
  });

  it('lets the first decision win: a rival one is refused with already_decided carrying the standing decision', () => {
    const { conv, call: c } = withOne('confirm_delete');
    conv.decide(c.id, { decision: 'approve' }, alice, at(2));
    conv.pullEvents();
    const r = conv.decide(c.id, { decision: 'reject', reason: 'no' }, bob, at(3));
    const err = refusal(r);
    expect(err.code).toBe('already_decided');
    expect(err.details).toMatchObject({
      toolCallStatus: 'approved',
      decision: { outcome: 'approved', by: { id: 'alice', via: 'web' }, at: at(2) },
    });
    expect((err.details.decision as Record<string, unknown>).kind).toBeUndefined();
    expect(c.status).toBe('approved');
    expect(conv.pullEvents()).toEqual([]);
  });

  it('refuses a different decision by the same person as already_decided', () => {
    const { conv, call: c } = withOne('confirm_delete');
    conv.decide(c.id, { decision: 'approve' }, alice, at(2));
    expect(refusal(conv.decide(c.id, { decision: 'reject' }, alice, at(3))).code).toBe('already_decided');
  });

  it.each(['approve', 'reject', 'always_allow'] as const)(
    'answers the same %s by the same person again as unchanged, recording nothing',
    (decision) => {
      const { conv, call: c } = withOne('confirm_delete');
      conv.decide(c.id, { decision }, alice, at(2));
      conv.pullEvents();
      conv.pullChangedCalls();
      const before = c.snapshot();
      const r = conv.decide(c.id, { decision }, alice, at(3));
      expect(r).toEqual({ kind: 'unchanged', call: c });
      expect(c.snapshot()).toBe(before);
      expect(conv.pullEvents()).toEqual([]);
      expect(conv.pullChangedCalls()).toEqual({ added: [], changed: [] });
    },
  );

  it('treats approve and always_allow by the same person as different decisions', () => {
    const { conv, call: c } = withOne('confirm_delete');
    conv.decide(c.id, { decision: 'approve' }, alice, at(2));
    expect(refusal(conv.decide(c.id, { decision: 'always_allow' }, alice, at(3))).code).toBe('already_decided');

    const other = withOne('confirm_delete');
    other.conv.decide(other.call.id, { decision: 'always_allow' }, alice, at(2));
    expect(refusal(other.conv.decide(other.call.id, { decision: 'approve' }, alice, at(3))).code).toBe(
      'already_decided',
    );
  });

  it('refuses a decision on a call the policy already decided as already_decided', () => {
    const { conv, call: c } = withOne('auto_read');
    const err = refusal(conv.decide(c.id, { decision: 'reject' }, alice, at(2)));
    expect(err.code).toBe('already_decided');
    expect(err.details).toMatchObject({ decision: { outcome: 'approved', by: { id: 'policy', via: 'policy' } } });
  });

  it('never lets an agent decide', () => {
    const { conv, call: c } = withOne('confirm_delete');
    const err = thrown(() => conv.decide(c.id, { decision: 'approve' }, { ...agent, via: 'api' }, at(2)));
    expect(err.code).toBe('forbidden');
    expect(c.status).toBe('pending');
    expect(conv.pullEvents()).toEqual([]);
  });

  it('never lets an agent decide even when its token also holds the approver and admin roles', () => {
    const { conv, call: c } = withOne('confirm_delete');
    const err = thrown(() =>
      conv.decide(c.id, { decision: 'approve' }, person('agent-1', ['agent', 'approver', 'admin'], 'api'), at(2)),
    );
    expect(err.code).toBe('forbidden');
    expect(c.status).toBe('pending');
  });

  it('never lets an agent decide, even on a call already decided', () => {
    const { conv, call: c } = withOne('auto_read');
    expect(
      thrown(() => conv.decide(c.id, { decision: 'approve' }, person('x', ['agent', 'admin'], 'api'), at(2))).code,
    ).toBe('forbidden');
  });

  it('refuses a person whose roles are not among the approvers as forbidden', () => {
    const { conv, call: c } = withOne('confirm_delete', { approvers: ['admin'] });
    const err = thrown(() => conv.decide(c.id, { decision: 'approve' }, alice, at(2)));
    expect(err.code).toBe('forbidden');
    expect(err.kind).toBe('forbidden');
    expect(c.status).toBe('pending');
    expect(conv.pullEvents()).toEqual([]);
    expect(conv.decide(c.id, { decision: 'approve' }, carol, at(3)).kind).toBe('decided');
  });

  it('refuses an auditor as forbidden', () => {
    const { conv, call: c } = withOne('confirm_delete');
    expect(thrown(() => conv.decide(c.id, { decision: 'reject' }, auditor, at(2))).code).toBe('forbidden');
  });

  it('lets the conversation user decide when requester is among the approvers', () => {
    const { conv, call: c } = withOne('confirm_delete', { approvers: ['requester'] });
    const rita = person(USER.id, ['member']);
    expect(conv.mayDecide(rita, c)).toBe(true);
    expect(conv.decide(c.id, { decision: 'approve' }, rita, at(2)).kind).toBe('decided');
    expect(c.decision?.by.id).toBe(USER.id);
  });

  it('refuses another person when only requester may decide', () => {
    const { conv, call: c } = withOne('confirm_delete', { approvers: ['requester'] });
    expect(thrown(() => conv.decide(c.id, { decision: 'approve' }, alice, at(2))).code).toBe('forbidden');
    expect(thrown(() => conv.decide(c.id, { decision: 'approve' }, carol, at(2))).code).toBe('forbidden');
  });

  it('has no requester in a conversation without a user', () => {
    const { conv, call: c } = withOne('confirm_delete', { approvers: ['requester'] }, null);
    expect(thrown(() => conv.decide(c.id, { decision: 'approve' }, person(USER.id, ['member']), at(2))).code).toBe(
      'forbidden',
    );
  });

  it('refuses the requester when requester is not among the approvers', () => {
    const { conv, call: c } = withOne('confirm_delete', { approvers: ['admin'] });
    expect(thrown(() => conv.decide(c.id, { decision: 'approve' }, person(USER.id, ['member']), at(2))).code).toBe(
      'forbidden',
    );
  });

  it('does not treat a token role named "requester" as being the conversation user', () => {
    const { conv, call: c } = withOne('confirm_delete', { approvers: ['requester', 'admin'] });
    const mallory = person('mallory', ['requester']);
    expect(thrown(() => conv.decide(c.id, { decision: 'approve' }, mallory, at(2))).code).toBe('forbidden');
  });

  // CONTRACT §11: 403 comes before 409, so a person outside the approvers never learns the standing decision.
  it('refuses a person outside the approvers as forbidden even after the call was decided', () => {
    const { conv, call: c } = withOne('confirm_delete');
    conv.decide(c.id, { decision: 'approve' }, alice, at(2));
    expect(thrown(() => conv.decide(c.id, { decision: 'reject' }, auditor, at(3))).code).toBe('forbidden');
  });

  it('answers not_found for a call it does not hold', () => {
    const { conv } = withOne('confirm_delete');
    expect(thrown(() => conv.decide('tc_nope', { decision: 'approve' }, alice, at(2))).code).toBe('not_found');
  });

  it('refuses an auditor even where a policy stored before auditors were refused lists them among the approvers', () => {
    const { conv, call: c } = withOne('confirm_delete', { approvers: ['auditor', 'admin'] });
    expect(conv.mayDecide(auditor, c)).toBe(false);
    expect(thrown(() => conv.decide(c.id, { decision: 'approve' }, auditor, at(2))).code).toBe('forbidden');
    expect(c.status).toBe('pending');
    // another role the same token holds still counts
    expect(conv.mayDecide(person('audrey', ['auditor', 'admin']), c)).toBe(true);
  });
});

describe('the authority to make a standing grant', () => {
  const requester = person(USER.id, []);

  it.each<[string, Decider, GrantScope]>([
    ['the requester with no role', requester, 'agent'],
    ['the requester with no role', requester, 'tenant'],
    ['an approver', alice, 'agent'],
    ['an approver', alice, 'tenant'],
  ])(
    '%s asking for scope %s is refused with forbidden; GrantRefused is recorded and the call stays pending',
    (_who, by, scope) => {
      const { conv, call: c } = withOne('confirm_delete', { approvers: ['requester', 'approver', 'admin'] });
      const err = refusal(conv.decide(c.id, { decision: 'always_allow', scope }, by, at(2)));
      expect(err).toMatchObject({
        code: 'forbidden',
        kind: 'forbidden',
        details: { requestedScope: scope, allowedScope: 'conversation' },
      });
      expect(err.message).toBe(
        `Only an admin may make a standing grant in scope ${scope}; you may grant at most scope conversation`,
      );
      expect(c.status).toBe('pending');
      expect(c.decision).toBeUndefined();
      const events = conv.pullEvents();
      expect(types(events)).toEqual(['GrantRefused']);
      expect(events[0]).toMatchObject({
        conversationId: 'conv_1',
        toolCallId: c.id,
        toolName: 'confirm_delete',
        actor: { id: by.id, kind: 'person', via: by.via },
        data: {
          decision: 'always_allow',
          requestedScope: scope,
          allowedScope: 'conversation',
          refusedBy: by.id,
          via: by.via,
          policyVersion: 3,
          rule: 0,
          level: 'confirm',
        },
      });
      expect(conv.pullChangedCalls()).toEqual({ added: [], changed: [] });
    },
  );

  it.each<[string, Decider]>([
    ['the requester with no role', requester],
    ['an approver', alice],
  ])('%s may grant for the conversation, the default scope', (_who, by) => {
    const { conv, call: c } = withOne('confirm_delete', { approvers: ['requester', 'approver'] });
    expect(conv.decide(c.id, { decision: 'always_allow' }, by, at(2))).toMatchObject({
      kind: 'decided',
      grant: { toolName: 'confirm_delete', scope: 'conversation' },
    });
    const other = withOne('confirm_delete', { approvers: ['requester', 'approver'] });
    expect(
      other.conv.decide(other.call.id, { decision: 'always_allow', scope: 'conversation' }, by, at(2)),
    ).toMatchObject({ kind: 'decided', grant: { scope: 'conversation' } });
  });

  it.each(['conversation', 'agent', 'tenant'] as const)('an admin may grant in scope %s', (scope) => {
    const { conv, call: c } = withOne('confirm_delete');
    expect(conv.decide(c.id, { decision: 'always_allow', scope }, carol, at(2))).toMatchObject({
      kind: 'decided',
      grant: { scope },
    });
    expect(c.decision).toMatchObject({ kind: 'always_allow', grantScope: scope });
  });

  it('the policy narrows what even an admin may grant, and records its limit on the held call', () => {
    const { conv, call: c } = withOne('confirm_delete', { grants: 'agent' });
    expect(c.policy.grants).toBe('agent');
    const err = refusal(conv.decide(c.id, { decision: 'always_allow', scope: 'tenant' }, carol, at(2)));
    expect(err).toMatchObject({ code: 'forbidden', details: { requestedScope: 'tenant', allowedScope: 'agent' } });
    expect(err.message).toBe(
      'A standing grant for this call may cover at most scope agent (policy rule 0), not tenant',
    );
    expect(conv.decide(c.id, { decision: 'always_allow', scope: 'agent' }, carol, at(3))).toMatchObject({
      kind: 'decided',
      grant: { scope: 'agent' },
    });
  });

  it('a policy that allows no grants refuses every always_allow, and approving still works', () => {
    const { conv, call: c } = withOne('confirm_delete', { grants: 'none' });
    const err = refusal(conv.decide(c.id, { decision: 'always_allow' }, carol, at(2)));
    expect(err).toMatchObject({ code: 'forbidden', details: { requestedScope: 'conversation', allowedScope: 'none' } });
    expect(err.message).toMatch(/No standing grant may be made for this call/);
    expect(conv.decide(c.id, { decision: 'approve' }, carol, at(3)).kind).toBe('decided');
  });

  it('the authority is checked before the first-decision rule: 403 comes before 409, and the attempt is recorded', () => {
    const { conv, call: c } = withOne('confirm_delete');
    conv.decide(c.id, { decision: 'approve' }, alice, at(2));
    conv.pullEvents();
    expect(refusal(conv.decide(c.id, { decision: 'always_allow', scope: 'tenant' }, bob, at(3))).code).toBe(
      'forbidden',
    );
    expect(types(conv.pullEvents())).toEqual(['GrantRefused']);
  });

  it('a policy that does not narrow grants records no limit on the call, as calls stored before read', () => {
    const { call: c } = withOne('confirm_delete');
    expect(c.policy.grants).toBeUndefined();
    expect(withOne('auto_read', { grants: 'none' }).call.policy.grants).toBeUndefined();
  });
});

describe('repeating a decision', () => {
  it('an approve by the same person with other arguments is refused with already_decided, and the first edit stays', () => {
    const { conv, call: c } = withOne('confirm_delete');
    conv.decide(c.id, { decision: 'approve', arguments: { id: 'src_2' } }, alice, at(2));
    conv.pullEvents();
    const err = refusal(conv.decide(c.id, { decision: 'approve', arguments: { id: 'src_3' } }, alice, at(3)));
    expect(err).toMatchObject({ code: 'already_decided', details: { decision: { editedArguments: { id: 'src_2' } } } });
    expect(refusal(conv.decide(c.id, { decision: 'approve' }, alice, at(3))).code).toBe('already_decided');
    expect(c.argumentsToRun).toEqual({ id: 'src_2' });
    expect(conv.pullEvents()).toEqual([]);
  });

  it('an approve that first had no arguments and now has some is refused with already_decided', () => {
    const { conv, call: c } = withOne('confirm_delete');
    conv.decide(c.id, { decision: 'approve' }, alice, at(2));
    expect(refusal(conv.decide(c.id, { decision: 'approve', arguments: { id: 'src_9' } }, alice, at(3))).code).toBe(
      'already_decided',
    );
    expect(c.argumentsToRun).toEqual({ id: 'src_1' });
  });

  it('the same edited arguments again, keys in another order, answer unchanged', () => {
    const { conv, call: c } = withOne('confirm_delete');
    conv.decide(c.id, { decision: 'approve', arguments: { id: 'src_2', opts: { a: 1, b: [1, 2] } } }, alice, at(2));
    conv.pullEvents();
    expect(
      conv.decide(c.id, { decision: 'approve', arguments: { opts: { b: [1, 2], a: 1 }, id: 'src_2' } }, alice, at(3)),
    ).toEqual({ kind: 'unchanged', call: c });
    expect(conv.pullEvents()).toEqual([]);
  });

  it('an always_allow by the same person in another scope is refused with already_decided; the default scope is conversation', () => {
    const { conv, call: c } = withOne('confirm_delete');
    conv.decide(c.id, { decision: 'always_allow' }, carol, at(2));
    expect(refusal(conv.decide(c.id, { decision: 'always_allow', scope: 'tenant' }, carol, at(3))).code).toBe(
      'already_decided',
    );
    expect(conv.decide(c.id, { decision: 'always_allow', scope: 'conversation' }, carol, at(3)).kind).toBe('unchanged');
  });

  it('the grant scope stays out of the decision shown to clients', () => {
    const { conv, call: c } = withOne('confirm_delete');
    conv.decide(c.id, { decision: 'always_allow', scope: 'agent' }, carol, at(2));
    expect(standingDecision(c.decision)).not.toHaveProperty('grantScope');
  });
});

describe('expiry', () => {
  it('approving an expired call is refused with already_decided, and the call becomes expired', () => {
    const { conv, call: c } = withOne('confirm_delete', { timeoutSeconds: 60 }); // proposed at 1s, expires at 61s
    const r = conv.decide(c.id, { decision: 'approve' }, alice, at(61));
    const err = refusal(r);
    expect(err.code).toBe('already_decided');
    expect(err.details).toMatchObject({
      toolCallStatus: 'expired',
      decision: { outcome: 'expired', by: { id: 'system', via: 'system' } },
    });
    expect(c.status).toBe('expired');
    expect(c.decision).toMatchObject({ outcome: 'expired', by: { id: 'system', via: 'system' }, at: at(61) });
    // the refusal still changed state: the expiry is recorded and must be saved
    const events = conv.pullEvents();
    expect(types(events)).toEqual(['ToolCallExpired']);
    expect(events[0]).toMatchObject({ actor: { id: 'system', via: 'system' }, toolCallId: c.id });
    expect(events[0].data).toMatchObject({ expiresAt: at(61).toISOString(), waitedMs: 60_000 });
    expect(conv.pullChangedCalls().changed).toEqual([c]);
    expect(conv.status).toBe('active');
  });

  it('rejecting an expired call is refused with already_decided too', () => {
    const { conv, call: c } = withOne('confirm_delete', { timeoutSeconds: 60 });
    expect(refusal(conv.decide(c.id, { decision: 'reject' }, alice, at(500))).code).toBe('already_decided');
    expect(c.status).toBe('expired');
  });

  it('approving one second before expiresAt still counts', () => {
    const { conv, call: c } = withOne('confirm_delete', { timeoutSeconds: 60 });
    expect(conv.decide(c.id, { decision: 'approve' }, alice, at(60)).kind).toBe('decided');
    expect(c.status).toBe('approved');
  });

  it('claiming an expired pending call expires it and refuses with not_approved', () => {
    const { conv, call: c } = withOne('confirm_delete', { timeoutSeconds: 60 });
    const r = conv.claim(c.id, agent, at(100), null);
    expect(r.kind).toBe('refused');
    expect(r.kind === 'refused' && r.error.code).toBe('not_approved');
    expect(c.status).toBe('expired');
    expect(types(conv.pullEvents())).toEqual(['ToolCallExpired']);
  });

  it('expireDue expires exactly the pending calls whose time is up', () => {
    const conv = started();
    const evaluate = (f: ProposedCallFacts) =>
      f.toolName === 'confirm_short'
        ? verdict('confirm', { timeoutSeconds: 10 })
        : f.toolName === 'confirm_long'
          ? verdict('confirm', { timeoutSeconds: 1000 })
          : verdict('automatic');
    const { calls } = conv.propose(
      [call('confirm_short'), call('confirm_long'), call('auto_read')],
      evaluate,
      idGen(),
      at(0),
      null,
    );
    conv.pullEvents();
    expect(conv.expireDue(at(9))).toEqual([]);
    expect(conv.pullEvents()).toEqual([]);

    const expired = conv.expireDue(at(10));
    expect(expired).toEqual([calls[0]]);
    expect(calls.map((c) => c.status)).toEqual(['expired', 'pending', 'approved']);
    expect(types(conv.pullEvents())).toEqual(['ToolCallExpired']);
    expect(conv.status).toBe('blocked');

    expect(conv.expireDue(at(10))).toEqual([]);
    expect(conv.expireDue(at(2000))).toEqual([calls[1]]);
    expect(conv.status).toBe('active');
  });

  it('an expired call never runs', () => {
    const { conv, call: c } = withOne('confirm_delete', { timeoutSeconds: 60 });
    conv.expireDue(at(70));
    expect(conv.claim(c.id, agent, at(71), null)).toMatchObject({ kind: 'refused', error: { code: 'not_approved' } });
    expect(refusal(conv.decide(c.id, { decision: 'approve' }, alice, at(72))).code).toBe('already_decided');
    expect(c.status).toBe('expired');
  });
});

// ---------------------------------------------------------------- claim & complete

describe('claiming the run', () => {
  it('moves an approved call to executed once and records ToolCallExecuted with the arguments to run', () => {
    const { conv, call: c } = withOne('auto_read');
    const r = conv.claim(c.id, { ...agent, name: 'Bot' }, at(5), null);
    expect(r).toEqual({ kind: 'claimed', call: c });
    expect(c.status).toBe('executed');
    expect(c.snapshot().execution).toEqual({ at: at(5), by: { id: AGENT_ID, name: 'Bot', via: 'api' } });
    const events = conv.pullEvents();
    expect(types(events)).toEqual(['ToolCallExecuted']);
    expect(events[0]).toMatchObject({
      actor: { id: AGENT_ID, kind: 'agent' },
      data: { arguments: { id: 'src_1' }, edited: false },
    });
  });

  it('refuses a second claim as already_executed, recording nothing', () => {
    const { conv, call: c } = withOne('auto_read');
    conv.claim(c.id, agent, at(5), null);
    conv.pullEvents();
    expect(conv.claim(c.id, agent, at(6), null)).toMatchObject({
      kind: 'refused',
      error: { code: 'already_executed' },
    });
    expect(conv.pullEvents()).toEqual([]);
  });

  it('refuses a claim on a completed call as already_executed', () => {
    const { conv, call: c } = withOne('auto_read');
    conv.claim(c.id, agent, at(5), null);
    conv.complete(c.id, { outcome: 'succeeded' }, agent, at(6));
    expect(conv.claim(c.id, agent, at(7), null)).toMatchObject({
      kind: 'refused',
      error: { code: 'already_executed' },
    });
  });

  it('refuses a claim on a pending call as not_approved', () => {
    const { conv, call: c } = withOne('confirm_delete');
    expect(conv.claim(c.id, agent, at(5), null)).toMatchObject({ kind: 'refused', error: { code: 'not_approved' } });
    expect(c.status).toBe('pending');
    expect(conv.pullEvents()).toEqual([]);
  });

  it('refuses a claim on a call rejected by policy as not_approved', () => {
    const { conv, call: c } = withOne('deny_rm');
    expect(conv.claim(c.id, agent, at(5), null)).toMatchObject({ kind: 'refused', error: { code: 'not_approved' } });
  });

  it('refuses a claim on a call a person rejected as not_approved', () => {
    const { conv, call: c } = withOne('confirm_delete');
    conv.decide(c.id, { decision: 'reject' }, alice, at(2));
    expect(conv.claim(c.id, agent, at(5), null)).toMatchObject({ kind: 'refused', error: { code: 'not_approved' } });
  });

  it('refuses a claim while a halt is in force', () => {
    const { conv, call: c } = withOne('auto_read');
    const err = thrown(() => conv.claim(c.id, agent, at(5), HALT));
    expect(err.code).toBe('halted');
    expect(err.details).toEqual({ scope: 'conversation' });
    expect(c.status).toBe('approved');
    expect(conv.pullEvents()).toEqual([]);
  });

  it('answers not_found for a call it does not hold', () => {
    const { conv } = withOne('auto_read');
    expect(thrown(() => conv.claim('tc_nope', agent, at(5), null)).code).toBe('not_found');
  });
});

describe('reporting the result', () => {
  it('moves an executed call to completed and records the outcome and duration', () => {
    const { conv, call: c } = withOne('auto_read');
    conv.claim(c.id, agent, at(5), null);
    conv.pullEvents();
    const done = conv.complete(c.id, { outcome: 'succeeded', output: { rows: 3 } }, agent, at(7));
    expect(done).toBe(c);
    expect(c.status).toBe('completed');
    expect(c.snapshot().result).toEqual({ outcome: 'succeeded', output: { rows: 3 }, at: at(7) });
    const events = conv.pullEvents();
    expect(types(events)).toEqual(['ToolCallCompleted']);
    expect(events[0].data).toEqual({ outcome: 'succeeded', error: undefined, durationMs: 2000 });
  });

  it('records a failed outcome with its error', () => {
    const { conv, call: c } = withOne('auto_read');
    conv.claim(c.id, agent, at(5), null);
    conv.pullEvents();
    conv.complete(c.id, { outcome: 'failed', error: 'timeout talking to S3' }, agent, at(9));
    expect(c.status).toBe('completed');
    expect(c.snapshot().result).toMatchObject({ outcome: 'failed', error: 'timeout talking to S3' });
    expect(conv.pullEvents()[0].data).toMatchObject({
      outcome: 'failed',
      error: 'timeout talking to S3',
      durationMs: 4000,
    });
  });

  it('refuses a result before the claim as not_executed', () => {
    const { conv, call: c } = withOne('auto_read');
    const err = thrown(() => conv.complete(c.id, { outcome: 'succeeded' }, agent, at(5)));
    expect(err.code).toBe('not_executed');
    expect(c.status).toBe('approved');
    expect(conv.pullEvents()).toEqual([]);
  });

  it('refuses a result on a pending call as not_executed', () => {
    const { conv, call: c } = withOne('confirm_delete');
    expect(thrown(() => conv.complete(c.id, { outcome: 'succeeded' }, agent, at(5))).code).toBe('not_executed');
  });

  it('refuses a second result as already_completed', () => {
    const { conv, call: c } = withOne('auto_read');
    conv.claim(c.id, agent, at(5), null);
    conv.complete(c.id, { outcome: 'succeeded' }, agent, at(6));
    conv.pullEvents();
    const err = thrown(() => conv.complete(c.id, { outcome: 'failed' }, agent, at(7)));
    expect(err.code).toBe('already_completed');
    expect(c.snapshot().result?.outcome).toBe('succeeded');
    expect(conv.pullEvents()).toEqual([]);
  });
});

// ---------------------------------------------------------------- halt

describe('cancelling open calls on halt', () => {
  function mixed() {
    const conv = started();
    const { calls } = conv.propose(
      [call('confirm_a', 'a'), call('auto_b', 'b'), call('auto_c', 'c'), call('auto_d', 'd'), call('deny_e', 'e')],
      byName(),
      idGen(),
      at(1),
      null,
    );
    const [pending, approved, executed, completed, rejected] = calls;
    conv.claim(executed.id, agent, at(2), null);
    conv.claim(completed.id, agent, at(2), null);
    conv.complete(completed.id, { outcome: 'succeeded' }, agent, at(3));
    conv.pullEvents();
    conv.pullChangedCalls();
    return { conv, pending, approved, executed, completed, rejected };
  }

  it('cancels pending and approved-but-unclaimed calls and leaves the others alone', () => {
    const { conv, pending, approved, executed, completed, rejected } = mixed();
    const cancelled = conv.cancelOpen('incident', admin, at(10));
    expect(cancelled).toEqual([pending, approved]);
    expect([pending, approved, executed, completed, rejected].map((c) => c.status)).toEqual([
      'cancelled',
      'cancelled',
      'executed',
      'completed',
      'rejected',
    ]);
    expect(conv.status).toBe('active');

    const events = conv.pullEvents();
    expect(types(events)).toEqual(['ToolCallCancelled', 'ToolCallCancelled']);
    expect(events.map((e) => e.toolCallId)).toEqual([pending.id, approved.id]);
    expect(events.map((e) => e.data)).toMatchObject([
      { reason: 'incident', previousStatus: 'pending' },
      { reason: 'incident', previousStatus: 'approved' },
    ]);
    expect(events[0].actor).toEqual(admin);
    expect(conv.pullChangedCalls().changed).toEqual([pending, approved]);
  });

  it('records a cancellation outcome for a pending call', () => {
    const { conv, pending } = mixed();
    conv.cancelOpen('incident', admin, at(10));
    expect(pending.decision).toMatchObject({
      outcome: 'cancelled',
      by: { id: 'root', via: 'api' },
      at: at(10),
      reason: 'incident',
    });
    expect(pending.snapshot().cancellation).toEqual({ by: { id: 'root', via: 'api' }, at: at(10), reason: 'incident' });
  });

  it('keeps the approval in the decision of an approved call it cancels', () => {
    const { conv, approved } = mixed();
    conv.cancelOpen('incident', admin, at(10));
    expect(approved.decision).toMatchObject({ outcome: 'approved', by: { id: 'policy', via: 'policy' }, at: at(1) });
    expect(approved.snapshot().cancellation).toMatchObject({ reason: 'incident', at: at(10) });
  });

  it('keeps a person’s approval in the decision of an approved call it cancels', () => {
    const { conv, call: c } = withOne('confirm_delete');
    conv.decide(c.id, { decision: 'approve' }, alice, at(2));
    conv.cancelOpen('incident', admin, at(3));
    expect(c.status).toBe('cancelled');
    expect(c.decision).toMatchObject({ outcome: 'approved', by: { id: 'alice' } });
  });

  it('a cancelled call never runs', () => {
    const { conv, approved } = mixed();
    conv.cancelOpen('incident', admin, at(10));
    expect(conv.claim(approved.id, agent, at(11), null)).toMatchObject({
      kind: 'refused',
      error: { code: 'not_approved' },
    });
  });

  it('deciding a call cancelled while pending is refused with already_decided', () => {
    const { conv, pending } = mixed();
    conv.cancelOpen('incident', admin, at(10));
    const err = refusal(conv.decide(pending.id, { decision: 'approve' }, alice, at(11)));
    expect(err.code).toBe('already_decided');
    expect(err.details).toMatchObject({ toolCallStatus: 'cancelled', decision: { outcome: 'cancelled' } });
  });

  it('does nothing when nothing is open', () => {
    const { conv, call: c } = withOne('deny_rm');
    expect(conv.cancelOpen('incident', admin, at(10))).toEqual([]);
    expect(c.status).toBe('rejected');
    expect(conv.pullEvents()).toEqual([]);
  });
});

// ---------------------------------------------------------------- rehydrate

describe('rehydrating', () => {
  it('restores a conversation whose rules hold as before', () => {
    const { conv, call: c } = withOne('confirm_delete');
    const state = {
      id: conv.id,
      tenantId: conv.tenantId,
      agentId: conv.agentId,
      user: conv.user,
      title: conv.title,
      createdAt: conv.createdAt,
      updatedAt: conv.updatedAt,
      version: 4,
      toolCalls: [{ ...c.snapshot() }],
    };
    const back = Conversation.rehydrate(state);
    expect(back.version).toBe(4);
    expect(back.hasChanges).toBe(false);
    expect(back.status).toBe('blocked');
    expect(thrown(() => back.propose([call('auto_x', 'new')], byName(), idGen('n'), at(5), null)).details).toEqual({
      pendingToolCallIds: [c.id],
    });
    expect(back.decide(c.id, { decision: 'approve' }, alice, at(5)).kind).toBe('decided');
  });
});

// ---------------------------------------------------------------- properties

type Op =
  | { op: 'decide'; call: number; decision: 'approve' | 'reject' | 'always_allow'; who: number; t: number }
  | { op: 'claim'; call: number; t: number; halted: boolean }
  | { op: 'complete'; call: number; outcome: 'succeeded' | 'failed'; t: number }
  | { op: 'expire'; t: number }
  | { op: 'cancel'; t: number };

const DECIDERS = [
  alice,
  bob,
  carol,
  auditor,
  person('agent-1', ['agent', 'admin'], 'api'),
  person(USER.id, ['member']),
];
const LEVELS: SupervisionLevel[] = ['automatic', 'notify', 'deny', 'confirm', 'manual'];

const opArb = (n: number): fc.Arbitrary<Op> =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        op: fc.constant('decide' as const),
        call: fc.nat(n - 1),
        decision: fc.constantFrom('approve' as const, 'reject' as const, 'always_allow' as const),
        who: fc.nat(DECIDERS.length - 1),
        t: fc.nat(400),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant('claim' as const),
        call: fc.nat(n - 1),
        t: fc.nat(400),
        halted: fc.boolean(),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        op: fc.constant('complete' as const),
        call: fc.nat(n - 1),
        outcome: fc.constantFrom('succeeded' as const, 'failed' as const),
        t: fc.nat(400),
      }),
    },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('expire' as const), t: fc.nat(400) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('cancel' as const), t: fc.nat(400) }) },
  );

const scenarioArb = fc
  .record({
    levels: fc.array(fc.constantFrom(...LEVELS), { minLength: 1, maxLength: 5 }),
    approvers: fc.subarray(['approver', 'admin', 'requester'], { minLength: 1 }),
    timeoutSeconds: fc.integer({ min: 1, max: 300 }),
  })
  .chain((s) => fc.record({ s: fc.constant(s), ops: fc.array(opArb(s.levels.length), { maxLength: 40 }) }));

const DECISION_EVENTS: EventType[] = [
  'ToolCallAutoApproved',
  'ToolCallApproved',
  'ToolCallRejected',
  'ToolCallExpired',
];

describe('whatever sequence of decisions, claims and results is applied', () => {
  it('each call records at most one decision, runs at most once, never runs unless approved, and its events follow the table', () => {
    fc.assert(
      fc.property(scenarioArb, ({ s, ops }) => {
        const conv = started();
        const levelByTool = new Map(s.levels.map((l, i) => [`tool_${i}`, l]));
        const { calls } = conv.propose(
          s.levels.map((_, i) => call(`tool_${i}`, `e${i}`)),
          (f) => verdict(levelByTool.get(f.toolName)!, { approvers: s.approvers, timeoutSeconds: s.timeoutSeconds }),
          idGen(),
          at(0),
          null,
        );
        const events: DomainEvent[] = conv.pullEvents();
        let clock = 0;
        for (const o of ops) {
          clock += o.t; // time only moves forward
          const now = at(clock);
          const statusesBefore = calls.map((c) => c.status);
          try {
            switch (o.op) {
              case 'decide': {
                const r = conv.decide(calls[o.call].id, { decision: o.decision }, DECIDERS[o.who], now);
                if (r.kind === 'decided') expect(statusesBefore[o.call]).toBe('pending');
                break;
              }
              case 'claim': {
                const r = conv.claim(calls[o.call].id, agent, now, o.halted ? HALT : null);
                if (r.kind === 'claimed') expect(statusesBefore[o.call]).toBe('approved');
                break;
              }
              case 'complete':
                conv.complete(calls[o.call].id, { outcome: o.outcome }, agent, now);
                expect(statusesBefore[o.call]).toBe('executed');
                break;
              case 'expire':
                conv.expireDue(now);
                break;
              case 'cancel':
                conv.cancelOpen('halt', admin, now);
                break;
            }
          } catch (e) {
            if (!(e instanceof DomainError)) throw e;
            expect(['forbidden', 'halted', 'not_executed', 'already_completed']).toContain(e.code);
            // a thrown refusal changes nothing (events may only come from an expiry on the way)
            calls.forEach((c, i) => expect(c.status === statusesBefore[i] || c.status === 'expired').toBe(true));
          }
          events.push(...conv.pullEvents());
          expect(conv.pendingCount).toBe(calls.filter((c) => c.status === 'pending').length);
        }

        for (const c of calls) {
          const mine = events.filter((e) => e.toolCallId === c.id);
          const count = (t: EventType) => mine.filter((e) => e.type === t).length;
          expect(count('ToolCallProposed')).toBe(1);
          expect(DECISION_EVENTS.reduce((n, t) => n + count(t), 0)).toBeLessThanOrEqual(1);
          expect(count('ToolCallExecuted')).toBeLessThanOrEqual(1);
          expect(count('ToolCallCompleted')).toBeLessThanOrEqual(count('ToolCallExecuted'));
          expect(count('ToolCallCancelled')).toBeLessThanOrEqual(1);

          const executedAt = mine.findIndex((e) => e.type === 'ToolCallExecuted');
          if (executedAt >= 0) {
            // it ran only after an approval, by the policy or by a person, and was not cancelled or expired first
            const before = mine.slice(0, executedAt).map((e) => e.type);
            expect(before.some((t) => t === 'ToolCallAutoApproved' || t === 'ToolCallApproved')).toBe(true);
            expect(before).not.toContain('ToolCallRejected');
            expect(before).not.toContain('ToolCallExpired');
            expect(before).not.toContain('ToolCallCancelled');
          }
          // a person-approved call was approved by someone allowed to: never an agent, always one of the approvers
          for (const e of mine.filter(
            (x) => (x.type === 'ToolCallApproved' || x.type === 'ToolCallRejected') && x.actor.via !== 'policy',
          )) {
            expect(e.actor.kind).toBe('person');
            expect(e.actor.roles ?? []).not.toContain('agent');
            const byRole = (e.actor.roles ?? []).some((r) => r !== 'requester' && s.approvers.includes(r));
            const asRequester = s.approvers.includes('requester') && e.actor.id === USER.id;
            expect(byRole || asRequester).toBe(true);
          }
          // denied and manual/confirm calls never run without a person's approval
          if (c.policy.level === 'deny') expect(count('ToolCallExecuted')).toBe(0);
          if (c.policy.level === 'confirm' || c.policy.level === 'manual') {
            if (count('ToolCallExecuted') > 0) expect(count('ToolCallApproved')).toBe(1);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a conversation is blocked exactly while it holds a pending call', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...LEVELS), { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(7), { maxLength: 8 }),
        (levels, rejectOrder) => {
          const conv = started();
          const { calls } = conv.propose(
            levels.map((_, i) => call(`tool_${i}`)),
            (f) => verdict(levels[Number(f.toolName.split('_')[1])]),
            idGen(),
            at(0),
            null,
          );
          const pendingIds = () => calls.filter((c) => c.status === 'pending').map((c) => c.id);
          for (const i of rejectOrder) {
            if (i < calls.length && calls[i].status === 'pending')
              conv.decide(calls[i].id, { decision: 'reject' }, alice, at(1));
            expect(conv.status).toBe(pendingIds().length > 0 ? 'blocked' : 'active');
            if (pendingIds().length > 0) {
              expect(
                thrown(() =>
                  conv.propose([call('tool_x', 'later')], () => verdict('automatic'), idGen('n'), at(2), null),
                ).details,
              ).toEqual({ pendingToolCallIds: pendingIds() });
            }
          }
        },
      ),
    );
  });
});
