import type { ApprovalRequest } from '../../application/ports/approval-callback.port';
import type { ActionOffer } from '../actions/action-links';
import { HIDDEN_TEXT } from '../actions/hidden-text';
import type { OutgoingEmail } from './mailer';
import { emailPreview } from './email-preview';

/** The most characters of arguments an email shows; past them it shows the beginning, says so, and offers no Approve. */
export const EMAIL_ARGUMENTS_MAX = 4000;

/** The arguments as an email shows them, and whether that is all of them. */
export function emailArguments(r: Pick<ApprovalRequest, 'arguments'>): {
  text: string;
  whole: boolean;
  length: number;
} {
  const all = JSON.stringify(r.arguments, null, 2);
  // Shown, but not as approvable, when they hold characters that would show them other than they are.
  if (HIDDEN_TEXT.test(JSON.stringify(r.arguments)))
    return { text: all.slice(0, EMAIL_ARGUMENTS_MAX), whole: false, length: all.length };
  return all.length <= EMAIL_ARGUMENTS_MAX
    ? { text: all, whole: true, length: all.length }
    : { text: all.slice(0, EMAIL_ARGUMENTS_MAX), whole: false, length: all.length };
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** One line, bounded: what an agent wrote must not add headers or run on. */
function line(s: string, max: number): string {
  const flat = s.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function displayOf(r: ApprovalRequest): { title?: string; summary?: string } {
  const d = r.display as { title?: unknown; summary?: unknown } | undefined;
  return {
    ...(typeof d?.title === 'string' && d.title.trim() ? { title: d.title } : {}),
    ...(typeof d?.summary === 'string' && d.summary.trim() ? { summary: d.summary } : {}),
  };
}

/**
 * The email asking one person to decide one held call: what the agent wants (title, summary, tool, agent, user,
 * reason, arguments — clipped honestly past EMAIL_ARGUMENTS_MAX, with the card for the rest), and links to
 * Approve, Reject and the card. Links open a confirmation page; nothing is decided by following one. `note` heads
 * an escalation or reminder.
 */
export function requestEmail(
  r: ApprovalRequest,
  to: { email: string; name?: string },
  offer: ActionOffer,
  messageId: string,
  note?: string,
): OutgoingEmail {
  const d = displayOf(r);
  const what = d.title ? `${d.title} (${r.toolName})` : r.toolName;
  const args = emailArguments(r);
  const u = r.conversation.user;
  const facts: Array<[string, string]> = [
    ['Tool', r.toolName],
    ['Agent', r.conversation.agentId],
    ['User', u ? (u.name ? `${u.name} (${u.id})` : u.id) : 'none'],
    ...(r.conversation.title ? ([['Conversation', r.conversation.title]] as Array<[string, string]>) : []),
    ['Expires', r.approval?.expiresAt ?? ''],
    ['Policy', `${r.policy.level}: ${r.policy.reason}`],
  ];
  const quorum = r.approval?.quorum;
  if (quorum) facts.push(['Approvals', `${quorum.approvedBy.length} of ${quorum.needed}`]);
  if (r.reason) facts.push(["Agent's reason", r.reason]);
  const withheld =
    offer.approveWithheld === 'passkey'
      ? 'Approving this call needs your passkey: approve it on the card in the Tollgate inbox.'
      : offer.approveWithheld === 'too_long'
        ? 'The arguments are too long to show here in full, or hold characters that would show them other than they are: open the card to read them and approve there.'
        : offer.approveWithheld === 'rule'
          ? "This call's rule does not take an approval as it stands: open the card to see what you may decide."
          : offer.approveWithheld === 'preview_not_shown'
            ? "This email cannot show the call's preview whole (an image, or longer than it shows): open the card to see it and approve there."
            : undefined;
  const clipped =
    args.text.length >= args.length
      ? ''
      : `\n… ${args.length - args.text.length} more characters not shown: open the card to see them all.`;
  const preview = r.preview && emailPreview(r.preview);

  const text = [
    ...(note ? [note, ''] : []),
    `${to.name ? `${line(to.name, 100)}, an` : 'An'} agent asks to run ${line(what, 200)}.`,
    ...(d.summary ? ['', d.summary] : []),
    '',
    ...facts.map(([k, v]) => `${k}: ${line(v, 500)}`),
    '',
    ...(preview ? [preview.text, ''] : []),
    'Arguments:',
    args.text + clipped,
    '',
    ...(offer.approve ? [`Approve: ${offer.approve.url}`] : withheld ? [withheld] : []),
    ...(offer.reject
      ? [`Reject: ${offer.reject.url}`]
      : offer.rejectWithheld === 'reason'
        ? ["To reject, choose one of the rule's reasons on the card."]
        : []),
    `Open the card: ${offer.card}`,
    '',
    'Each link opens a page where you confirm; it works once. Replies to this email are not read.',
  ].join('\n');

  const button = (href: string, label: string, color: string) =>
    `<a href="${esc(href)}" style="display:inline-block;padding:8px 18px;margin-right:8px;border-radius:6px;background:${color};color:#ffffff;text-decoration:none">${esc(label)}</a>`;
  const html =
    `<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#1b1f24">` +
    (note ? `<p><strong>${esc(note)}</strong></p>` : '') +
    `<h2 style="margin:0 0 8px">Approve ${esc(line(what, 200))}?</h2>` +
    (d.summary ? `<p>${esc(d.summary)}</p>` : '') +
    `<table cellpadding="4">${facts.map(([k, v]) => `<tr><td style="color:#57606a">${esc(k)}</td><td>${esc(line(v, 500))}</td></tr>`).join('')}</table>` +
    (preview ? preview.html : '') +
    `<h3>Arguments</h3><pre style="background:#f6f8fa;padding:8px;white-space:pre-wrap;word-break:break-word">${esc(args.text)}</pre>` +
    (clipped ? `<p><strong>${esc(clipped.trim())}</strong></p>` : '') +
    (withheld ? `<p>${esc(withheld)}</p>` : '') +
    `<p>${offer.approve ? button(offer.approve.url, 'Approve…', '#1a7f37') : ''}${offer.reject ? button(offer.reject.url, 'Reject…', '#cf222e') : ''}${button(offer.card, 'Open the card', '#57606a')}</p>` +
    `<p style="color:#57606a;font-size:13px">Each link opens a page where you confirm; it works once. Replies to this email are not read.</p>` +
    `</body></html>`;

  return {
    to: to.email,
    subject: line(`${note ? `${note.split(':')[0]}: ` : ''}Approve ${what}? (${r.conversation.agentId})`, 200),
    text,
    html,
    messageId,
  };
}

/** The arguments a digest shows per call; past them it shows none and offers no Approve for that call. */
export const DIGEST_ARGUMENTS_MAX = 600;

/**
 * A digest: the calls that wait for the person, each with its title, tool, agent, deadline, its arguments when they
 * are short (else a note and no Approve), and its links. `offers` are in the order of `waiting`.
 */
export function digestEmail(
  waiting: ApprovalRequest[],
  offers: ActionOffer[],
  to: { email: string; name?: string },
  more: boolean,
  messageId: string,
  inboxUrl: string,
): OutgoingEmail {
  const n = waiting.length;
  const head = `${n}${more ? '+' : ''} ${n === 1 && !more ? 'call waits' : 'calls wait'} for you in Tollgate`;
  const text: string[] = [`${to.name ? `${line(to.name, 100)}, ` : ''}${head}.`, ''];
  let html = `<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#1b1f24"><h2>${esc(head)}</h2>`;
  waiting.forEach((r, i) => {
    const d = displayOf(r);
    const what = d.title ? `${d.title} (${r.toolName})` : r.toolName;
    const args = JSON.stringify(r.arguments);
    const offer = offers[i];
    text.push(
      `${i + 1}. ${line(what, 200)} — agent ${line(r.conversation.agentId, 100)}, until ${r.approval?.expiresAt ?? ''}`,
      ...(d.summary ? [`   ${line(d.summary, 300)}`] : []),
      args.length <= DIGEST_ARGUMENTS_MAX
        ? `   Arguments: ${args}`
        : `   Arguments: ${args.length} characters, on the card`,
      ...(offer.approve ? [`   Approve: ${offer.approve.url}`] : []),
      ...(offer.reject ? [`   Reject: ${offer.reject.url}`] : []),
      `   Card: ${offer.card}`,
      '',
    );
    html +=
      `<h3 style="margin-bottom:4px">${esc(line(what, 200))}</h3>` +
      `<p style="margin:0;color:#57606a">agent ${esc(r.conversation.agentId)} · until ${esc(r.approval?.expiresAt ?? '')}</p>` +
      (d.summary ? `<p>${esc(line(d.summary, 300))}</p>` : '') +
      (args.length <= DIGEST_ARGUMENTS_MAX
        ? `<pre style="background:#f6f8fa;padding:6px;white-space:pre-wrap;word-break:break-word">${esc(args)}</pre>`
        : `<p>Arguments: ${args.length} characters, on the card.</p>`) +
      `<p>${offer.approve ? `<a href="${esc(offer.approve.url)}">Approve…</a> · ` : ''}${offer.reject ? `<a href="${esc(offer.reject.url)}">Reject…</a> · ` : ''}<a href="${esc(offer.card)}">Open the card</a></p>`;
  });
  if (more) {
    text.push(`More wait: ${inboxUrl}`);
    html += `<p><a href="${esc(inboxUrl)}">More wait: open the inbox</a></p>`;
  }
  text.push('Each link opens a page where you confirm; it works once. Replies to this email are not read.');
  html += `<p style="color:#57606a;font-size:13px">Each link opens a page where you confirm; it works once. Replies to this email are not read.</p></body></html>`;
  return { to: to.email, subject: line(head, 200), text: text.join('\n'), html, messageId };
}

/** A `notify` call's FYI: what ran, under which rule, and its card; nothing to decide. */
export function noticeEmail(
  r: ApprovalRequest,
  to: { email: string; name?: string },
  card: string,
  messageId: string,
): OutgoingEmail {
  const d = displayOf(r);
  const what = d.title ? `${d.title} (${r.toolName})` : r.toolName;
  const args = emailArguments(r);
  const text = [
    `${to.name ? `${line(to.name, 100)}, for` : 'For'} your information: ${line(what, 200)} ran at once (agent ${line(r.conversation.agentId, 100)}).`,
    ...(d.summary ? ['', d.summary] : []),
    '',
    `Policy: ${line(`${r.policy.level}: ${r.policy.reason}`, 500)}`,
    '',
    'Arguments:',
    args.text + (args.whole ? '' : `\n… ${args.length - args.text.length} more characters not shown`),
    '',
    `The card: ${card}`,
    '',
    'Nothing is left to decide. Replies to this email are not read.',
  ].join('\n');
  const html =
    `<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#1b1f24">` +
    `<h2 style="margin:0 0 8px">Ran at once, FYI: ${esc(line(what, 200))}</h2>` +
    (d.summary ? `<p>${esc(d.summary)}</p>` : '') +
    `<p>Agent ${esc(r.conversation.agentId)} · policy ${esc(line(`${r.policy.level}: ${r.policy.reason}`, 500))}</p>` +
    `<pre style="background:#f6f8fa;padding:8px;white-space:pre-wrap;word-break:break-word">${esc(args.text)}</pre>` +
    `<p><a href="${esc(card)}">Open the card</a></p>` +
    `<p style="color:#57606a;font-size:13px">Nothing is left to decide. Replies to this email are not read.</p></body></html>`;
  return { to: to.email, subject: line(`FYI: ${what} ran (${r.conversation.agentId})`, 200), text, html, messageId };
}
