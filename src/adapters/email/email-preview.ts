import type { CallPreview } from '../../domain/conversation/call-preview';
import { previewAsText } from '../../domain/conversation/call-preview';

import { EMAIL_PREVIEW_MAX } from '../../domain/conversation/preview-shown';

/** The most characters of a preview an email shows; past them it says so, sends the person to the card, and offers no Approve. */
export { EMAIL_PREVIEW_MAX };

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A diff line's colour in the email (inline styles: mail clients drop style sheets). */
function diffStyle(line: string): string {
  if (line.startsWith('+++') || line.startsWith('---')) return 'font-weight:600';
  if (line.startsWith('+')) return 'color:#1a7f37;background:#dafbe1';
  if (line.startsWith('-')) return 'color:#cf222e;background:#ffebe9';
  if (line.startsWith('@@')) return 'color:#0969da';
  return '';
}

/**
 * A call's preview in an approval email, as text and as HTML: its kind and title, then the text (a diff's lines
 * coloured in the HTML, an email's headers first, SQL with its estimated rows), cut at EMAIL_PREVIEW_MAX with a
 * note. Everything is escaped: the agent wrote it. An image is not embedded (mail clients block data: images, and
 * nothing is fetched): the note sends the person to the card.
 */
export function emailPreview(p: CallPreview): { text: string; html: string } {
  const head = `Preview${p.title ? `: ${p.title.replace(/[\u0000-\u001f\u007f]+/g, ' ')}` : ''} (${p.kind})`;
  if (p.kind === 'image') {
    const note = 'An image: open the card to see it.';
    return { text: `${head}\n${note}`, html: `<h3>${esc(head)}</h3><p>${esc(note)}</p>` };
  }
  const { text, cut } = previewAsText(p, EMAIL_PREVIEW_MAX);
  const more = cut ? `… cut short at ${EMAIL_PREVIEW_MAX} characters: open the card to see all of it.` : '';
  const body =
    p.kind === 'diff'
      ? text
          .split('\n')
          .map((l) => {
            const style = diffStyle(l);
            return style ? `<span style="${style}">${esc(l)}</span>` : esc(l);
          })
          .join('\n')
      : esc(text);
  return {
    text: [head, text, ...(more ? [more] : [])].join('\n'),
    html:
      `<h3>${esc(head)}</h3>` +
      `<pre style="background:#f6f8fa;padding:8px;white-space:pre-wrap;word-break:break-word">${body}</pre>` +
      (more ? `<p><strong>${esc(more)}</strong></p>` : ''),
  };
}
