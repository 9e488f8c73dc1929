import type { PolicyVerdict } from '../../policy/approval-policy';
import type { Principal } from '../../shared/actor';
import { DomainError } from '../../shared/domain-error';
import { Conversation, ConversationUser, Decider, DecisionResult } from '../conversation.aggregate';
import type { ToolCall } from '../tool-call.entity';
import { mayReadCall } from './who-may-read';

// People named as approvers (`person:<id or email>`), beside roles: who may decide, who counts towards a quorum,
// separation of duties, and who may read the call, as the aggregate and its rules enforce them.

const T0 = new Date('2026-03-01T12:00:00.000Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const TENANT = 't1';
const USER: ConversationUser = { id: 'rita', roles: [], name: 'Rita' };
const OWNER = 'owen';
const AGENT = 'agent-1';

const person = (id: string, roles: string[], email?: string): Decider => ({
  id,
  tenant: TENANT,
  roles,
  via: 'web',
  ...(email ? { email } : {}),
});
const ann = person('u-123', ['viewer'], 'Ann@Example.com');
const bob = person('bob', ['approver']);
const cfo = person('cfo', ['viewer']);
const carol = person('carol', ['admin']);

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
function thrownCode(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof DomainError) return e.code;
    throw e;
  }
  return undefined;
}

describe('who may decide: a person named among the approvers', () => {
  it('lets the person named by id decide, whatever their roles, and no one else outside the approvers', () => {
    const { conv, call } = held({ approvers: ['person:u-123'] });
    expect(conv.mayDecide(ann, call)).toBe(true);
    expect(conv.mayDecide(bob, call)).toBe(false);
    expect(outcome(conv.decide(call.id, approve, ann, at(2)))).toBe('decided');
    expect(call.status).toBe('approved');
    expect(call.decision?.by.id).toBe('u-123');
  });

  it('matches the id and the email case-insensitively, the policy having stored them lowercased', () => {
    const byEmail = held({ approvers: ['person:ann@example.com'] });
    expect(byEmail.conv.mayDecide(ann, byEmail.call)).toBe(true);
    expect(byEmail.conv.mayDecide({ ...ann, email: 'ANN@EXAMPLE.COM' }, byEmail.call)).toBe(true);
    expect(byEmail.conv.mayDecide({ ...ann, email: undefined }, byEmail.call)).toBe(false);
    expect(byEmail.conv.mayDecide({ ...ann, email: 'ann@example.org' }, byEmail.call)).toBe(false);
    const byId = held({ approvers: ['person:u-123'] });
    expect(byId.conv.mayDecide({ ...ann, id: 'U-123' }, byId.call)).toBe(true);
  });

  it('never takes a token role spelt like a name for the person: roles are not people', () => {
    const { conv, call } = held({ approvers: ['person:ann@example.com'] });
    const impostor = person('mallory', ['person:ann@example.com']);
    expect(conv.mayDecide(impostor, call)).toBe(false);
    expect(thrownCode(() => conv.decide(call.id, approve, impostor, at(2)))).toBe('forbidden');
    expect(call.status).toBe('pending');
  });

  it('keeps roles deciding beside a named person', () => {
    const { conv, call } = held({ approvers: ['admin', 'person:ann@example.com'] });
    expect(conv.mayDecide(carol, call)).toBe(true);
    expect(conv.mayDecide(ann, call)).toBe(true);
    expect(conv.mayDecide(bob, call)).toBe(false);
  });

  it('never lets an agent decide, even one whose id or email the approvers name', () => {
    const { conv, call } = held({ approvers: [`person:${AGENT}`] });
    const agent: Principal = { id: AGENT, tenant: TENANT, roles: ['agent'] };
    expect(conv.mayDecide(agent, call)).toBe(false);
    expect(thrownCode(() => conv.decide(call.id, approve, { ...agent, via: 'api' }, at(2)))).toBe('forbidden');
  });

  it("still refuses a named person who is the conversation's user where separation of duties applies", () => {
    const { conv, call } = held({ approvers: ['person:rita'], selfApproval: false });
    const rita = person('rita', ['viewer']);
    expect(conv.mayDecide(rita, call)).toBe(true);
    expect(outcome(conv.decide(call.id, approve, rita, at(2)))).toBe('self_approval');
    expect(call.status).toBe('pending');
    expect(conv.pullEvents().map((e) => e.type)).toEqual(['DecisionRefused']);
    // A rejection is still theirs to make.
    expect(outcome(conv.decide(call.id, { decision: 'reject', reason: 'no' }, rita, at(3)))).toBe('decided');
  });

  it("refuses the agent's owner named by email too, where separation of duties applies", () => {
    const { conv, call } = held({ approvers: ['person:owen@example.com'], selfApproval: false });
    const owen = person(OWNER, ['viewer'], 'Owen@example.com');
    expect(outcome(conv.decide(call.id, approve, owen, at(2)))).toBe('self_approval');
  });
});

describe('quorum: people named in `of`', () => {
  it("counts the named person's approval, and refuses an admin's", () => {
    const { conv, call } = held({ approvers: ['admin', 'person:cfo'], quorum: { count: 1, of: ['person:cfo'] } });
    expect(thrownCode(() => conv.decide(call.id, approve, carol, at(2)))).toBe('forbidden');
    expect(call.status).toBe('pending');
    expect(outcome(conv.decide(call.id, approve, cfo, at(3)))).toBe('decided');
    expect(call.status).toBe('approved');
  });

  it('counts roles and named people alike towards a quorum of both, each person once', () => {
    const { conv, call } = held({
      approvers: ['admin', 'person:ann@example.com'],
      quorum: { count: 2, of: ['admin', 'person:ann@example.com'] },
    });
    expect(outcome(conv.decide(call.id, approve, ann, at(2)))).toBe('decided');
    expect(call.status).toBe('pending');
    expect(outcome(conv.decide(call.id, approve, ann, at(3)))).toBe('unchanged');
    expect(outcome(conv.decide(call.id, approve, carol, at(4)))).toBe('decided');
    expect(call.status).toBe('approved');
    expect(call.approvals.map((a) => a.by.id)).toEqual(['u-123', 'carol']);
  });

  it('does not count a role spelt like the name in `of`', () => {
    const { conv, call } = held({
      approvers: ['approver', 'person:cfo'],
      quorum: { count: 1, of: ['person:cfo'] },
    });
    const impostor = person('mallory', ['approver', 'person:cfo']);
    expect(thrownCode(() => conv.decide(call.id, approve, impostor, at(2)))).toBe('forbidden');
  });
});

describe('who may read: a person named on a call', () => {
  const parties = { agentId: AGENT, userId: 'rita' };

  it('reads that call, by id or email, but not through a role spelt like their name, and never as an agent', () => {
    expect(mayReadCall(ann, parties, ['admin', 'person:ann@example.com'])).toBe(true);
    expect(mayReadCall(ann, parties, ['person:u-123'])).toBe(true);
    expect(mayReadCall(ann, parties, ['admin'])).toBe(false);
    expect(mayReadCall(ann, parties, undefined)).toBe(false);
    expect(mayReadCall(person('mallory', ['person:u-123']), parties, ['person:u-123'])).toBe(false);
    const agent: Principal = { id: 'other-agent', tenant: TENANT, roles: ['agent'] };
    expect(mayReadCall(agent, parties, ['person:other-agent'])).toBe(false);
  });

  it('leaves who reads the conversation as it was', () => {
    expect(mayReadCall(bob, parties, ['person:ann@example.com'])).toBe(true);
    expect(mayReadCall(person('rita', []), parties, undefined)).toBe(true);
    expect(mayReadCall({ id: AGENT, tenant: TENANT, roles: ['agent'] }, parties, undefined)).toBe(true);
  });
});
