import type { Preview } from '../../types.js';

/** The most characters of a preview a chat form shows; a longer one (or an image) is never approved from the chat. */
export const MAX_CHAT_PREVIEW = 2000;

/**
 * A call's preview as the chat's elicitation message shows it: kind and title, then its text in a fenced block (an
 * email's headers first, SQL with its estimated rows), cut at MAX_CHAT_PREVIEW with a note. The agent wrote it: a
 * fence inside cannot close ours, and control characters other than line breaks and tabs are dropped. `whole` is
 * false when it was cut or is an image (a chat cannot show one): the gateway then offers no approval in the chat.
 */
export function chatPreview(p: Preview | undefined): { text: string; whole: boolean } | undefined {
  if (!p) return undefined;
  const clean = (s: string) => s.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
  const head = `Preview (${p.kind}${p.title ? `: ${clean(p.title)}` : ''})`;
  if (p.kind === 'image') return { text: `${head}: an image, shown on the card.`, whole: false };
  const lines: string[] = [];
  if (p.kind === 'email' && p.email) {
    for (const k of ['from', 'to', 'cc', 'subject'] as const) {
      const v = p.email[k];
      if (v !== undefined) lines.push(`${k[0].toUpperCase()}${k.slice(1)}: ${v}`);
    }
    lines.push('');
  }
  if (p.kind === 'sql' && p.estimatedRows !== undefined) lines.push(`-- estimated rows: ${p.estimatedRows}`);
  const all = clean([...lines, p.content].join('\n'));
  const whole = all.length <= MAX_CHAT_PREVIEW;
  let body = whole ? all : all.slice(0, MAX_CHAT_PREVIEW);
  if (!whole && /[\ud800-\udbff]$/.test(body)) body = body.slice(0, -1);
  body = body.replace(/```/g, '`\u200b``');
  const more = whole ? '' : `\n(${all.length - body.length} more characters: open the card to see all of it)`;
  return { text: `${head}:\n\`\`\`\n${body}\n\`\`\`${more}`, whole };
}
