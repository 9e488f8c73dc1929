import type { ToolCallState } from '../tool-call.entity';
import { followUpDue } from './follow-up';

const T0 = new Date('2025-03-01T12:00:00.000Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);

/** A held call proposed at T0, deciding by `approver` for 300 s, escalating after 60 s and 120 s. */
function held(over: Partial<ToolCallState> = {}): ToolCallState {
  return {
    id: 'tc_1',
    conversationId: 'conv_1',
    toolName: 'delete_source',
    arguments: {},
    status: 'pending',
    policy: {
      level: 'confirm',
      rule: 0,
      policyVersion: 1,
      reason: 'held',
      escalate: [
        { after: 60, approvers: ['admin'], notify: ['slack'] },
        { after: 120, approvers: ['admin', 'owner'] },
      ],
      remindBefore: [120, 30],
    },
    approval: { approvers: ['approver'], expiresAt: at(300) },
    followUp: { escalated: 0, reminded: [], nextAt: at(60) },
    createdAt: T0,
    updatedAt: T0,
    ...over,
  };
}

describe('follow-up of a held call', () => {
  it('is due from its next step on, not before', () => {
    expect(followUpDue(held(), at(59))).toBeUndefined();
    expect(followUpDue(held(), at(60))?.escalations.map((e) => e.step)).toEqual([1]);
  });

  it('takes every escalation step due at once, each adding only approvers not there yet', () => {
    const due = followUpDue(held(), at(130))!;
    expect(due.escalations.map((e) => [e.step, e.added, e.approvers])).toEqual([
      [1, ['admin'], ['approver', 'admin']],
      [2, ['owner'], ['approver', 'admin', 'owner']],
    ]);
    expect(due.followUp.escalated).toBe(2);
  });

  it('sends only the latest of several reminders due at once, and keeps them all as sent', () => {
    const due = followUpDue(held({ followUp: { escalated: 2, reminded: [], nextAt: at(180) } }), at(280))!;
    expect(due.remindBefore).toBe(30);
    expect(due.followUp.reminded).toEqual([120, 30]);
  });

  it('leaves a call alone once it is decided or its time is up', () => {
    expect(followUpDue(held({ status: 'approved' }), at(200))).toBeUndefined();
    expect(followUpDue(held(), at(300))).toBeUndefined();
  });
});
