import type { ApprovalOutcome, ApprovalRequest } from '../../application/ports/approval-callback.port';
import type { ActionOffer, ApproveWithheld } from '../actions/action-links';
import { HIDDEN_TEXT } from '../actions/hidden-text';

/*
 * What a push message carries to the service worker (web/src/sw/), JSON inside the RFC 8291 encryption. The worker
 * shows `title` and `body` as they are (plain text, never markup) under the tag `tollgate-call-<id>`, so a later
 * message about the same call (its outcome) replaces the notification, as the page's own notifications do.
 */

/** Raised when the worker's reading of a message changes incompatibly; the worker ignores versions it does not know. */
export const PUSH_MESSAGE_VERSION = 1;

export interface PushMessage {
  v: typeof PUSH_MESSAGE_VERSION;
  /**
   * `ask`: a held call this person may decide (with actions); `outcome`: how it ended (no actions); `digest`: what
   * waits for them (no call of its own: a click opens the inbox).
   */
  kind: 'ask' | 'outcome' | 'digest';
  toolCallId?: string;
  toolName?: string;
  title: string;
  body: string;
  /** Single-use action tokens, POSTed to `/act/<token>` on the worker's origin. Approve is absent when withheld. */
  approve?: string;
  reject?: string;
  approveWithheld?: Extract<ApproveWithheld, 'passkey' | 'too_long'>;
  /** Alert again though a notification of this call is shown (a reminder, an escalation reaching someone new). */
  renotify?: boolean;
}

/** The most a push service must take (RFC 8291 §4): 4096 bytes of record, 86 of them header and padding. */
export const MAX_PAYLOAD_BYTES = 3993;

/** Arguments up to this long (compact JSON) are shown whole in the notification; longer ones withhold Approve. */
export const ARGUMENTS_SHOWN = 300;
const TITLE_MAX = 100;
const SUMMARY_MAX = 240;
const LINE_MAX = 120;

/**
 * Control, format (bidi overrides, zero-width joiners) and line separators out, whitespace runs folded: agent text
 * must not reorder what the person reads next to Approve, nor push the arguments line out of sight.
 */
export function plain(text: string): string {
  return text
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** At most `max` characters (code points), with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/**
 * The arguments as the notification shows them: compact JSON, whole (`whole`: Approve may be offered), or a line
 * saying they are too long to show here (Approve is withheld: the card shows them).
 */
export function argumentsLine(args: Record<string, unknown>): { line: string; whole: boolean } {
  const json = JSON.stringify(args);
  // JSON escapes control characters but not format ones (a right-to-left override): those are not shown as written.
  if ([...json].length <= ARGUMENTS_SHOWN && !HIDDEN_TEXT.test(json)) return { line: json, whole: true };
  return { line: `Arguments too long to show here: ${[...json].length} characters. Open the request.`, whole: false };
}

const who = (u: ApprovalRequest['conversation']['user']) => (u ? (u.name ?? u.id) : undefined);

/**
 * The notification of a held call: the agent's title (or "Approve <tool>?"), then its summary, the tool with the agent
 * and end user, the arguments line, and why Approve is missing when it is. `note` leads for a reminder or escalation.
 */
export function askMessage(r: ApprovalRequest, offer: ActionOffer, note?: string): PushMessage {
  const title = clip(plain(r.display?.title ?? '') || `Approve ${r.toolName}?`, TITLE_MAX);
  const user = who(r.conversation.user);
  const quorum = r.approval?.quorum;
  const lines = [
    note ? clip(plain(note), LINE_MAX) : undefined,
    r.display?.summary ? clip(plain(r.display.summary), SUMMARY_MAX) : undefined,
    clip(plain(`${r.toolName} · ${r.conversation.agentId}${user ? ` for ${user}` : ''}`), LINE_MAX),
    quorum ? `${quorum.approvedBy.length} of ${quorum.needed} approvals` : undefined,
    // A preview's kind and title only: its content is for the card.
    r.preview
      ? clip(plain(`Preview: ${r.preview.kind}${r.preview.title ? ` · ${r.preview.title}` : ''}`), LINE_MAX)
      : undefined,
    argumentsLine(r.arguments).line,
    offer.approveWithheld === 'passkey'
      ? 'Needs a passkey: open it to approve.'
      : offer.approveWithheld === 'preview_not_shown'
        ? 'Has a preview: open it to see it and approve.'
        : undefined,
  ];
  const message = (title: string, lines: Array<string | undefined>): PushMessage => ({
    v: PUSH_MESSAGE_VERSION,
    kind: 'ask',
    toolCallId: r.id,
    toolName: r.toolName,
    title,
    body: lines.filter((l): l is string => !!l).join('\n'),
    ...(offer.approve ? { approve: offer.approve.token } : {}),
    ...(offer.reject ? { reject: offer.reject.token } : {}),
    // The worker knows passkey and too_long; a rule's or a preview's withholding shows as a plain Open.
    ...(offer.approveWithheld === 'passkey' || offer.approveWithheld === 'too_long'
      ? { approveWithheld: offer.approveWithheld }
      : {}),
    ...(note ? { renotify: true } : {}),
  });
  // Wide characters can outgrow what a push service takes: the summary goes first, then the note, then title room.
  const [n, , ...rest] = lines;
  const tries = [
    message(title, lines),
    message(title, [n, ...rest]),
    message(title, rest),
    message(clip(title, 40), rest),
  ];
  return tries.find((m) => fits(m)) ?? tries[tries.length - 1];
}

/** Whether a message fits a push service's limit, serialised. */
export const fits = (m: PushMessage): boolean => Buffer.byteLength(JSON.stringify(m)) <= MAX_PAYLOAD_BYTES;

const OUTCOME_WORDS: Record<ApprovalOutcome['outcome'], string> = {
  approved: 'Approved',
  rejected: 'Rejected',
  expired: 'Expired',
  cancelled: 'Cancelled',
};

const CHANNEL_WORDS: Record<string, string> = {
  web: 'the web inbox',
  cli: 'the CLI',
  slack: 'Slack',
  api: 'the API',
  grpc: 'gRPC',
  mcp: 'an MCP chat',
  push: 'a notification',
  email: 'email',
};

/** How a call ended, replacing its request's notification: "Approved: Delete src_2", "by Ann via Slack". */
export function outcomeMessage(o: ApprovalOutcome): PushMessage {
  const c = o.toolCall;
  const what = clip(plain(c.display?.title ?? '') || c.toolName, TITLE_MAX - 12);
  const person = o.by.via !== 'system' && o.by.via !== 'policy';
  const by = person
    ? `by ${clip(plain(o.by.name ?? o.by.id), 60)}${o.by.onBehalfOf ? ` for ${clip(plain(o.by.onBehalfOf.name ?? o.by.onBehalfOf.id), 60)}` : ''}${CHANNEL_WORDS[o.by.via] ? ` via ${CHANNEL_WORDS[o.by.via]}` : ''}`
    : o.outcome === 'expired'
      ? 'no one decided it in time'
      : `${o.outcome} by Tollgate`;
  const reason = o.reason ? clip(plain(o.reason), SUMMARY_MAX) : undefined;
  return {
    v: PUSH_MESSAGE_VERSION,
    kind: 'outcome',
    toolCallId: c.id,
    toolName: c.toolName,
    title: `${OUTCOME_WORDS[o.outcome]}: ${what}`,
    body: [`${c.toolName} · ${by}`, reason].filter((l): l is string => !!l).join('\n'),
  };
}

/** A `notify` call ran at once and its rule names push: an FYI, no actions; a click opens its card. */
export function noticeMessage(r: ApprovalRequest): PushMessage {
  const what = clip(plain(r.display?.title ?? '') || r.toolName, TITLE_MAX - 20);
  return {
    v: PUSH_MESSAGE_VERSION,
    kind: 'outcome',
    toolCallId: r.id,
    toolName: r.toolName,
    title: `Ran at once, FYI: ${what}`,
    body: `${r.toolName} · ${clip(plain(r.policy.reason), SUMMARY_MAX)}`,
  };
}

/** A digest: how many calls wait, and the first few titles; no actions (each call has its card). */
export function digestMessage(waiting: ApprovalRequest[], more: boolean): PushMessage {
  const n = waiting.length;
  const count = more ? `${n}+` : `${n}`;
  const titles = waiting.slice(0, 5).map((r) => `• ${clip(plain(r.display?.title ?? '') || r.toolName, LINE_MAX)}`);
  const rest = n > 5 || more ? [`and ${more ? 'more' : `${n - 5} more`}`] : [];
  return {
    v: PUSH_MESSAGE_VERSION,
    kind: 'digest',
    title: n === 1 && !more ? '1 request waits for you' : `${count} requests wait for you`,
    body: [...titles, ...rest].join('\n'),
  };
}
