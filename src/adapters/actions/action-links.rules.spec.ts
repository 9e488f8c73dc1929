import type { ApprovalRequest } from '../../application/ports/approval-callback.port';
import type { ActionGrant, ActionTokens } from '../../application/ports/action-token.port';
import type { TollgateConfig } from '../../infrastructure/config/config';
import { requestEmail } from '../email/email-message';
import { askMessage } from '../push/push-payload';
import { ActionLinks } from './action-links';
import { PublicAddress } from './public-address';

/** Tokens that name what they were issued for (the real ones are signed; here only the decision matters). */
const tokens: ActionTokens = {
  issue: async (g: ActionGrant) => `tok-${g.decision}`,
} as unknown as ActionTokens;
const links = new ActionLinks(tokens, new PublicAddress({ publicUrl: 'https://tg.example.com' } as TollgateConfig));

function request(approval: Record<string, unknown> = {}): ApprovalRequest {
  return {
    tenantId: 'default',
    id: 'tc_1',
    conversationId: 'c1',
    toolName: 'pay',
    arguments: { amount: 5 },
    status: 'pending',
    policy: { level: 'confirm', rule: 0, policyVersion: 1, reason: 'payments' },
    approval: { approvers: ['approver'], expiresAt: '2026-12-28T12:00:00.000Z', ...approval },
    createdAt: '2026-11-28T11:00:00.000Z',
    updatedAt: '2026-11-28T11:00:00.000Z',
    conversation: { id: 'c1', agentId: 'bot', user: null, title: null },
  } as unknown as ApprovalRequest;
}

const offer = (approval: Record<string, unknown>) =>
  links.offer(request(approval), 'ann', 'email', { shownWhole: true });

describe("email and push links follow the call's rule (allowedDecisions, rejectReasons)", () => {
  it('offers Approve and Reject when the rule narrows nothing', async () => {
    const o = await offer({});
    expect([o.approve?.token, o.reject?.token, o.approveWithheld, o.rejectWithheld]).toEqual([
      'tok-approve',
      'tok-reject',
      undefined,
      undefined,
    ]);
  });

  it('offers no Approve when the rule does not allow one', async () => {
    const o = await offer({ allowedDecisions: ['reject', 'respond'] });
    expect(o.approve).toBeUndefined();
    expect(o.approveWithheld).toBe('rule');
    expect(o.reject?.token).toBe('tok-reject');
    const push = askMessage(request({ allowedDecisions: ['reject'] }), o);
    expect(push.approve).toBeUndefined();
    expect(push.approveWithheld).toBeUndefined(); // the worker shows a plain Open
  });

  it('offers no Reject link when a reason must be chosen from a list: the email sends the person to the card', async () => {
    const o = await offer({ rejectReasons: ['Duplicate', 'Wrong amount'] });
    expect(o.reject).toBeUndefined();
    expect(o.rejectWithheld).toBe('reason');
    const mail = requestEmail(request({ rejectReasons: ['Duplicate'] }), { email: 'ann@example.com' }, o, '<x@y>');
    expect(mail.text).not.toMatch(/^Reject: /m);
    expect(mail.text).toContain("choose one of the rule's reasons on the card");
    expect(mail.html).not.toContain('tok-reject');
    const push = askMessage(request({ rejectReasons: ['Duplicate'] }), o);
    expect(push.reject).toBeUndefined();
  });

  it('offers no Reject when the rule allows none', async () => {
    const o = await offer({ allowedDecisions: ['approve'] });
    expect([o.reject, o.rejectWithheld, o.approve?.token]).toEqual([undefined, 'rule', 'tok-approve']);
  });
});
