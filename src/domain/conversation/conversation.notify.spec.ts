import fc from 'fast-check';
import type { PolicyVerdict, ProposedCallFacts } from '../policy/approval-policy';
import { SUPERVISION_LEVELS, SupervisionLevel } from '../policy/supervision-level';
import type { DomainEvent } from '../shared/domain-event';
import { Conversation, ConversationUser } from './conversation.aggregate';

const T0 = new Date('2025-03-01T12:00:00.000Z');
const USER: ConversationUser = { id: 'u-rita', roles: ['member'], name: 'Rita' };

function verdict(level: SupervisionLevel, over: Partial<PolicyVerdict> = {}): PolicyVerdict {
  return {
    level,
    rule: 2,
    policyVersion: 4,
    reason: `Rule 2 (x): ${level}`,
    approvers: ['approver', 'admin'],
    timeoutSeconds: 300,
    grants: 'tenant',
    ...over,
  };
}

/** Proposes one call judged `level` in a fresh conversation; returns the events the proposal recorded. */
function propose(
  level: SupervisionLevel,
  over: Partial<PolicyVerdict> = {},
  user: ConversationUser | null = USER,
): DomainEvent[] {
  const conv = Conversation.start({ id: 'conv_1', tenantId: 't1', agentId: 'bot', user, at: T0 });
  conv.pullEvents();
  let n = 0;
  conv.propose(
    [{ toolName: 'post_message', arguments: { text: 'hi' } }],
    (_: ProposedCallFacts) => verdict(level, over),
    () => `tc_${++n}`,
    new Date(T0.getTime() + 1000),
    null,
  );
  return conv.pullEvents();
}

describe('a notify call tells people', () => {
  it('records ToolCallNotified right after ToolCallAutoApproved, naming the rule, its approvers and the channels', () => {
    const events = propose('notify', { approvers: ['requester', 'oncall'] });
    expect(events.map((e) => e.type)).toEqual(['ToolCallProposed', 'ToolCallAutoApproved', 'ToolCallNotified']);
    const told = events[2];
    expect(told).toMatchObject({
      toolCallId: 'tc_1',
      toolName: 'post_message',
      conversationId: 'conv_1',
      actor: { kind: 'system', id: 'policy' },
    });
    expect(told.data).toEqual({
      level: 'notify',
      rule: 2,
      policyVersion: 4,
      approvers: ['requester', 'oncall'],
      requester: 'u-rita',
      channels: ['slack', 'webhook', 'inbox'],
    });
  });

  it('names the default approvers when no rule decided, and no requester in a conversation without a user', () => {
    const [, , told] = propose('notify', { rule: null, approvers: ['approver', 'admin'] }, null);
    expect(told.data).toMatchObject({ rule: null, approvers: ['approver', 'admin'], requester: null });
  });

  it('is recorded for notify only: no other level tells anyone this way', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SUPERVISION_LEVELS), (level) => {
        const notified = propose(level).filter((e) => e.type === 'ToolCallNotified');
        expect(notified).toHaveLength(level === 'notify' ? 1 : 0);
      }),
    );
  });
});
