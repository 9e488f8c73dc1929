import { createHash } from 'node:crypto';
import type { ActionDone, ActionReady, ActionRefusal } from './action-desk';
import { MAX_REASON } from './action-desk';
import { type CallPreview, previewAsText } from '../../domain/conversation/call-preview';
import { EMAIL_PREVIEW_MAX, previewShownWhole } from '../../domain/conversation/preview-shown';
import type { Channel } from '../../domain/shared/actor';

/** The pages of single-use actions: plain HTML forms that work without JavaScript, styled by one inline sheet. */
const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}
h1{font-size:1.4rem;margin:0 0 .5rem}dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}
dt{color:#57606a}dd{margin:0;word-break:break-word}pre{background:#f6f8fa;padding:.75rem;overflow:auto;max-height:28rem;white-space:pre-wrap;word-break:break-word}
button{font:inherit;padding:.5rem 1.25rem;border:0;border-radius:6px;color:#fff;cursor:pointer}
.approve{background:#1a7f37}.reject{background:#cf222e}textarea{width:100%;font:inherit;box-sizing:border-box}
.note{color:#57606a}.refused h1{color:#cf222e}.done h1{color:#1a7f37}`;

/** Only this sheet may style the page: no script at all, forms post to this service only, never framed. */
export const ACTION_PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function page(title: string, cls: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="no-referrer"><title>${esc(title)} · Tollgate</title><style>${STYLE}</style></head><body class="${cls}">${body}</body></html>`;
}

function cardLink(card: string | undefined, text = 'Open the call in the Tollgate inbox'): string {
  return card ? `<p><a href="${esc(card)}">${esc(text)}</a></p>` : '';
}

function display(call: ActionReady['call']): { title?: string; summary?: string } {
  const d = call.display as { title?: unknown; summary?: unknown } | undefined;
  return {
    ...(typeof d?.title === 'string' ? { title: d.title } : {}),
    ...(typeof d?.summary === 'string' ? { summary: d.summary } : {}),
  };
}

/**
 * The call's preview as the page shows it (escaped: the agent wrote it), and whether it is shown whole: text up to
 * what the link's channel shows (domain/conversation/preview-shown), an image never (only the card shows it).
 */
function previewSection(p: CallPreview | undefined, via: Channel): { html: string; whole: boolean } {
  if (!p) return { html: '', whole: true };
  const head = `<h2>Preview${p.title ? `: ${esc(p.title)}` : ''} (${esc(p.kind)})</h2>`;
  if (p.kind === 'image')
    return { html: `${head}<p class="note">An image: open the card to see it.</p>`, whole: false };
  const { text, cut } = previewAsText(p, EMAIL_PREVIEW_MAX);
  const whole = !cut && previewShownWhole(p, via);
  return {
    html: `${head}<pre>${esc(text)}</pre>${whole ? '' : '<p class="note">Cut short here: open the card to see all of it.</p>'}`,
    whole,
  };
}

/**
 * The confirmation page a link opens: the call as the person is to judge it (tool, summary, agent, its preview,
 * arguments in full) and one button that posts the form. Reject asks for an optional reason. An approval whose
 * preview this page cannot show whole (an image, text cut short) has no button: the card is where it is approved
 * (and the server refuses it from a link: 403 preview_not_shown).
 */
export function confirmationPage(r: ActionReady, actionPath: string): string {
  const preview = previewSection(r.call.preview, r.action.via);
  const approve = r.action.decision === 'approve';
  const blocked = approve && !preview.whole;
  const d = display(r.call);
  const verb = approve ? 'Approve' : 'Reject';
  const facts: Array<[string, string]> = [
    ['Tool', r.call.toolName],
    ['Agent', r.agentId],
    ['Expires', r.call.approval?.expiresAt ?? ''],
    ['Policy', `${r.call.policy.level}: ${r.call.policy.reason}`],
    ['You', `${r.person.name ?? r.person.id}${r.person.email ? ` <${r.person.email}>` : ''}`],
  ];
  if (r.call.reason) facts.splice(2, 0, ['Agent’s reason', r.call.reason]);
  const quorum = r.call.approval?.quorum;
  if (quorum) facts.push(['Approvals', `${quorum.approvedBy.length} of ${quorum.needed}`]);
  return page(
    `${verb} ${r.call.toolName}?`,
    'confirm',
    `<h1>${esc(verb)} ${esc(d.title ?? r.call.toolName)}?</h1>` +
      (d.summary ? `<p>${esc(d.summary)}</p>` : '') +
      `<dl>${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>` +
      preview.html +
      `<h2>Arguments</h2><pre>${esc(JSON.stringify(r.call.arguments, null, 2))}</pre>` +
      (blocked
        ? `<p class="note">This page cannot show the call's preview whole, so it cannot approve it: approve it on the card.</p>` +
          cardLink(r.card)
        : `<form method="post" action="${esc(actionPath)}">` +
          (approve
            ? ''
            : `<p><label for="reason">Why (optional)</label><textarea id="reason" name="reason" rows="3" maxlength="${MAX_REASON}"></textarea></p>`) +
          `<p><button type="submit" class="${approve ? 'approve' : 'reject'}">${verb} as ${esc(r.person.name ?? r.person.id)}</button></p></form>` +
          `<p class="note">This link works once. Nothing is decided until you press the button.</p>` +
          cardLink(r.card, 'Or open the call in the Tollgate inbox')),
  );
}

export function donePage(r: ActionDone): string {
  const approved = r.call.status !== 'rejected' && r.action.decision === 'approve';
  const waiting = r.call.status === 'pending';
  const title = waiting
    ? 'Your approval is counted'
    : approved
      ? `Approved: ${r.call.toolName}`
      : `Rejected: ${r.call.toolName}`;
  const note = waiting
    ? `The call waits for more approvals (${r.call.approval?.quorum?.approvedBy.length ?? 0} of ${r.call.approval?.quorum?.needed ?? 0}).`
    : approved
      ? 'The agent may now run it.'
      : 'The agent was told it may not run it.';
  return page(title, 'done', `<h1>${esc(title)}</h1><p>${esc(note)}</p>` + cardLink(r.card));
}

export function refusedPage(r: ActionRefusal): string {
  return page(r.title, 'refused', `<h1>${esc(r.title)}</h1><p>${esc(r.detail)}</p>` + cardLink(r.card));
}
