import type { ApprovalRequest } from '../../application/ports/approval-callback.port';
import type { ActionOffer } from '../actions/action-links';
import { EMAIL_ARGUMENTS_MAX, emailArguments, requestEmail } from './email-message';

const offer: ActionOffer = {
  card: 'https://tg.example.com/#/calls/tc_1',
  approve: { url: 'https://tg.example.com/act/A.B.C', token: 'A.B.C' },
  reject: { url: 'https://tg.example.com/act/D.E.F', token: 'D.E.F' },
};

function request(over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    tenantId: 'default',
    id: 'tc_1',
    conversationId: 'c1',
    toolName: 'wire_money',
    arguments: { amount: 5 },
    status: 'pending',
    policy: { level: 'confirm', rule: 1, policyVersion: 2, reason: 'money moves' },
    approval: { approvers: ['approver'], expiresAt: '2026-11-28T12:00:00.000Z' },
    createdAt: '2026-11-28T11:00:00.000Z',
    updatedAt: '2026-11-28T11:00:00.000Z',
    conversation: { id: 'c1', agentId: 'bot', user: { id: 'erin', roles: [] }, title: null },
    ...over,
  } as ApprovalRequest;
}

describe('the email that asks', () => {
  it('escapes what the agent wrote in the HTML part and keeps it to one line in the subject', () => {
    const m = requestEmail(
      request({
        display: { title: 'Pay\r\nBcc: all@corp <b>now</b>', summary: '<img src=x onerror=alert(1)>' },
        reason: '<a href="https://evil.example">click</a>',
        arguments: { note: '</pre><script>alert(1)</script>' },
      }),
      { email: 'ann@example.com', name: 'Ann' },
      offer,
      '<tc_1.ask@example.com>',
    );
    expect(m.subject).not.toMatch(/[\r\n]/);
    expect(m.subject).toContain('Pay Bcc: all@corp <b>now</b>');
    expect(m.html).not.toContain('<script>');
    expect(m.html).not.toContain('<img');
    expect(m.html).not.toContain('href="https://evil.example"');
    expect(m.html).toContain('&lt;/pre&gt;&lt;script&gt;');
    expect(m.text).toContain('Approve: https://tg.example.com/act/A.B.C');
  });

  it('offers no Approve when it is withheld, and says why', () => {
    const passkey = requestEmail(
      request(),
      { email: 'ann@example.com' },
      { card: offer.card, reject: offer.reject, approveWithheld: 'passkey' },
      '<x@y>',
    );
    expect(passkey.text).not.toMatch(/^Approve: /m);
    expect(passkey.text).toContain('needs your passkey');
    expect(passkey.html).not.toContain('A.B.C');
  });

  it('cuts arguments past the limit, says how much is left out, and links to the card', () => {
    const m = requestEmail(
      request({ arguments: { memo: 'y'.repeat(EMAIL_ARGUMENTS_MAX * 2) } }),
      { email: 'ann@example.com' },
      { card: offer.card, reject: offer.reject, approveWithheld: 'too_long' },
      '<x@y>',
    );
    expect(m.text).toMatch(/… \d+ more characters not shown: open the card to see them all/);
    expect(m.text).toContain(`Open the card: ${offer.card}`);
  });
});

describe('arguments an email cannot show as they are', () => {
  it('are not approvable when they hold a right-to-left override or a zero-width space', () => {
    expect(emailArguments({ arguments: { to: 'evil\u202Emoc.elpmaxe@ann' } }).whole).toBe(false);
    expect(emailArguments({ arguments: { to: 'a\u200Bb' } }).whole).toBe(false);
    expect(emailArguments({ arguments: { note: 'line one\nline two' } }).whole).toBe(true);
  });
});
