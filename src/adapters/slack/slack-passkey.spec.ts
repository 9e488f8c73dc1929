import type { ApprovalRequest } from '../../application/ports/approval-callback.port';
import { ALWAYS_ALLOW_ACTION, APPROVE_ACTION, REJECT_ACTION, outcomeMessage, requestMessage } from './slack-blocks';

const request: ApprovalRequest = {
  tenantId: 'default',
  id: 'tc_9',
  conversationId: 'conv-9',
  toolName: 'wire_money',
  arguments: { to: 'ACME', amount: 950000 },
  status: 'pending',
  policy: { level: 'confirm', rule: 0, policyVersion: 1, reason: 'rule 0' },
  approval: { approvers: ['admin'], expiresAt: '2026-01-01T00:00:00.000Z', stepUp: 'passkey' },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  conversation: { id: 'conv-9', agentId: 'pay-bot', user: null, title: null },
};

const buttons = (blocks: Array<{ type: string; [k: string]: unknown }>) =>
  blocks.filter((b) => b.type === 'actions').flatMap((b: any) => b.elements.map((e: any) => e.action_id));

describe('Slack messages for a call whose rule asks for a passkey', () => {
  it('offer Reject only, and say to approve in Tollgate with a link to the card', () => {
    const { blocks, text } = requestMessage(request, { publicUrl: 'https://tollgate.example.com/' });
    expect(buttons(blocks)).toEqual([REJECT_ACTION]);
    const shown = JSON.stringify(blocks);
    expect(shown).toContain('*Needs a passkey*: approve in Tollgate');
    expect(shown).toContain('<https://tollgate.example.com/#/calls/tc_9|open the card in the Tollgate inbox>');
    // The arguments are still shown whole: the person sees what they would approve in the inbox.
    expect(shown).toContain('950000');
    expect(text).toContain('needs a passkey');
  });

  it('name the call to open when the public URL is not known', () => {
    const shown = JSON.stringify(requestMessage(request).blocks);
    expect(shown).toContain('*Needs a passkey*: approve in Tollgate, open tool call `tc_9` in the Tollgate inbox');
  });

  it('keep Approve and Always allow for the same call without the passkey rule', () => {
    const { approval, ...rest } = request;
    const plain = { ...rest, approval: { approvers: approval!.approvers, expiresAt: approval!.expiresAt } };
    const { blocks } = requestMessage(plain);
    expect(buttons(blocks)).toEqual([APPROVE_ACTION, REJECT_ACTION, ALWAYS_ALLOW_ACTION]);
    expect(JSON.stringify(blocks)).not.toContain('Needs a passkey');
  });

  it('drop the passkey line once the call has ended', () => {
    const { blocks } = outcomeMessage(
      { tenantId: 'default', outcome: 'approved', toolCall: request, by: { id: 'ann', via: 'web' } },
      request.conversation,
      { publicUrl: 'https://tollgate.example.com' },
    );
    expect(buttons(blocks)).toEqual([]);
    expect(JSON.stringify(blocks)).not.toContain('Needs a passkey');
  });
});
