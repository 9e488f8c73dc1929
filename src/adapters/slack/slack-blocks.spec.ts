import type { ApprovalRequest } from '../../application/ports/approval-callback.port';
import {
  ALWAYS_ALLOW_ACTION,
  APPROVE_ACTION,
  escapeMrkdwn,
  outcomeMessage,
  REJECT_ACTION,
  requestMessage,
} from './slack-blocks';

const request: ApprovalRequest = {
  tenantId: 'default',
  id: 'tc_1',
  conversationId: 'conv-1',
  toolName: 'delete_source',
  arguments: { id: 'src_2', note: '```break out```' },
  reason: 'user asked',
  status: 'pending',
  policy: { level: 'confirm', rule: 0, policyVersion: 1, reason: 'rule 0' },
  approval: { approvers: ['admin'], expiresAt: '2026-01-01T00:00:00.000Z' },
  display: { title: 'Delete source', summary: 'Handbook', fields: [{ label: 'Objects', value: '1,204' }] },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  conversation: { id: 'conv-1', agentId: 'bot', user: { id: 'ann', name: 'Ann', roles: [] }, title: 'Tidy' },
};

describe('Slack messages', () => {
  it('ask with Approve and Reject buttons carrying the call id', () => {
    const { blocks, text } = requestMessage(request);
    expect(text).toContain('tc_1');
    const actions = blocks.find((b) => b.type === 'actions') as any;
    expect(actions.elements.map((e: any) => [e.action_id, e.value])).toEqual([
      [APPROVE_ACTION, 'tc_1'],
      [REJECT_ACTION, 'tc_1'],
    ]);
    expect(JSON.stringify(blocks)).toContain('<!date^1767225600^');
  });

  it('keep arguments inside their code block', () => {
    const args = JSON.stringify(requestMessage(request).blocks);
    expect(args).not.toContain('```break out```');
  });

  it('stay within Slack limits for huge arguments', () => {
    const big = requestMessage({ ...request, arguments: { blob: 'x'.repeat(10_000) } });
    for (const b of big.blocks)
      if ((b as any).text?.text) expect((b as any).text.text.length).toBeLessThanOrEqual(3000);
  });

  it('never offer Approve beside arguments cut short: they say how long they are, link to the card, and keep Reject', () => {
    // The review's reproduction: padding pushed `amount` past what Slack shows, and Approve stood beside it.
    const args = { note: 'n'.repeat(2_960), amount: 950000 };
    const { blocks } = requestMessage({ ...request, arguments: args }, { publicUrl: 'https://tollgate.example.com/' });
    const text = JSON.stringify(blocks);
    expect(text).not.toContain('950000');
    expect(text).toContain(`Arguments too long to show here: ${JSON.stringify(args, null, 2).length} characters`);
    expect(text).toContain('<https://tollgate.example.com/#/calls/tc_1|Open the full card in the Tollgate inbox>');
    const buttons = blocks
      .filter((b) => b.type === 'actions')
      .flatMap((b: any) => b.elements.map((e: any) => e.action_id));
    expect(buttons).toEqual([REJECT_ACTION]);
    expect(buttons).not.toContain(APPROVE_ACTION);
    expect(buttons).not.toContain(ALWAYS_ALLOW_ACTION);
    // Without the public URL, the message names the call to open.
    expect(JSON.stringify(requestMessage({ ...request, arguments: args }).blocks)).toContain(
      'Open tool call `tc_1` in the Tollgate inbox',
    );
  });

  it('show arguments that fit whole, with Approve', () => {
    const args = { note: 'n'.repeat(2_800), amount: 950000 };
    const { blocks } = requestMessage({ ...request, arguments: args });
    expect(JSON.stringify(blocks)).toContain('950000');
    expect(
      blocks.filter((b) => b.type === 'actions').flatMap((b: any) => b.elements.map((e: any) => e.action_id)),
    ).toEqual([APPROVE_ACTION, REJECT_ACTION, ALWAYS_ALLOW_ACTION]);
  });

  it('show the outcome without buttons', () => {
    const { blocks } = outcomeMessage(
      {
        tenantId: 'default',
        outcome: 'rejected',
        toolCall: request,
        by: { id: 'root', name: 'Root', via: 'cli' },
        reason: 'no <!here>',
      },
      request.conversation,
    );
    expect(blocks.some((b) => b.type === 'actions')).toBe(false);
    const text = JSON.stringify(blocks);
    expect(text).toContain('Rejected* by Root (root) via cli');
    expect(text).toContain('no &lt;!here&gt;');
    const delegated = outcomeMessage(
      {
        tenantId: 'default',
        outcome: 'approved',
        toolCall: request,
        by: { id: 'bob', name: 'Bob', via: 'email', onBehalfOf: { id: 'ann', name: 'Ann <!here>' } },
      },
      request.conversation,
    );
    expect(JSON.stringify(delegated.blocks)).toContain('by Bob (bob) for Ann &lt;!here&gt; via email');
  });

  it('escape Slack markup', () => {
    expect(escapeMrkdwn('<!channel> & <@U1>')).toBe('&lt;!channel&gt; &amp; &lt;@U1&gt;');
  });
});
