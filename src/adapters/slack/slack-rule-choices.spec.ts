import type { ApprovalRequest } from '../../application/ports/approval-callback.port';
import { ALWAYS_ALLOW_ACTION, APPROVE_ACTION, REJECT_ACTION, requestMessage } from './slack-blocks';

const request = (approval: Record<string, unknown> = {}): ApprovalRequest =>
  ({
    tenantId: 'default',
    id: 'tc_1',
    conversationId: 'conv-1',
    toolName: 'pay',
    arguments: { amount: 5 },
    status: 'pending',
    policy: { level: 'confirm', rule: 0, policyVersion: 1, reason: 'rule 0' },
    approval: { approvers: ['admin'], expiresAt: '2026-01-01T00:00:00.000Z', ...approval },
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    conversation: { id: 'conv-1', agentId: 'bot', user: null, title: null },
  }) as unknown as ApprovalRequest;

const buttons = (r: ApprovalRequest) =>
  requestMessage(r)
    .blocks.filter((b) => b.type === 'actions')
    .flatMap((b) => (b as unknown as { elements: Array<{ action_id: string }> }).elements.map((e) => e.action_id));

describe("Slack offers only the buttons the call's rule allows", () => {
  it('all three without allowedDecisions', () => {
    expect(buttons(request())).toEqual([APPROVE_ACTION, REJECT_ACTION, ALWAYS_ALLOW_ACTION]);
  });

  it('approve and reject only: no Always allow row', () => {
    expect(buttons(request({ allowedDecisions: ['approve', 'reject'] }))).toEqual([APPROVE_ACTION, REJECT_ACTION]);
  });

  it('reject and respond: Reject alone', () => {
    expect(buttons(request({ allowedDecisions: ['reject', 'respond'] }))).toEqual([REJECT_ACTION]);
  });

  it('approve only: no Reject', () => {
    expect(buttons(request({ allowedDecisions: ['approve'] }))).toEqual([APPROVE_ACTION]);
  });
});
