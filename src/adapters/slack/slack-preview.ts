import type { CallPreview } from '../../domain/conversation/call-preview';
import { previewAsText, truncatePreview } from '../../domain/conversation/call-preview';

import { SLACK_PREVIEW_MAX } from '../../domain/conversation/preview-shown';

/** The most characters of a preview's escaped text a Slack message shows (a section holds 3,000): the domain's rule. */
export { SLACK_PREVIEW_MAX };

/**
 * A call's preview as one Slack section: its kind and title, then its text in a code block (escaped, as everything
 * an agent wrote), cut with a note that sends the person to the card when longer; an image is named, not shown.
 * `escape` is the message's own escaping of Slack's markup.
 */
export function slackPreviewText(p: CallPreview, escape: (s: string) => string, where: string): string {
  const head = `*Preview${p.title ? `: ${escape(p.title)}` : ''}* (${p.kind})`;
  if (p.kind === 'image') return `${head}\nAn image: ${where} to see it.`;
  let { text, cut } = previewAsText(p, SLACK_PREVIEW_MAX);
  let shown = escape(text).replace(/```/g, '`\u200b``');
  // Escaping lengthens `<`, `>` and `&`: cut the raw text further until the escaped text fits.
  while (shown.length > SLACK_PREVIEW_MAX) {
    ({ text } = truncatePreview(text, Math.max(0, text.length - (shown.length - SLACK_PREVIEW_MAX) - 8)));
    cut = true;
    shown = escape(text).replace(/```/g, '`\u200b``');
  }
  return `${head}\n\`\`\`${shown}\`\`\`${cut ? `\n:scissors: Cut short here: ${where} for all of it.` : ''}`;
}
