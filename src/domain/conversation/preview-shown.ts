import type { Channel } from '../shared/actor';
import { DomainError, type ValidationFault } from '../shared/domain-error';
import { type CallPreview, previewAsText, type PreviewInput } from './call-preview';
import { cardPath } from './conversation.errors';

/*
 * Which channel can show a call's preview whole, the one rule both sides use: a channel that cannot offers no
 * Approve beside it (it links to the card), and the server refuses an approval arriving through it (403
 * `preview_not_shown`). The receipt's `preview` claim says the approver was shown that preview: no approval binds
 * a preview its channel cut short or never showed.
 */

/** The most characters of a preview's text Slack shows (a section holds 3,000; escaping lengthens `&`, `<`, `>`). */
export const SLACK_PREVIEW_MAX = 2400;
/**
 * The most characters of a preview's text an email shows, and the action-link confirmation page an email's link
 * opens: both show it whole up to here, or neither offers Approve.
 */
export const EMAIL_PREVIEW_MAX = 16_000;

/**
 * What a channel shows of a preview's text: `whole` up to `max` characters (measured as `weigh` counts them), or
 * `none` (only its kind and title: a push notification). No channel but the web card shows an image.
 */
interface PreviewRoom {
  max: number;
  /** How long the text is once the channel has escaped it (never shorter than the text). */
  weigh?: (text: string) => number;
}

/** Slack's escaping: `&` → `&amp;` (5), `<` / `>` → `&lt;` / `&gt;` (4), and a ``` fence broken up by one character. */
const slackLength = (t: string): number =>
  t.length + 4 * (t.match(/[&<>]/g)?.length ?? 0) + (t.match(/```/g)?.length ?? 0);

/**
 * The channels that approve through a message which shows previews cut, or not at all. Left out (the web card,
 * the CLI — it pages the whole preview before it asks —, REST, gRPC): the person's client shows it whole. MCP chat
 * has its own rule (no chat approval for a preview cut short or an image, rules/chat-approval).
 */
const ROOM: Partial<Record<Channel, PreviewRoom>> = {
  slack: { max: SLACK_PREVIEW_MAX, weigh: slackLength },
  email: { max: EMAIL_PREVIEW_MAX },
  // A notification shows the preview's kind and title only, and its Approve posts without a page in between.
  push: { max: -1 },
};

/** Whether `channel` shows this preview whole (no preview: nothing to show, so yes). */
export function previewShownWhole(p: CallPreview | undefined, channel: Channel): boolean {
  if (!p) return true;
  const room = ROOM[channel];
  if (!room) return true;
  if (room.max < 0 || p.kind === 'image') return false;
  const { text, cut } = previewAsText(p, room.max);
  // The title shares the message's room (a Slack section holds 3,000 characters and cuts the rest without a note).
  const weigh = room.weigh ?? ((t: string) => t.length);
  return !cut && weigh(text) + (room.weigh && p.title ? weigh(p.title) : 0) <= room.max;
}

/**
 * An approval (approve, edit, always allow) of a call with a preview its channel could not show whole is refused:
 * 403 `preview_not_shown`. Rejections (reject, respond, always reject) need no preview.
 */
export function mustHaveShownPreview(
  p: CallPreview | undefined,
  via: Channel,
  rejecting: boolean,
  toolCallId?: string,
): void {
  if (rejecting || previewShownWhole(p, via)) return;
  throw new DomainError(
    'preview_not_shown',
    'forbidden',
    `This call's preview was not shown whole through ${via} (${
      p?.kind === 'image' ? 'an image' : 'too long'
    }): approve it on the card in the Tollgate inbox, where it is shown whole (preview_not_shown)`,
    { ...(toolCallId ? { toolCallId, card: cardPath(toolCallId) } : {}), via },
  );
}

/**
 * Bidirectional controls and invisible format characters (U+061C, U+200B–U+200F, U+202A–U+202E, U+2060–U+2064,
 * U+2066–U+2069, U+FEFF): they would show a preview's text other than it is, beside an Approve that binds it.
 */
export const PREVIEW_HIDDEN_TEXT = /[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/u;

/** The faults of a proposed preview's text holding any of PREVIEW_HIDDEN_TEXT: content, title, email headers. */
export function previewHiddenFaults(
  p: Pick<PreviewInput, 'content' | 'title' | 'email'> & { kind?: string },
  path: string,
): ValidationFault[] {
  const message =
    'holds a bidirectional control or an invisible format character (U+200B–U+200F, U+202A–U+202E, U+2066–U+2069…)';
  const texts: Array<[string, unknown]> = [
    ['content', p.content],
    ['title', p.title],
    ...Object.entries(p.email ?? {}).map(([k, v]): [string, unknown] => [`email.${k}`, v]),
  ];
  return texts
    .filter(([, v]) => typeof v === 'string' && PREVIEW_HIDDEN_TEXT.test(v))
    .map(([k]) => ({ path: `${path}.${k}`, message }));
}
