import type { ApprovalOutcome, ApprovalRequest } from '../../application/ports/approval-callback.port';
import type { ToolCallView } from '../../application/views/views';
import { cardPath } from '../../domain/conversation/conversation.errors';
import type { GrantScope } from '../../domain/policy/grant-limit';
import { withRuleChoices } from './slack-rule-choices';
import { slackPreviewText } from './slack-preview';
import { previewShownWhole } from '../../domain/conversation/preview-shown';

/** A Block Kit block, as loosely as Slack's own `Block` type (`type` plus anything). */
export type SlackBlock = { type: string; block_id?: string; [key: string]: unknown };

export const APPROVE_ACTION = 'tollgate_approve';
export const REJECT_ACTION = 'tollgate_reject';
export const REJECT_MODAL = 'tollgate_reject_modal';
export const REASON_BLOCK = 'reason';
export const REASON_INPUT = 'reason';
export const ALWAYS_ALLOW_ACTION = 'tollgate_always_allow';
export const ALWAYS_ALLOW_MODAL = 'tollgate_always_allow_modal';
export const SCOPE_BLOCK = 'scope';
export const SCOPE_INPUT = 'scope';
export const EXPIRY_BLOCK = 'expiry';
export const EXPIRY_INPUT = 'expiry';

/** Where an always-allow's standing grant applies, narrowest first, as people read it. */
export const GRANT_SCOPES: ReadonlyArray<[GrantScope, string]> = [
  ['conversation', 'This conversation'],
  ['agent', 'This agent, every conversation'],
  ['tenant', 'Every agent of the tenant'],
];

/** The lifetimes a grant may be given, as the web inbox offers them; `never` is until revoked. */
export const GRANT_LIFETIMES: ReadonlyArray<[string, string, number | undefined]> = [
  ['3600', '1 hour', 3600],
  ['86400', '1 day', 86400],
  ['604800', '7 days', 7 * 86400],
  ['never', 'until revoked', undefined],
];

const SECTION_TEXT_MAX = 3000;
const FIELD_MAX = 2000;

/**
 * Everything in these messages that came from an agent (tool names, reasons, display fields, arguments) is
 * escaped: `<`, `>` and `&` are Slack's markup, so an agent cannot write `<!channel>` or a disguised link.
 */
export function escapeMrkdwn(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

function text(s: string, max = SECTION_TEXT_MAX): { type: 'mrkdwn'; text: string } {
  return { type: 'mrkdwn', text: clip(s, max) };
}

function slackDate(iso: string): string {
  const epoch = Math.floor(Date.parse(iso) / 1000);
  return `<!date^${epoch}^{date_short_pretty} at {time}|${iso}>`;
}

interface Display {
  title?: string;
  summary?: string;
  fields?: Array<{ label: string; value: string }>;
}

function displayOf(call: ToolCallView): Display {
  const d = call.display as Display | undefined;
  return d && typeof d === 'object' ? d : {};
}

/** How a message links to the call's card in the web inbox: the service's public URL, when it is known. */
export interface MessageLinks {
  /** TOLLGATE_PUBLIC_URL (or the URL people reach the inbox at); absent: the message names the call's id only. */
  publicUrl?: string;
}

/** A call's card in the web inbox, where a person sees all of it. */
export function cardUrl(publicUrl: string, toolCallId: string): string {
  return `${publicUrl.replace(/\/+$/, '')}${cardPath(toolCallId)}`;
}

/** The most characters of (escaped) arguments a message shows; Slack's sections hold 3,000. */
const ARGUMENTS_MAX = SECTION_TEXT_MAX - 40;

/** The arguments as the message would show them, or undefined when they do not fit whole. */
function shownArguments(call: ToolCallView): string | undefined {
  const args = escapeMrkdwn(JSON.stringify(call.arguments, null, 2)).replace(/```/g, '`\u200b``');
  return args.length <= ARGUMENTS_MAX ? args : undefined;
}

/** The body of a request, shared by the message that asks and the one that shows the outcome. */
function describe(
  call: ToolCallView,
  conversation?: ApprovalRequest['conversation'],
  links: MessageLinks = {},
): SlackBlock[] {
  const display = displayOf(call);
  const blocks: SlackBlock[] = [
    {
      type: 'header',
      text: {
        type: 'plain_text',
        text: clip(display.title ? `${display.title} (${call.toolName})` : `Approve ${call.toolName}?`, 150),
      },
    },
  ];
  if (display.summary) blocks.push({ type: 'section', text: text(escapeMrkdwn(display.summary)) });
  const facts: Array<[string, string]> = [['Tool', `\`${escapeMrkdwn(call.toolName)}\``]];
  if (conversation) {
    facts.push(['Agent', escapeMrkdwn(conversation.agentId)]);
    const u = conversation.user;
    facts.push(['User', u ? escapeMrkdwn(u.name ? `${u.name} (${u.id})` : u.id) : '_none_']);
    if (conversation.title) facts.push(['Conversation', escapeMrkdwn(conversation.title)]);
  }
  if (call.approval) facts.push(['Expires', slackDate(call.approval.expiresAt)]);
  const quorum = call.approval?.quorum;
  if (quorum) {
    const who = quorum.approvedBy.map((a) => escapeMrkdwn(a.name ?? a.id)).join(', ');
    facts.push([
      'Approvals',
      `${quorum.approvedBy.length} of ${quorum.needed}${quorum.of ? ` (${escapeMrkdwn(quorum.of.join(', '))})` : ''}${who ? `: ${who}` : ''}`,
    ]);
  }
  if (call.approval?.selfApproval === false)
    facts.push(['Separation of duties', "The requester and the agent's owner may not approve"]);
  facts.push(['Policy', escapeMrkdwn(`${call.policy.level}: ${call.policy.reason}`)]);
  if (call.policy.shadow)
    facts.push([
      'Shadow rule',
      escapeMrkdwn(
        `rule ${call.policy.shadow.rule} would have: ${call.policy.shadow.level} (${call.policy.shadow.reason})`,
      ),
    ]);
  blocks.push({ type: 'section', fields: facts.map(([k, v]) => text(`*${k}*\n${v}`, FIELD_MAX)) });
  if (call.reason) blocks.push({ type: 'section', text: text(`*Reason*\n${escapeMrkdwn(call.reason)}`) });
  const fields = (display.fields ?? [])
    .filter((f) => f && typeof f.label === 'string' && typeof f.value === 'string')
    .slice(0, 10);
  if (fields.length)
    blocks.push({
      type: 'section',
      fields: fields.map((f) => text(`*${escapeMrkdwn(f.label)}*\n${escapeMrkdwn(f.value)}`, FIELD_MAX)),
    });
  const args = shownArguments(call);
  // Never a clipped view: what falls off would be the agent's choice. The message says so and links to all of it.
  const where = links.publicUrl
    ? `<${cardUrl(links.publicUrl, call.id)}|Open the full card in the Tollgate inbox>`
    : `Open tool call \`${call.id}\` in the Tollgate inbox to see them`;
  if (call.preview) {
    const open = links.publicUrl
      ? `<${cardUrl(links.publicUrl, call.id)}|open the card in the Tollgate inbox>`
      : `open tool call \`${call.id}\` in the Tollgate inbox`;
    blocks.push({
      type: 'section',
      block_id: 'tollgate_preview',
      text: text(slackPreviewText(call.preview, escapeMrkdwn, open)),
    });
  }
  blocks.push({
    type: 'section',
    block_id: args === undefined ? 'tollgate_arguments_too_long' : 'tollgate_arguments',
    text: text(
      args === undefined
        ? `*Arguments*\n:warning: Arguments too long to show here: ${JSON.stringify(call.arguments, null, 2).length} characters. ${where}.`
        : `*Arguments*\n\`\`\`${args}\`\`\``,
    ),
  });
  blocks.push({
    type: 'context',
    elements: [text(`Tool call \`${call.id}\` · conversation \`${escapeMrkdwn(call.conversationId)}\``)],
  });
  return blocks;
}

/** The call's rule asks for a passkey on each approval (`stepUp: passkey`): Slack cannot sign for it. */
export function needsPasskey(call: Pick<ToolCallView, 'approval'>): boolean {
  return call.approval?.stepUp === 'passkey';
}

/** The line that sends a person to the card where the call's preview is shown whole, and approved. */
function previewLine(toolCallId: string, links: MessageLinks): string {
  return links.publicUrl
    ? `:mag: *Preview not shown whole here*: approve in Tollgate, <${cardUrl(links.publicUrl, toolCallId)}|open the card in the Tollgate inbox>`
    : `:mag: *Preview not shown whole here*: approve in Tollgate, open tool call \`${toolCallId}\` in the Tollgate inbox`;
}

/** The line that sends a person to the card where their passkey signs for the call. */
export function passkeyLine(toolCallId: string, links: MessageLinks = {}): string {
  return links.publicUrl
    ? `:closed_lock_with_key: *Needs a passkey*: approve in Tollgate, <${cardUrl(links.publicUrl, toolCallId)}|open the card in the Tollgate inbox>`
    : `:closed_lock_with_key: *Needs a passkey*: approve in Tollgate, open tool call \`${toolCallId}\` in the Tollgate inbox`;
}

/**
 * The message that asks: the request and Approve / Reject buttons (the value is the tool call's id). Arguments too
 * long to show whole get Reject only: no one approves, nor always-allows, what they could not read. Nor does a call
 * whose rule asks for a passkey (Slack cannot sign for it): it says so and links to the card; Reject needs none.
 */
export function requestMessage(
  r: ApprovalRequest,
  links: MessageLinks = {},
  mentions: readonly string[] = [],
): { text: string; blocks: SlackBlock[] } {
  const blocks = describe(r, r.conversation, links);
  const named = slackMentions(mentions);
  if (named) blocks.splice(1, 0, { type: 'section', block_id: 'tollgate_assignees', text: text(`*For* ${named}`) });
  const passkey = needsPasskey(r);
  if (passkey) blocks.push({ type: 'section', block_id: 'tollgate_passkey', text: text(passkeyLine(r.id, links)) });
  // A preview Slack cannot show whole (an image, text past what a message holds) is approved on the card only.
  const previewHidden = !previewShownWhole(r.preview, 'slack');
  if (previewHidden && !passkey)
    blocks.push({ type: 'section', block_id: 'tollgate_preview_not_shown', text: text(previewLine(r.id, links)) });
  if (passkey || previewHidden || shownArguments(r) === undefined) {
    blocks.push({
      type: 'actions',
      block_id: 'tollgate_decision',
      elements: [
        {
          type: 'button',
          action_id: REJECT_ACTION,
          style: 'danger',
          value: r.id,
          text: { type: 'plain_text', text: 'Reject' },
        },
      ],
    });
    const why = passkey ? ' (needs a passkey)' : previewHidden ? ' (see its preview there)' : '';
    return withRuleChoices(
      r,
      {
        text: `${named ? `${named}: ` : ''}Approval needed: ${r.toolName} (${r.id}), in the Tollgate inbox${why}`,
        blocks,
      },
      RULE_BUTTONS,
    );
  }
  blocks.push({
    type: 'actions',
    block_id: 'tollgate_decision',
    elements: [
      {
        type: 'button',
        action_id: APPROVE_ACTION,
        style: 'primary',
        value: r.id,
        text: { type: 'plain_text', text: 'Approve' },
      },
      {
        type: 'button',
        action_id: REJECT_ACTION,
        style: 'danger',
        value: r.id,
        text: { type: 'plain_text', text: 'Reject' },
      },
    ],
  });
  // A row of its own: a standing grant outlives this call, so it is not one more button beside Approve.
  blocks.push({
    type: 'actions',
    block_id: 'tollgate_grant',
    elements: [
      {
        type: 'button',
        action_id: ALWAYS_ALLOW_ACTION,
        value: r.id,
        text: { type: 'plain_text', text: 'Always allow…' },
      },
    ],
  });
  return withRuleChoices(
    r,
    { text: `${named ? `${named}: ` : ''}Approval needed: ${r.toolName} (${r.id})`, blocks },
    RULE_BUTTONS,
  );
}

/** Which button makes which decision, for the rule's `allowedDecisions` (slack-rule-choices.ts). */
const RULE_BUTTONS = { approve: APPROVE_ACTION, reject: REJECT_ACTION, alwaysAllow: ALWAYS_ALLOW_ACTION };

/**
 * The Slack users a call names (`person:` approvers, through their linked Slack user), as mentions: Slack notifies
 * exactly them. Only ids Slack issues (`U…`, `W…`) are mentioned; anything else is left out.
 */
function slackMentions(users: readonly string[]): string {
  return users
    .filter((u) => /^[UW][A-Z0-9]{1,31}$/.test(u))
    .slice(0, 20)
    .map((u) => `<@${u}>`)
    .join(' ');
}

/**
 * A `notify` call ran at once: an FYI with no buttons (nothing is left to decide), never updated later.
 * `approvers` are the roles told (and `requester`, the conversation's user).
 */
export function notifyMessage(
  r: ApprovalRequest,
  approvers: string[],
  links: MessageLinks = {},
): { text: string; blocks: SlackBlock[] } {
  const blocks = describe(r, r.conversation, links);
  blocks[0] = { type: 'header', text: { type: 'plain_text', text: clip(`Ran at once: ${titleOf(r)}`, 150) } };
  const rule = r.policy.rule === null ? 'by policy defaults' : `by policy rule ${r.policy.rule}`;
  const told = approvers.length ? ` · told: ${escapeMrkdwn(approvers.join(', '))}` : '';
  blocks.push({
    type: 'context',
    block_id: 'tollgate_notified',
    elements: [
      text(`:information_source: Ran at once, FYI: \`${escapeMrkdwn(r.toolName)}\` ${rule}${told}. Nothing to decide.`),
    ],
  });
  return { text: `Ran at once, FYI: ${escapeMrkdwn(r.toolName)} (${r.id}) ${rule}`, blocks };
}

function titleOf(call: ToolCallView): string {
  const d = displayOf(call);
  return d.title ? `${d.title} (${call.toolName})` : call.toolName;
}

const HEADLINES: Record<ApprovalOutcome['outcome'], string> = {
  approved: ':white_check_mark: *Approved*',
  rejected: ':no_entry: *Rejected*',
  expired: ':hourglass: *Expired*: no one decided in time',
  cancelled: ':octagonal_sign: *Cancelled*',
};

/** The same message once the request has ended: no buttons, and who ended it, where and why. */
export function outcomeMessage(
  o: ApprovalOutcome,
  conversation?: ApprovalRequest['conversation'],
  links: MessageLinks = {},
): { text: string; blocks: SlackBlock[] } {
  const blocks = describe(o.toolCall, conversation, links).filter((b) => b.type !== 'actions');
  const who =
    o.outcome === 'expired'
      ? ''
      : ` by ${escapeMrkdwn(o.by.name ? `${o.by.name} (${o.by.id})` : o.by.id)}${o.by.onBehalfOf ? ` for ${escapeMrkdwn(o.by.onBehalfOf.name ?? o.by.onBehalfOf.id)}` : ''} via ${escapeMrkdwn(o.by.via)}`;
  const why = o.reason ? `\n>${escapeMrkdwn(o.reason).replace(/\n/g, '\n>')}` : '';
  blocks.push({ type: 'section', block_id: 'tollgate_outcome', text: text(`${HEADLINES[o.outcome]}${who}${why}`) });
  return { text: `${o.toolCall.toolName} (${o.toolCall.id}): ${o.outcome}`, blocks };
}

/** The modal a Reject click opens: a required reason. `private_metadata` says which call and message. */
export function rejectModal(meta: { toolCallId: string; channel?: string; ts?: string }) {
  return {
    type: 'modal' as const,
    callback_id: REJECT_MODAL,
    private_metadata: JSON.stringify(meta),
    title: { type: 'plain_text' as const, text: 'Reject tool call' },
    submit: { type: 'plain_text' as const, text: 'Reject' },
    close: { type: 'plain_text' as const, text: 'Cancel' },
    blocks: [
      { type: 'section', text: text(`Reject tool call \`${meta.toolCallId}\`? The agent sees your reason.`) },
      {
        type: 'input',
        block_id: REASON_BLOCK,
        label: { type: 'plain_text', text: 'Reason' },
        element: { type: 'plain_text_input', action_id: REASON_INPUT, multiline: true, max_length: 4000 },
      },
    ],
  };
}

const option = (value: string, label: string) => ({ text: { type: 'plain_text' as const, text: label }, value });

/**
 * The modal an "Always allow…" click opens: where the standing grant applies (only the scopes this person may
 * grant; the policy may narrow it further, and the server's refusal is shown here), how long it lasts, and an
 * optional reason. `private_metadata` says which call and message.
 */
export function alwaysAllowModal(meta: { toolCallId: string; channel?: string; ts?: string }, scopes: GrantScope[]) {
  const offered = GRANT_SCOPES.filter(([s]) => scopes.includes(s));
  const day = GRANT_LIFETIMES.find(([v]) => v === '86400')!;
  return {
    type: 'modal' as const,
    callback_id: ALWAYS_ALLOW_MODAL,
    private_metadata: JSON.stringify(meta),
    title: { type: 'plain_text' as const, text: 'Always allow' },
    submit: { type: 'plain_text' as const, text: 'Approve and allow' },
    close: { type: 'plain_text' as const, text: 'Cancel' },
    blocks: [
      {
        type: 'section',
        text: text(`Approve tool call \`${meta.toolCallId}\` and let calls like it run without asking from now on.`),
      },
      {
        type: 'input',
        block_id: SCOPE_BLOCK,
        label: { type: 'plain_text', text: 'Where' },
        element: {
          type: 'radio_buttons',
          action_id: SCOPE_INPUT,
          options: offered.map(([v, l]) => option(v, l)),
          initial_option: option(offered[0][0], offered[0][1]),
        },
      },
      {
        type: 'input',
        block_id: EXPIRY_BLOCK,
        optional: true,
        label: { type: 'plain_text', text: 'Ends' },
        // A day unless chosen otherwise, so a grant made in a hurry does not stay forever.
        element: {
          type: 'static_select',
          action_id: EXPIRY_INPUT,
          options: GRANT_LIFETIMES.map(([v, l]) => option(v, l)),
          initial_option: option(day[0], day[1]),
        },
      },
      {
        type: 'input',
        block_id: REASON_BLOCK,
        optional: true,
        label: { type: 'plain_text', text: 'Reason' },
        element: { type: 'plain_text_input', action_id: REASON_INPUT, multiline: true, max_length: 4000 },
      },
    ],
  };
}
