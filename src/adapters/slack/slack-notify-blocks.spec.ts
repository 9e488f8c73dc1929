import type { ApprovalRequest } from '../../application/ports/approval-callback.port';
import {
  ALWAYS_ALLOW_ACTION,
  ALWAYS_ALLOW_MODAL,
  alwaysAllowModal,
  notifyMessage,
  requestMessage,
} from './slack-blocks';

const fyi: ApprovalRequest = {
  tenantId: 'default',
  id: 'tc_9',
  conversationId: 'conv-1',
  toolName: 'send_<!channel>',
  arguments: { to: 'x@example.com' },
  reason: 'see <https://evil.example|docs> & more',
  status: 'approved',
  policy: { level: 'notify', rule: 2, policyVersion: 1, reason: 'Rule 2 (send_*): notify' },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  conversation: { id: 'conv-1', agentId: 'bot', user: { id: 'ann', name: 'Ann', roles: [] }, title: 'Tidy' },
};

describe('the Slack FYI for a notify call', () => {
  it('says it ran at once by which rule and who is told, with no buttons', () => {
    const { text, blocks } = notifyMessage(fyi, ['requester', 'admin']);
    expect(blocks.some((b) => b.type === 'actions')).toBe(false);
    expect(text).toBe('Ran at once, FYI: send_&lt;!channel&gt; (tc_9) by policy rule 2');
    expect(JSON.stringify(blocks)).toContain('told: requester, admin');
  });

  it("escapes the agent's text in every mrkdwn part, like every other message (plain_text is never parsed)", () => {
    const mrkdwn: string[] = [];
    JSON.stringify(notifyMessage(fyi, []).blocks, (_k, v) => (v && v.type === 'mrkdwn' && mrkdwn.push(v.text), v));
    const all = mrkdwn.join('\n');
    expect(all).toContain('`send_&lt;!channel&gt;`');
    expect(all).not.toContain('<!channel>');
    expect(all).not.toContain('<https://evil.example');
    expect(all).toContain('&lt;https://evil.example|docs&gt; &amp; more');
  });

  it('names the policy defaults when no rule decided', () => {
    expect(notifyMessage({ ...fyi, policy: { ...fyi.policy, rule: null } }, []).text).toContain('by policy defaults');
  });
});

describe('Always allow from Slack', () => {
  it('is a button of its own, carrying the call id', () => {
    const rows = requestMessage({ ...fyi, status: 'pending' }).blocks.filter((b) => b.type === 'actions') as any[];
    expect(rows.map((r) => r.elements.map((e: any) => e.action_id))).toEqual([
      ['tollgate_approve', 'tollgate_reject'],
      [ALWAYS_ALLOW_ACTION],
    ]);
    expect(rows[1].elements[0].value).toBe('tc_9');
  });

  it('opens a modal offering only the given scopes, a lifetime and an optional reason', () => {
    const view = alwaysAllowModal({ toolCallId: 'tc_9', channel: 'C1', ts: '1.2' }, ['conversation']);
    expect(view.callback_id).toBe(ALWAYS_ALLOW_MODAL);
    expect(JSON.parse(view.private_metadata)).toEqual({ toolCallId: 'tc_9', channel: 'C1', ts: '1.2' });
    const [, scope, expiry, reason] = view.blocks as any[];
    expect(scope.element.options.map((o: any) => o.value)).toEqual(['conversation']);
    expect(scope.element.initial_option.value).toBe('conversation');
    expect(expiry).toMatchObject({ optional: true, element: { initial_option: { value: '86400' } } });
    expect(reason).toMatchObject({ optional: true, element: { type: 'plain_text_input' } });
  });
});
