import fc from 'fast-check';
import { Principal } from '../shared/actor';
import { DomainError } from '../shared/domain-error';
import type { PolicyVerdict } from '../policy/approval-policy';
import { Conversation, ConversationUser, Decider, DecisionInput, DecisionResult } from './conversation.aggregate';
import { ToolCall } from './tool-call.entity';

// Separation of duties (`selfApproval: false`) and quorums, as the aggregate enforces them.

const T0 = new Date('2026-03-01T12:00:00.000Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const TENANT = 't1';
const USER: ConversationUser = { id: 'rita', roles: ['approver'], name: 'Rita' };
const OWNER = 'owen';

const person = (id: string, roles: string[], via: Decider['via'] = 'web'): Decider => ({
  id,
  tenant: TENANT,
  roles,
  via,
});
const rita = person('rita', ['approver']);
const owen = person('owen', ['admin']);
const alice = person('alice', ['approver']);
const bob = person('bob', ['approver', 'finance'], 'cli');
const carol = person('carol', ['admin', 'finance'], 'slack');
const dan = person('dan', ['finance'], 'slack');
const agent: Principal = { id: 'agent-1', tenant: TENANT, roles: ['agent'] };

function verdict(over: Partial<PolicyVerdict> = {}): PolicyVerdict {
  return {
    level: 'confirm',
    rule: 0,
    policyVersion: 2,
    reason: 'Rule 0: confirm',
    approvers: ['approver', 'admin', 'requester'],
    timeoutSeconds: 300,
    grants: 'tenant',
    ...over,
  };
}

function held(over: Partial<PolicyVerdict> = {}): { conv: Conversation; call: ToolCall } {
  const conv = Conversation.start({
    id: 'conv_1',
    tenantId: TENANT,
    agentId: agent.id,
    agentOwner: OWNER,
    user: USER,
    at: at(0),
  });
  let n = 0;
  const { calls } = conv.propose(
    [{ toolName: 'wire_money', arguments: { amount: 900 } }],
    () => verdict(over),
    () => `tc_${++n}`,
    at(1),
    null,
  );
  conv.pullEvents();
  conv.pullChangedCalls();
  return { conv, call: calls[0] };
}

const approve: DecisionInput = { decision: 'approve' };
const refusedCode = (r: DecisionResult) => (r.kind === 'refused' ? r.error.code : r.kind);

describe('separation of duties: selfApproval false', () => {
  it("refuses the conversation's user with self_approval, records DecisionRefused, and leaves the call pending", () => {
    const { conv, call } = held({ selfApproval: false });
    const r = conv.decide(call.id, approve, rita, at(2));
    expect(refusedCode(r)).toBe('self_approval');
    expect(r.kind === 'refused' && r.error.kind).toBe('forbidden');
    expect(call.status).toBe('pending');
    const events = conv.pullEvents();
    expect(events.map((e) => e.type)).toEqual(['DecisionRefused']);
    expect(events[0].data).toMatchObject({
      code: 'self_approval',
      refusedBy: 'rita',
      decision: 'approve',
      rule: 0,
      policyVersion: 2,
    });
  });

  it("refuses the agent's owner (its token's owner claim), whatever their roles", () => {
    const { conv, call } = held({ selfApproval: false });
    expect(refusedCode(conv.decide(call.id, { decision: 'always_allow' }, owen, at(2)))).toBe('self_approval');
    expect(call.status).toBe('pending');
  });

  it('lets the user reject their own call: refusing a risk is not approving it', () => {
    const { conv, call } = held({ selfApproval: false });
    expect(conv.decide(call.id, { decision: 'reject', reason: 'not me' }, rita, at(2)).kind).toBe('decided');
    expect(call.status).toBe('rejected');
  });

  it('lets anyone else allowed approve', () => {
    const { conv, call } = held({ selfApproval: false });
    expect(conv.decide(call.id, approve, alice, at(2)).kind).toBe('decided');
    expect(call.status).toBe('approved');
  });

  it('without the rule the requester may approve, as before', () => {
    const { conv, call } = held();
    expect(conv.decide(call.id, approve, rita, at(2)).kind).toBe('decided');
  });

  it('keeps selfApproval false on the call: a later policy change does not free a call already held', () => {
    const { call } = held({ selfApproval: false });
    expect(call.policy.selfApproval).toBe(false);
  });
});

describe('quorum', () => {
  it('records the first approval and stays pending; the second distinct person approves the call', () => {
    const { conv, call } = held({ quorum: { count: 2 } });
    expect(conv.decide(call.id, { decision: 'approve', reason: 'ok' }, alice, at(2)).kind).toBe('decided');
    expect(call.status).toBe('pending');
    expect(call.approvals.map((a) => a.by.id)).toEqual(['alice']);
    const first = conv.pullEvents();
    expect(first.map((e) => e.type)).toEqual(['ToolCallApprovalRecorded']);
    expect(first[0].data).toMatchObject({ approvedBy: 'alice', count: 1, needed: 2 });

    expect(conv.decide(call.id, approve, bob, at(3)).kind).toBe('decided');
    expect(call.status).toBe('approved');
    const second = conv.pullEvents();
    expect(second.map((e) => e.type)).toEqual(['ToolCallApproved']);
    expect(second[0].data).toMatchObject({ approvedBy: 'bob', approvals: ['alice', 'bob'] });
  });

  it('the same person twice counts once: a repeat is unchanged, never the second approval', () => {
    const { conv, call } = held({ quorum: { count: 2 } });
    conv.decide(call.id, approve, alice, at(2));
    conv.pullEvents();
    expect(conv.decide(call.id, approve, alice, at(3)).kind).toBe('unchanged');
    expect(conv.pullEvents()).toEqual([]);
    expect(call.status).toBe('pending');
  });

  it('the first rejection rejects, even after approvals', () => {
    const { conv, call } = held({ quorum: { count: 3 } });
    conv.decide(call.id, approve, alice, at(2));
    conv.decide(call.id, approve, bob, at(3));
    expect(conv.decide(call.id, { decision: 'reject', reason: 'no' }, carol, at(4)).kind).toBe('decided');
    expect(call.status).toBe('rejected');
  });

  it('with `of`, only holders of those roles may approve; anyone allowed may still reject', () => {
    const { conv, call } = held({ quorum: { count: 2, of: ['finance'] }, approvers: ['approver', 'admin'] });
    expect(() => conv.decide(call.id, approve, alice, at(2))).toThrow(/count only from: finance/);
    expect(conv.decide(call.id, approve, bob, at(3)).kind).toBe('decided');
    expect(conv.decide(call.id, approve, carol, at(4)).kind).toBe('decided');
    expect(call.status).toBe('approved');
    // dan holds finance but not a role that may decide at all
    const other = held({ quorum: { count: 2, of: ['finance'] }, approvers: ['approver', 'admin'] });
    expect(() => other.conv.decide(other.call.id, approve, dan, at(2))).toThrow(DomainError);
  });

  it('the first approval fixes the arguments: another edit is refused, none approves the fixed ones', () => {
    const { conv, call } = held({ quorum: { count: 2 } });
    conv.decide(call.id, { decision: 'approve', arguments: { amount: 100 } }, alice, at(2));
    expect(refusedCode(conv.decide(call.id, { decision: 'approve', arguments: { amount: 50 } }, bob, at(3)))).toBe(
      'quorum_arguments_mismatch',
    );
    expect(call.status).toBe('pending');
    conv.decide(call.id, approve, carol, at(4));
    expect(call.status).toBe('approved');
    expect(call.argumentsToRun).toEqual({ amount: 100 });
  });

  it('an always_allow towards a quorum approves but makes no standing grant', () => {
    const { conv, call } = held({ quorum: { count: 2 } });
    conv.decide(call.id, { decision: 'always_allow', scope: 'conversation' }, alice, at(2));
    const r = conv.decide(call.id, { decision: 'always_allow', scope: 'conversation' }, bob, at(3));
    expect(r.kind === 'decided' && r.grant).toBeUndefined();
    expect(call.status).toBe('approved');
  });

  it('a call with partial approvals still expires at its deadline', () => {
    const { conv, call } = held({ quorum: { count: 2 }, timeoutSeconds: 10 });
    conv.decide(call.id, approve, alice, at(2));
    expect(refusedCode(conv.decide(call.id, approve, bob, at(20)))).toBe('already_decided');
    expect(call.status).toBe('expired');
  });

  it('selfApproval and quorum together: the user cannot be one of the quorum', () => {
    const { conv, call } = held({ quorum: { count: 2 }, selfApproval: false });
    conv.decide(call.id, approve, alice, at(2));
    expect(refusedCode(conv.decide(call.id, approve, rita, at(3)))).toBe('self_approval');
    expect(call.status).toBe('pending');
  });

  it('property: whatever order of approvals and repeats, the call is approved exactly when `count` distinct people approved, and never by an agent', () => {
    const people = [alice, bob, carol, owen];
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 4 }),
        fc.array(fc.integer({ min: 0, max: people.length - 1 }), { maxLength: 12 }),
        (count, order) => {
          const { conv, call } = held({ quorum: { count } });
          const distinct = new Set<string>();
          order.forEach((i, step) => {
            if (call.status !== 'pending') return;
            conv.decide(call.id, approve, people[i], at(2 + step));
            distinct.add(people[i].id);
          });
          expect(call.status).toBe(distinct.size >= count ? 'approved' : 'pending');
          if (call.status === 'approved') expect(new Set(call.approvals.map((a) => a.by.id)).size).toBe(count);
          expect(() => conv.decide(call.id, approve, agent as Decider, at(99))).toThrow(DomainError);
        },
      ),
    );
  });
});

describe('escalation and reminders', () => {
  const steps = {
    escalate: [
      { after: 60, approvers: ['admin'], notify: ['slack' as const] },
      { after: 120, approvers: ['requester'] },
    ],
    remindBefore: [100, 30],
    timeoutSeconds: 300,
  };

  it('plans the first step at once: the earliest of the escalations and reminders', () => {
    const { call } = held({ ...steps, approvers: ['approver'] });
    expect(call.snapshot().followUp).toEqual({ escalated: 0, reminded: [], nextAt: at(1 + 60) });
  });

  it('takes each escalation when due: more people may decide, and it is recorded with the channels to tell', () => {
    const { conv, call } = held({ ...steps, approvers: ['approver'] });
    expect(conv.followUpDue(at(30))).toEqual([]);
    expect(conv.followUpDue(at(61))).toEqual([call]);
    const [e] = conv.pullEvents();
    expect(e.type).toBe('ToolCallEscalated');
    expect(e.data).toMatchObject({
      step: 1,
      of: 2,
      afterSeconds: 60,
      added: ['admin'],
      approvers: ['approver', 'admin'],
      notify: ['slack'],
    });
    expect(call.approval!.approvers).toEqual(['approver', 'admin']);
    expect(call.snapshot().followUp!.nextAt).toEqual(at(1 + 120));
    // the admin may now decide
    expect(conv.decide(call.id, approve, owen, at(62)).kind).toBe('decided');
  });

  it('never takes a step twice, however often the sweeper comes', () => {
    const { conv } = held({ ...steps, approvers: ['approver'] });
    conv.followUpDue(at(61));
    conv.followUpDue(at(61));
    conv.followUpDue(at(62));
    expect(conv.pullEvents().map((e) => e.type)).toEqual(['ToolCallEscalated']);
  });

  it('reminds once before the deadline; several reminders due at once are one (the latest)', () => {
    const { conv } = held({ remindBefore: [100, 30], timeoutSeconds: 300 });
    conv.followUpDue(at(290));
    const events = conv.pullEvents();
    expect(events.map((e) => e.type)).toEqual(['ToolCallReminded']);
    expect(events[0].data).toMatchObject({ remindBefore: 30, secondsLeft: 11 });
    expect(conv.followUpDue(at(295))).toEqual([]);
  });

  it('an admin extends the deadline: recorded, reminders start over; no one else may', () => {
    const { conv, call } = held({ remindBefore: [60], timeoutSeconds: 300 });
    conv.followUpDue(at(250));
    conv.pullEvents();
    expect(() => conv.extendDeadline(call.id, at(900), 'wait', alice, at(260))).toThrow(/Only an admin/);
    expect(conv.extendDeadline(call.id, at(900), 'owner away', owen, at(260)).kind).toBe('decided');
    expect(conv.pullEvents()[0]).toMatchObject({
      type: 'ToolCallDeadlineExtended',
      data: { from: at(301).toISOString(), to: at(900).toISOString(), reason: 'owner away' },
    });
    expect(call.approval!.expiresAt).toEqual(at(900));
    expect(call.snapshot().followUp).toEqual({ escalated: 0, reminded: [], nextAt: at(840) });
    expect(() => conv.extendDeadline(call.id, at(100), undefined, owen, at(261))).toThrow(
      /later than the current deadline/,
    );
  });

  it('property: any sweep times take every step at most once and in order, and none after the call is decided', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 2, max: 400 }), { maxLength: 15 }),
        fc.integer({ min: 0, max: 400 }),
        (sweeps, decideAt) => {
          const { conv, call } = held({ ...steps, approvers: ['approver'] });
          const times = [...sweeps].sort((x, y) => x - y);
          const events: string[] = [];
          for (const t of times) {
            if (t >= decideAt && call.status === 'pending' && decideAt < 300)
              conv.decide(call.id, approve, alice, at(decideAt));
            conv.expireDue(at(t));
            conv.followUpDue(at(t));
            events.push(
              ...conv
                .pullEvents()
                .map(
                  (e) =>
                    `${e.type}:${JSON.stringify((e.data as { step?: number; remindBefore?: number }).step ?? (e.data as { remindBefore?: number }).remindBefore ?? '')}`,
                ),
            );
          }
          const escalations = events.filter((e) => e.startsWith('ToolCallEscalated'));
          expect(escalations).toEqual([...new Set(escalations)]);
          expect(escalations).toEqual([...escalations].sort());
          const decidedAt = events.findIndex(
            (e) => e.startsWith('ToolCallApproved') || e.startsWith('ToolCallExpired'),
          );
          if (decidedAt >= 0)
            expect(events.slice(decidedAt + 1).filter((e) => /Escalated|Reminded/.test(e))).toEqual([]);
        },
      ),
    );
  });
});

describe('chat approvals: what an MCP client relays (via mcp)', () => {
  const ritaInChat = person('rita', ['approver'], 'mcp');

  it('refuses an approval relayed by a chat client on a call whose verdict says chatApproval: false, recorded', () => {
    const { conv, call } = held({ chatApproval: false });
    const r = conv.decide(call.id, approve, ritaInChat, at(2));
    expect(refusedCode(r)).toBe('chat_approval_not_allowed');
    expect(r.kind === 'refused' && r.error.kind).toBe('forbidden');
    // The refusal tells where a person decides it: the call's card in the web inbox.
    expect(r.kind === 'refused' && r.error.message).toContain(`/#/calls/${call.id}`);
    expect(r.kind === 'refused' && r.error.details).toMatchObject({
      toolCallId: call.id,
      card: `/#/calls/${call.id}`,
    });
    expect(call.status).toBe('pending');
    const events = conv.pullEvents();
    expect(events.map((e) => e.type)).toEqual(['DecisionRefused']);
    expect(events[0].data).toMatchObject({ code: 'chat_approval_not_allowed', refusedBy: 'rita', via: 'mcp' });
  });

  it('refuses it on a destructive tool even for a call held before the verdict recorded chatApproval', () => {
    const { conv, call } = held({ toolFlags: { isReadOnly: false, requiresApproval: false, destructive: true } });
    expect(refusedCode(conv.decide(call.id, { decision: 'always_allow' }, ritaInChat, at(2)))).toBe(
      'chat_approval_not_allowed',
    );
  });

  it('takes a rejection from the chat, and the same approval from the inbox', () => {
    const a = held({ chatApproval: false });
    expect(a.conv.decide(a.call.id, { decision: 'reject' }, ritaInChat, at(2)).kind).toBe('decided');
    const b = held({ chatApproval: false });
    expect(b.conv.decide(b.call.id, approve, rita, at(2)).kind).toBe('decided');
    expect(b.call.status).toBe('approved');
  });

  it('lets a chat client approve a call the verdict allows it, recorded as via mcp', () => {
    const { conv, call } = held();
    expect(conv.decide(call.id, approve, ritaInChat, at(2)).kind).toBe('decided');
    expect(call.decision?.by).toEqual({ id: 'rita', via: 'mcp', assurance: 'client' });
    expect(conv.pullEvents()[0].actor).toMatchObject({ id: 'rita', via: 'mcp', assurance: 'client' });
  });
});
