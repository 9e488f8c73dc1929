import { createHash } from 'node:crypto';
import { ACTION_PAGE_CSP, confirmationPage, refusedPage } from './action-pages';
import type { ActionReady } from './action-desk';

const ready = {
  kind: 'ready',
  action: { decision: 'reject', via: 'email' },
  person: { id: 'ann', name: 'Ann <script>', email: 'ann@example.com', roles: ['approver'] },
  call: {
    id: 'tc_1',
    toolName: 'wire_money',
    arguments: { to: '"><script>alert(1)</script>' },
    display: { title: '<b>Pay</b>', summary: '<img src=x onerror=alert(1)>' },
    status: 'pending',
    policy: { level: 'confirm', reason: 'money' },
    approval: { approvers: ['approver'], expiresAt: '2026-11-28T12:00:00.000Z' },
  },
  agentId: 'bot',
  card: 'https://tg.example.com/#/calls/tc_1',
} as unknown as ActionReady;

describe('action pages', () => {
  it('escape everything an agent or a person record holds, and post only to the link itself', () => {
    const html = confirmationPage(ready, '/act/A.B.C');
    expect(html).not.toMatch(/<script|<img|<b>/);
    expect(html).toContain('&lt;b&gt;Pay&lt;/b&gt;');
    expect(html).toContain('<form method="post" action="/act/A.B.C">');
    expect(html).toContain('name="reason"');
    expect(html).toContain('Reject as Ann &lt;script&gt;');
    expect(refusedPage({ kind: 'refused', status: 409, code: 'x', title: '<i>', detail: '<u>' })).not.toMatch(
      /<i>|<u>/,
    );
  });

  it('allow their one style sheet by hash, and no script at all', () => {
    const html = confirmationPage(ready, '/act/A.B.C');
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1];
    expect(ACTION_PAGE_CSP).toContain(`'sha256-${createHash('sha256').update(style).digest('base64')}'`);
    expect(ACTION_PAGE_CSP).toContain("default-src 'none'");
    expect(ACTION_PAGE_CSP).not.toContain('script-src');
  });
});
