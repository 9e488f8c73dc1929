/**
 * No channel offers Approve beside a preview it cannot show whole (domain/conversation/preview-shown): Slack, email,
 * push and the action-link page link to the card instead, as they do for arguments too long to show.
 */
import fc from 'fast-check';
import type { ApprovalRequest } from '../application/ports/approval-callback.port';
import type { ActionGrant, ActionTokens } from '../application/ports/action-token.port';
import type { CallPreview } from '../domain/conversation/call-preview';
import { previewShownWhole, SLACK_PREVIEW_MAX, EMAIL_PREVIEW_MAX } from '../domain/conversation/preview-shown';
import type { TollgateConfig } from '../infrastructure/config/config';
import type { ActionReady } from './actions/action-desk';
import { ActionLinks } from './actions/action-links';
import { confirmationPage } from './actions/action-pages';
import { PublicAddress } from './actions/public-address';
import { requestEmail } from './email/email-message';
import { askMessage } from './push/push-payload';
import { escapeMrkdwn, requestMessage } from './slack/slack-blocks';
import { slackPreviewText } from './slack/slack-preview';

const tokens = { issue: async (g: ActionGrant) => `tok-${g.decision}` } as unknown as ActionTokens;
const links = new ActionLinks(tokens, new PublicAddress({ publicUrl: 'https://tg.example.com' } as TollgateConfig));

const preview = (p: Partial<CallPreview> = {}): CallPreview => ({ kind: 'diff', content: '-a\n+b', digest: 'd', ...p });
const LONG_DIFF = preview({ content: Array.from({ length: 400 }, (_, i) => `+line ${i}`).join('\n') });
const IMAGE = preview({ kind: 'image', content: 'data:image/png;base64,iVBORw0KGgo=' });

function request(p?: CallPreview): ApprovalRequest {
  return {
    tenantId: 'default',
    id: 'tc_1',
    conversationId: 'c1',
    toolName: 'deploy',
    arguments: { env: 'prod' },
    status: 'pending',
    policy: { level: 'confirm', rule: 0, policyVersion: 1, reason: 'rule 0' },
    approval: { approvers: ['approver'], expiresAt: '2026-12-28T12:00:00.000Z' },
    createdAt: '2026-11-28T11:00:00.000Z',
    updatedAt: '2026-11-28T11:00:00.000Z',
    conversation: { id: 'c1', agentId: 'bot', user: null, title: null },
    ...(p ? { preview: p } : {}),
  } as ApprovalRequest;
}

const slackButtons = (p?: CallPreview) =>
  requestMessage(request(p), { publicUrl: 'https://tg.example.com' })
    .blocks.filter((b) => b.type === 'actions')
    .flatMap((b) => (b as unknown as { elements: Array<{ action_id: string }> }).elements.map((e) => e.action_id));

describe('Slack', () => {
  it('offers Approve beside a preview it shows whole', () => {
    expect(slackButtons(preview())).toEqual(['tollgate_approve', 'tollgate_reject', 'tollgate_always_allow']);
  });

  it('offers Reject only beside a preview it cuts, or an image, and says where to approve', () => {
    for (const p of [LONG_DIFF, IMAGE]) {
      expect(slackButtons(p)).toEqual(['tollgate_reject']);
      const blocks = requestMessage(request(p), { publicUrl: 'https://tg.example.com' }).blocks as any[];
      expect(blocks.find((b) => b.block_id === 'tollgate_preview_not_shown')?.text.text).toContain(
        'https://tg.example.com',
      );
    }
  });

  it('shows whole (no cut note, within a section) every preview the rule says it shows whole', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: SLACK_PREVIEW_MAX + 50 }),
        fc.option(fc.string({ maxLength: 200 }), { nil: undefined }),
        (s, title) => {
          const p = preview({ kind: 'text', content: s, ...(title !== undefined ? { title } : {}) });
          if (!previewShownWhole(p, 'slack')) return;
          const shown = slackPreviewText(p, escapeMrkdwn, 'open');
          expect(shown).not.toContain('Cut short');
          expect(shown.length).toBeLessThanOrEqual(3000);
        },
      ),
    );
  });
});

describe('email and push', () => {
  it('email offers Approve beside a short preview, and none beside one it cuts or an image', async () => {
    expect((await links.offer(request(preview()), 'ann', 'email', { shownWhole: true })).approve).toBeDefined();
    const long = preview({ content: 'x'.repeat(EMAIL_PREVIEW_MAX + 1) });
    for (const p of [long, IMAGE]) {
      const o = await links.offer(request(p), 'ann', 'email', { shownWhole: true });
      expect(o.approve).toBeUndefined();
      expect(o.approveWithheld).toBe('preview_not_shown');
      expect(o.reject?.token).toBe('tok-reject');
      const mail = requestEmail(request(p), { email: 'ann@example.com' }, o, '<x@y>');
      expect(mail.text).not.toMatch(/^Approve: /m);
      expect(mail.text).toContain("cannot show the call's preview whole");
      expect(mail.html).not.toContain('tok-approve');
    }
  });

  it('push offers no Approve beside any preview (it shows its kind and title only)', async () => {
    const o = await links.offer(request(preview()), 'ann', 'push', { shownWhole: true });
    expect(o.approveWithheld).toBe('preview_not_shown');
    const m = askMessage(request(preview()), o);
    expect(m.approve).toBeUndefined();
    expect(m.approveWithheld).toBeUndefined(); // the worker shows a plain Open
    expect(m.body).toContain('open it to see it and approve');
    expect((await links.offer(request(), 'ann', 'push', { shownWhole: true })).approve).toBeDefined();
  });
});

describe('the action-link confirmation page', () => {
  const ready = (p: CallPreview | undefined, decision: 'approve' | 'reject') =>
    ({
      kind: 'ready',
      action: { decision, via: 'email' },
      person: { id: 'ann', name: 'Ann', roles: ['approver'] },
      call: {
        id: 'tc_1',
        toolName: 'deploy',
        arguments: { env: 'prod' },
        status: 'pending',
        policy: { level: 'confirm', reason: 'r' },
        approval: { approvers: ['approver'], expiresAt: '2026-12-28T12:00:00.000Z' },
        ...(p ? { preview: p } : {}),
      },
      agentId: 'bot',
      card: 'https://tg.example.com/#/calls/tc_1',
    }) as unknown as ActionReady;

  it('shows a text preview escaped, with the Approve button', () => {
    const html = confirmationPage(
      ready(preview({ content: '+<script>x</script>', title: '<b>t</b>' }), 'approve'),
      '/act/T',
    );
    expect(html).toContain('&lt;script&gt;x&lt;/script&gt;');
    expect(html).not.toMatch(/<script|<b>/);
    expect(html).toContain('class="approve"');
  });

  it('has no Approve button for a preview it cuts, or an image; Reject stays', () => {
    const long = preview({ content: 'x'.repeat(EMAIL_PREVIEW_MAX + 1) });
    for (const p of [long, IMAGE]) {
      const html = confirmationPage(ready(p, 'approve'), '/act/T');
      expect(html).not.toContain('class="approve"');
      expect(html).not.toContain('<form');
      expect(html).toContain('https://tg.example.com/#/calls/tc_1');
      expect(confirmationPage(ready(p, 'reject'), '/act/T')).toContain('class="reject"');
    }
  });
});
