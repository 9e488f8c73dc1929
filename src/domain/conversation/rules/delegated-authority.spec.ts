import type { PolicyVerdict } from '../../policy/approval-policy';
import type { Principal } from '../../shared/actor';
import { DomainError } from '../../shared/domain-error';
import { Conversation, ConversationUser, Decider, DecisionResult } from '../conversation.aggregate';
import type { ToolCall } from '../tool-call.entity';
import { mayReadCall } from './who-may-read';

// Deciding on behalf of a delegator (out of office): a delegate decides what the people who delegated to them may
// decide, with those people's rights and never more; separation of duties and quorums see both people.

const T0 = new Date('2026-03-01T12:00:00.000Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const TENANT = 't1';
const USER: ConversationUser = { id: 'rita', roles: [], name: 'Rita' };
const OWNER = 'owen';
const AGENT = 'agent-1';

const person = (id: string, roles: string[], extra: Partial<Decider> = {}): Decider => ({
  id,
  tenant: TENANT,
  roles,
  via: 'web',
  ...extra,
});
/** A delegator as the application hands them over: their record's id, name, email and roles. */
const authority = (id: string, roles: string[], extra: Partial<Principal> = {}): Principal => ({
  id,
  tenant: TENANT,
  roles,
  ...extra,
});
const bob = person('bob', ['viewer'], { name: 'Bob' });
const ann = authority('ann', ['admin'], { name: 'Ann', email: 'Ann@Example.com' });
const annAsApprover = authority('ann', ['approver'], { name: 'Ann' });

function held(over: Partial<PolicyVerdict>): { conv: Conversation; call: ToolCall } {
  const conv = Conversation.start({
    id: 'conv_1',
    tenantId: TENANT,
    agentId: AGENT,
    agentOwner: OWNER,
    user: USER,
    at: at(0),
  });
  const verdict: PolicyVerdict = {
    level: 'confirm',
    rule: 0,
    policyVersion: 2,
    reason: 'Rule 0: confirm',
    approvers: ['admin'],
    timeoutSeconds: 300,
    grants: 'tenant',
    ...over,
  };
  const { calls } = conv.propose(
    [{ toolName: 'wire_money', arguments: { amount: 900 } }],
    () => verdict,
    () => 'tc_1',
    at(1),
    null,
  );
  conv.pullEvents();
  return { conv, call: calls[0] };
}

const approve = { decision: 'approve' } as const;
const outcome = (r: DecisionResult) => (r.kind === 'refused' ? r.error.code : r.kind);
function thrown(f: () => unknown): DomainError | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  return undefined;
}

describe('deciding on behalf of a delegator', () => {
  it("lets a delegate decide a call only the delegator's role may decide, recorded as on the delegator's behalf", () => {
    const { conv, call } = held({ approvers: ['admin'] });
    expect(conv.mayDecide(bob, call)).toBe(false);
    expect(conv.mayDecide(bob, call, [ann])).toBe(true);
    expect(outcome(conv.decide(call.id, approve, bob, at(2), [ann]))).toBe('decided');
    expect(call.status).toBe('approved');
    expect(call.decision?.by).toEqual({ id: 'bob', name: 'Bob', via: 'web', onBehalfOf: { id: 'ann', name: 'Ann' } });
    const [event] = conv.pullEvents();
    expect(event.type).toBe('ToolCallApproved');
    expect(event.actor).toMatchObject({ id: 'bob', kind: 'person', onBehalfOf: { id: 'ann', name: 'Ann' } });
    expect(event.data).toMatchObject({ approvedBy: 'bob', onBehalfOf: 'ann' });
  });

  it('refuses the delegate without a delegation, and with one from someone who may not decide the call either', () => {
    const { conv, call } = held({ approvers: ['admin'] });
    expect(thrown(() => conv.decide(call.id, approve, bob, at(2)))?.code).toBe('forbidden');
    expect(thrown(() => conv.decide(call.id, approve, bob, at(2), [annAsApprover]))?.code).toBe('forbidden');
    expect(call.status).toBe('pending');
    expect(conv.pullEvents()).toEqual([]);
  });

  it("decides with the person's own rights when those suffice: no one's behalf is named", () => {
    const { conv, call } = held({ approvers: ['approver', 'admin'] });
    const approverBob = person('bob', ['approver']);
    expect(outcome(conv.decide(call.id, { decision: 'reject', reason: 'no' }, approverBob, at(2), [ann]))).toBe(
      'decided',
    );
    expect(call.decision?.by.onBehalfOf).toBeUndefined();
    expect(conv.pullEvents()[0].actor.onBehalfOf).toBeUndefined();
  });

  it("rejects on the delegator's behalf too, recorded with both people", () => {
    const { conv, call } = held({ approvers: ['admin'] });
    expect(outcome(conv.decide(call.id, { decision: 'reject', reason: 'not now' }, bob, at(2), [ann]))).toBe('decided');
    expect(call.decision).toMatchObject({ outcome: 'rejected', by: { id: 'bob', onBehalfOf: { id: 'ann' } } });
    expect(conv.pullEvents()[0].data).toMatchObject({ rejectedBy: 'bob', onBehalfOf: 'ann', reason: 'not now' });
  });

  it("decides a call that names the delegator (person:<email>), with the email on the delegator's record", () => {
    const { conv, call } = held({ approvers: ['person:ann@example.com'] });
    expect(outcome(conv.decide(call.id, approve, bob, at(2), [ann]))).toBe('decided');
    expect(call.decision?.by.onBehalfOf?.id).toBe('ann');
  });

  it('decides for the requester where `requester` is listed and separation of duties does not apply', () => {
    const { conv, call } = held({ approvers: ['requester'] });
    const rita = authority('rita', []);
    expect(outcome(conv.decide(call.id, approve, bob, at(2), [rita]))).toBe('decided');
    expect(call.decision?.by.onBehalfOf?.id).toBe('rita');
  });

  it('never lets an agent decide, with or without delegators, and takes no agent as a delegator', () => {
    const { conv, call } = held({ approvers: ['admin'] });
    const agent = person('bot', ['agent']);
    expect(thrown(() => conv.decide(call.id, approve, agent, at(2), [ann]))?.message).toContain('Agent tokens');
    const agentDelegator = authority('bot', ['agent', 'admin']);
    expect(conv.mayDecide(bob, call, [agentDelegator])).toBe(false);
    expect(thrown(() => conv.decide(call.id, approve, bob, at(2), [agentDelegator]))?.code).toBe('forbidden');
  });

  it('is not transitive: only the rights of those who delegated to the person count, never their delegators', () => {
    // carl's one delegator is bob, a viewer; ann's delegation to bob gives carl nothing (the application passes
    // each person's direct delegators only, as their records show them).
    const { conv, call } = held({ approvers: ['admin'] });
    const carl = person('carl', []);
    expect(thrown(() => conv.decide(call.id, approve, carl, at(2), [authority('bob', ['viewer'])]))?.code).toBe(
      'forbidden',
    );
  });
});

describe('a delegation never widens what the delegate may do', () => {
  it("limits a standing grant to the delegator's roles: an approver's delegate grants at most the conversation", () => {
    const { conv, call } = held({ approvers: ['approver'] });
    const r = conv.decide(call.id, { decision: 'always_allow', scope: 'tenant' }, bob, at(2), [annAsApprover]);
    expect(r.kind === 'refused' && r.error.details).toMatchObject({
      requestedScope: 'tenant',
      allowedScope: 'conversation',
    });
    expect(call.status).toBe('pending');
    const [refused] = conv.pullEvents();
    expect(refused.type).toBe('GrantRefused');
    expect(refused.data).toMatchObject({ refusedBy: 'bob', onBehalfOf: 'ann' });
    expect(refused.actor.onBehalfOf).toEqual({ id: 'ann', name: 'Ann' });
  });

  it("lets an admin's delegate make the grant the admin could, made on the admin's behalf", () => {
    const { conv, call } = held({ approvers: ['admin'] });
    const r = conv.decide(call.id, { decision: 'always_allow', scope: 'tenant' }, bob, at(2), [ann]);
    expect(r.kind === 'decided' && r.grant).toEqual({
      toolName: 'wire_money',
      scope: 'tenant',
      onBehalfOf: { id: 'ann', name: 'Ann' },
    });
  });

  it("never takes the policy's bound off: grants none stays none on anyone's behalf", () => {
    const { conv, call } = held({ approvers: ['admin'], grants: 'none' });
    const r = conv.decide(call.id, { decision: 'always_allow', scope: 'conversation' }, bob, at(2), [ann]);
    expect(r.kind === 'refused' && r.error.details).toMatchObject({ allowedScope: 'none' });
  });

  it('a person with their own rights grants with their own roles, not with a delegator’s wider ones', () => {
    const { conv, call } = held({ approvers: ['approver', 'admin'] });
    const approverBob = person('bob', ['approver']);
    const r = conv.decide(call.id, { decision: 'always_allow', scope: 'tenant' }, approverBob, at(2), [ann]);
    expect(r.kind === 'refused' && r.error.details).toMatchObject({ allowedScope: 'conversation' });
  });
});

describe('separation of duties holds for the delegate and for the delegator', () => {
  it("refuses the delegate an approval on anyone's behalf of a call where they are the conversation's user", () => {
    const { conv, call } = held({ approvers: ['admin'], selfApproval: false });
    const rita = person('rita', ['viewer']);
    expect(outcome(conv.decide(call.id, approve, rita, at(2), [ann]))).toBe('self_approval');
    expect(call.status).toBe('pending');
    const [refused] = conv.pullEvents();
    expect(refused.type).toBe('DecisionRefused');
    expect(refused.data).toMatchObject({ code: 'self_approval', refusedBy: 'rita', onBehalfOf: 'ann' });
  });

  it("refuses the agent's owner as a delegate the same way", () => {
    const { conv, call } = held({ approvers: ['admin'], selfApproval: false });
    expect(outcome(conv.decide(call.id, approve, person(OWNER, []), at(2), [ann]))).toBe('self_approval');
  });

  it("refuses an approval on behalf of the conversation's user, who could not approve it herself", () => {
    const { conv, call } = held({ approvers: ['admin'], selfApproval: false });
    const ritaAdmin = authority('rita', ['admin'], { name: 'Rita' });
    const r = conv.decide(call.id, approve, bob, at(2), [ritaAdmin]);
    expect(outcome(r)).toBe('self_approval');
    expect(r.kind === 'refused' && r.error.message).toContain('rita, on whose behalf you act');
    expect(call.status).toBe('pending');
    expect(conv.approvalRefusal(bob, call, [ritaAdmin])).toContain('on whose behalf');
    // A rejection on her behalf is still taken, as hers would be.
    expect(outcome(conv.decide(call.id, { decision: 'reject' }, bob, at(3), [ritaAdmin]))).toBe('decided');
  });

  it("refuses an approval on behalf of the agent's owner", () => {
    const { conv, call } = held({ approvers: ['admin'], selfApproval: false });
    expect(outcome(conv.decide(call.id, approve, bob, at(2), [authority(OWNER, ['admin'])]))).toBe('self_approval');
  });

  it('acts for another delegator whose approval the rules take, when the first may not approve', () => {
    const { conv, call } = held({ approvers: ['admin'], selfApproval: false });
    const delegators = [authority('owen', ['admin']), authority('zoe', ['admin'], { name: 'Zoe' })];
    expect(outcome(conv.decide(call.id, approve, bob, at(2), delegators))).toBe('decided');
    expect(call.decision?.by.onBehalfOf).toEqual({ id: 'zoe', name: 'Zoe' });
  });
});

describe('quorum: one human, one authority', () => {
  const quorum = { approvers: ['admin'], quorum: { count: 2 } };
  const dave = person('dave', ['admin']);

  it("counts an approval on ann's behalf once: neither ann nor bob adds another", () => {
    const { conv, call } = held(quorum);
    expect(outcome(conv.decide(call.id, approve, bob, at(2), [ann]))).toBe('decided');
    expect(call.status).toBe('pending');
    expect(call.approvals.map((a) => a.by)).toEqual([
      { id: 'bob', name: 'Bob', via: 'web', onBehalfOf: { id: 'ann', name: 'Ann' } },
    ]);
    const annHerself = person('ann', ['admin']);
    const again = thrown(() => {
      const r = conv.decide(call.id, approve, annHerself, at(3));
      if (r.kind === 'refused') throw r.error;
    });
    expect(again?.code).toBe('already_decided');
    expect(again?.message).toContain('bob approved it on behalf of ann');
    expect(outcome(conv.decide(call.id, approve, bob, at(4), [ann]))).toBe('unchanged');
    expect(call.approvals).toHaveLength(1);
    expect(outcome(conv.decide(call.id, approve, dave, at(5)))).toBe('decided');
    expect(call.status).toBe('approved');
    expect(conv.pullEvents().map((e) => [e.type, e.data])).toEqual([
      ['ToolCallApprovalRecorded', expect.objectContaining({ approvedBy: 'bob', onBehalfOf: 'ann', count: 1 })],
      ['ToolCallApproved', expect.objectContaining({ approvedBy: 'dave', approvals: ['bob', 'dave'] })],
    ]);
  });

  it("refuses bob's approval for ann once ann has approved herself", () => {
    const { conv, call } = held(quorum);
    expect(outcome(conv.decide(call.id, approve, person('ann', ['admin']), at(2)))).toBe('decided');
    expect(outcome(conv.decide(call.id, approve, bob, at(3), [ann]))).toBe('already_decided');
    expect(call.approvals).toHaveLength(1);
  });

  it('refuses a second delegate approving for the same delegator (a replaced delegation)', () => {
    const { conv, call } = held(quorum);
    expect(outcome(conv.decide(call.id, approve, bob, at(2), [ann]))).toBe('decided');
    expect(outcome(conv.decide(call.id, approve, person('carol', []), at(3), [ann]))).toBe('already_decided');
  });

  it("counts a delegate once: the delegate's own approval after approving for someone else changes nothing", () => {
    const { conv, call } = held(quorum);
    const adminBob = person('bob', ['admin']);
    expect(outcome(conv.decide(call.id, approve, adminBob, at(2), [ann]))).toBe('decided');
    expect(call.approvals[0].by.onBehalfOf).toBeUndefined();
    // Bob's own rights decided: his delegation does not give him a second voice.
    expect(outcome(conv.decide(call.id, approve, adminBob, at(3), [ann]))).toBe('unchanged');
    expect(call.approvals).toHaveLength(1);
  });

  it("counts towards a quorum's `of` with the delegator's roles, never the delegate's", () => {
    const { conv, call } = held({ approvers: ['approver', 'admin'], quorum: { count: 2, of: ['admin'] } });
    const approverBob = person('bob', ['approver']);
    // Bob's own approval would not count (he may only reject): he approves for ann, an admin.
    expect(outcome(conv.decide(call.id, approve, approverBob, at(2), [ann]))).toBe('decided');
    expect(call.approvals[0].by.onBehalfOf?.id).toBe('ann');
    // Acting for an approver gives him nothing that counts.
    const other = held({ approvers: ['approver', 'admin'], quorum: { count: 2, of: ['admin'] } });
    expect(thrown(() => other.conv.decide(other.call.id, approve, bob, at(2), [annAsApprover]))?.code).toBe(
      'forbidden',
    );
  });
});

describe('who may read: a delegate', () => {
  const parties = { agentId: AGENT, userId: 'rita' };

  it('reads the held calls a delegator may decide, and no others, nor their conversations', () => {
    expect(mayReadCall(bob, parties, ['admin'], [ann])).toBe(true);
    expect(mayReadCall(bob, parties, ['person:ann@example.com'], [ann])).toBe(true);
    expect(mayReadCall(bob, parties, ['admin'], [annAsApprover])).toBe(false);
    expect(mayReadCall(bob, parties, ['admin'])).toBe(false);
    // A call settled at once (no approvers) is the conversation's: an admin reads it, her delegate does not.
    expect(mayReadCall(bob, parties, undefined, [ann])).toBe(false);
  });

  it('never lets an agent read through a delegator', () => {
    const agent: Principal = { id: 'other-agent', tenant: TENANT, roles: ['agent'] };
    expect(mayReadCall(agent, parties, ['admin'], [ann])).toBe(false);
  });
});
