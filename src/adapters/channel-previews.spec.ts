/**
 * A call's preview in each channel that shows it (issue 28, part 3): escaped everywhere (the agent wrote it), cut
 * with a note where a channel has a limit, an image never embedded outside the web card.
 */
import { chatPreview, MAX_CHAT_PREVIEW } from '../../packages/sdk/src/integrations/mcp/preview-text';
import type { ApprovalRequest } from '../application/ports/approval-callback.port';
import type { CallPreview } from '../domain/conversation/call-preview';
import type { ActionOffer } from './actions/action-links';
import { answerText, parseAnswer, previewLines, promptFields } from './cli/client/schema-prompts';
import { requestEmail } from './email/email-message';
import { EMAIL_PREVIEW_MAX } from './email/email-preview';
import { askMessage } from './push/push-payload';
import { requestMessage } from './slack/slack-blocks';
import { SLACK_PREVIEW_MAX } from './slack/slack-preview';

const HOSTILE = '<!channel> <script>alert(1)</script> ``` & \u001b[8mhidden';
const preview = (p: Partial<CallPreview>): CallPreview => ({
  kind: 'text',
  content: 'x',
  digest: 'd'.repeat(43),
  ...p,
});

function request(p?: CallPreview): ApprovalRequest {
  return {
    tenantId: 'default',
    id: 'tc_1',
    conversationId: 'c1',
    toolName: 'deploy',
    arguments: { env: 'prod' },
    status: 'pending',
    policy: { level: 'confirm', rule: 0, policyVersion: 1, reason: 'rule 0' },
    approval: { approvers: ['approver'], expiresAt: '2026-11-28T12:00:00.000Z' },
    createdAt: '2026-11-28T11:00:00.000Z',
    updatedAt: '2026-11-28T11:00:00.000Z',
    conversation: { id: 'c1', agentId: 'bot', user: null, title: null },
    ...(p ? { preview: p } : {}),
  } as ApprovalRequest;
}

const offer: ActionOffer = {
  card: 'https://tg.example.com/#/calls/tc_1',
  approve: { url: 'https://tg.example.com/act/A.B.C', token: 'A.B.C' },
  reject: { url: 'https://tg.example.com/act/D.E.F', token: 'D.E.F' },
};

const slackPreview = (p: CallPreview) =>
  (requestMessage(request(p), { publicUrl: 'https://tg.example.com' }).blocks as any[]).find(
    (b) => b.block_id === 'tollgate_preview',
  )?.text.text as string;

describe('Slack', () => {
  it('shows a preview in a code block, escaped, that an agent cannot close', () => {
    const text = slackPreview(preview({ kind: 'diff', title: '<@U1>', content: `-a\n+${HOSTILE}` }));
    expect(text).toContain('*Preview: &lt;@U1&gt;* (diff)');
    expect(text).toContain('&lt;!channel&gt;');
    expect(text).not.toContain('<!channel>');
    expect(text).not.toContain('<script>');
    // Our fence opens once and closes once: the agent's ``` is broken up.
    expect(text.match(/```/g)).toHaveLength(2);
  });

  it('cuts a long preview with a note linking to the card, within a section', () => {
    const text = slackPreview(preview({ content: '<'.repeat(10_000) }));
    expect(text.length).toBeLessThanOrEqual(3000);
    expect(text).toContain('Cut short here');
    expect(text).toContain('https://tg.example.com/#/calls/tc_1');
    expect(SLACK_PREVIEW_MAX).toBeLessThan(3000);
  });

  it('names an image without showing it, and says nothing when there is no preview', () => {
    expect(slackPreview(preview({ kind: 'image', content: 'data:image/png;base64,AAAA' }))).toMatch(/An image/);
    expect((requestMessage(request()).blocks as any[]).some((b) => b.block_id === 'tollgate_preview')).toBe(false);
  });
});

describe('email', () => {
  it('shows the preview escaped, a diff coloured in the HTML, an email with its headers', () => {
    const diff = requestEmail(
      request(preview({ kind: 'diff', content: `+${HOSTILE}\n-old` })),
      { email: 'a@x' },
      offer,
      '<m>',
    );
    expect(diff.html).toContain('color:#1a7f37');
    expect(diff.html).toContain('&lt;script&gt;');
    expect(diff.html).not.toContain('<script>');
    expect(diff.text).toContain('Preview (diff)');
    const mail = requestEmail(
      request(preview({ kind: 'email', content: 'Body', email: { to: '<x@y>', subject: 'Hi' } })),
      { email: 'a@x' },
      offer,
      '<m>',
    );
    expect(mail.text).toContain('To: <x@y>\nSubject: Hi\n\nBody');
    expect(mail.html).toContain('To: &lt;x@y&gt;');
  });

  it('cuts a long preview with a note, and never embeds an image', () => {
    const long = requestEmail(
      request(preview({ content: 'y'.repeat(EMAIL_PREVIEW_MAX + 10) })),
      { email: 'a@x' },
      offer,
      '<m>',
    );
    expect(long.text).toContain(`cut short at ${EMAIL_PREVIEW_MAX} characters`);
    const image = requestEmail(
      request(preview({ kind: 'image', content: 'data:image/png;base64,iVBORw0KGgo=' })),
      { email: 'a@x' },
      offer,
      '<m>',
    );
    expect(image.html).not.toContain('<img');
    expect(image.html).not.toContain('data:image');
  });
});

describe('push', () => {
  it('shows the kind and title only', () => {
    const m = askMessage(request(preview({ kind: 'sql', title: 'Purge', content: 'DELETE FROM secrets' })), offer);
    expect(m.body).toContain('Preview: sql · Purge');
    expect(m.body).not.toContain('DELETE FROM');
  });
});

describe('MCP chat', () => {
  it('shows the preview in a fence an agent cannot close, and marks a long one or an image as not whole', () => {
    const shown = chatPreview(preview({ kind: 'sql', content: 'SELECT 1 ```\u0007', estimatedRows: 5 }))!;
    expect(shown.whole).toBe(true);
    expect(shown.text).toContain('-- estimated rows: 5');
    expect(shown.text).not.toContain('\u0007');
    expect(shown.text.match(/```/g)).toHaveLength(2);
    const long = chatPreview(preview({ content: 'z'.repeat(MAX_CHAT_PREVIEW + 1) }))!;
    expect(long.whole).toBe(false);
    expect(long.text).toContain('1 more characters');
    expect(chatPreview(preview({ kind: 'image', content: 'data:image/png;base64,AA' }))!.whole).toBe(false);
    expect(chatPreview(undefined)).toBeUndefined();
  });
});

describe('the CLI', () => {
  const paint = { green: (s: string) => `G(${s})`, red: (s: string) => `R(${s})`, dim: (s: string) => s };

  it('shows a preview line by line, cleaned, a diff coloured, at most so many lines', () => {
    const lines = previewLines(preview({ kind: 'diff', content: `+add\n-del\n ctx\n+\u001b[8mhidden` }), paint);
    expect(lines.slice(1)).toEqual(['G(  +add)', 'R(  -del)', '   ctx', 'G(  +[8mhidden)']);
    expect(lines.join('\n')).not.toContain('\u001b');
    const many = previewLines(
      preview({ content: Array.from({ length: 30 }, (_, i) => `l${i}`).join('\n') }),
      paint,
      12,
    );
    expect(many).toHaveLength(14);
    expect(many[13]).toContain('18 more lines');
  });

  it('asks field by field for what a line can hold, and parses each answer by its type', () => {
    const fields = promptFields({
      type: 'object',
      properties: {
        to: { type: 'string' },
        amount: { type: 'number' },
        count: { type: 'integer' },
        urgent: { type: 'boolean' },
        currency: { enum: ['EUR', 'USD'] },
        memo: { type: 'object' },
      },
      required: ['amount'],
    });
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ['to', 'string', false],
      ['amount', 'number', true],
      ['count', 'integer', false],
      ['urgent', 'boolean', false],
      ['currency', 'enum', false],
    ]);
    const [to, amount, count, urgent, currency] = fields;
    expect(parseAnswer(amount, '12.5')).toEqual({ ok: true, value: 12.5 });
    expect(parseAnswer(amount, '')).toMatchObject({ ok: false });
    expect(parseAnswer(amount, 'abc')).toMatchObject({ ok: false });
    expect(parseAnswer(count, '1.5')).toMatchObject({ ok: false });
    expect(parseAnswer(count, '')).toEqual({ ok: true, value: undefined });
    expect(parseAnswer(urgent, 'y')).toEqual({ ok: true, value: true });
    expect(parseAnswer(currency, 'GBP')).toMatchObject({ ok: false });
    expect(parseAnswer(currency, 'USD')).toEqual({ ok: true, value: 'USD' });
    expect(parseAnswer(to, '')).toEqual({ ok: true, value: undefined });
    expect(answerText(5)).toBe('5');
    expect(promptFields({ type: 'string' })).toEqual([]);
  });
});
