/**
 * Asking people in the chat (MCP elicitation) and the built-in `ask_human` tool: a held call the session's person
 * may decide, or a question they may answer, is asked in the client too; the first decision or answer wins.
 */
import type { CallToolResult, ElicitRequestFormParams, Tool as McpTool } from '@modelcontextprotocol/server';
import type { TollgateConversation } from '../../conversation.js';
import { TollgateError } from '../../errors.js';
import { newId } from '../../ids.js';
import { needsPasskey } from '../../passkeys.js';
import type { Question } from '../../questions.js';
import { Tollgate } from '../../tollgate.js';
import type { ToolCall } from '../../types.js';
import type { AskHumanConfig } from '../mcp-config.js';
import { type CallContext, clip, type Log, messageOf, refusalResult, type Session } from './shared.js';
import { chatPreview } from './preview-text.js';

/** The built-in tool's name (`askHuman`): an upstream tool of that name is refused while it is on. */
export const ASK_HUMAN_TOOL = 'ask_human';
const MAX_QUESTION = 4000;

/** What asking in the chat needs of the gateway. */
export interface ChatDeps {
  tollgate: Tollgate;
  /** Where people open the web inbox (links to a call's card); absent: the Tollgate URL. */
  inboxUrl?: string;
  elicitation: boolean;
  log: Log;
}

/** What `ask_human` needs besides. */
export interface AskDeps extends ChatDeps {
  askHuman: AskHumanConfig;
  progressIntervalMs: number;
  conversationOf(session: Session): Promise<TollgateConversation>;
  failure(tool: string, e: unknown, what: string): CallToolResult;
}

/** `ask_human` as clients list it: read-only (it changes nothing), never proposed as a tool call. */
export const ASK_HUMAN: McpTool = {
  name: ASK_HUMAN_TOOL,
  title: 'Ask a person',
  description:
    'Ask a person (the user, or an approver in Tollgate) a question and wait for the answer: free text, or one of `choices`. Use it when you need a decision or a fact only a person has; the answer is the result.',
  inputSchema: {
    type: 'object',
    properties: {
      question: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_QUESTION,
        description: 'The question, as the person will read it',
      },
      choices: {
        type: 'array',
        items: { type: 'string', minLength: 1, maxLength: 200 },
        minItems: 2,
        maxItems: 20,
        uniqueItems: true,
        description: 'Optional: 2 to 20 distinct answers to pick from',
      },
    },
    required: ['question'],
  },
  annotations: { title: 'Ask a person', readOnlyHint: true, openWorldHint: false },
};

/** The most characters of arguments a chat form shows; longer ones are never approved from the chat. */
export const MAX_CHAT_ARGUMENTS = 2000;

/** A call's card in the web inbox, where a person sees all of it (`#/calls/<id>`, the inbox's own route). */
export function cardUrl(inboxUrl: string, toolCallId: string): string {
  return `${inboxUrl.replace(/\/+$/, '')}/#/calls/${encodeURIComponent(toolCallId)}`;
}

// The SDK's own, re-exported for the gateway: only the web inbox can sign for such a call.
export { needsPasskey } from '../../passkeys.js';

/**
 * Why the chat may not approve a held call, from what its view says, or undefined. Tollgate refuses such an
 * approval itself (403 chat_approval_not_allowed); the gateway does not offer it: a client may accept any form
 * unseen, so only calls a chat answer is good enough for are approved there.
 */
export function chatMayNotApprove(call: ToolCall): string | undefined {
  const approval = call.approval;
  if (call.policy.level !== 'confirm') return `it is held ${call.policy.level}`;
  if (call.policy.toolFlags?.destructive) return 'the tool is destructive';
  if (approval?.selfApproval === false) return 'separation of duties: another person must approve it';
  if (approval?.quorum) return `it needs ${approval.quorum.needed} approvals`;
  if (needsPasskey(call)) return 'it needs a passkey, which signs for it in the inbox';
  if (approval?.chatApproval === false) return 'its rule does not take approvals from a chat';
  return undefined;
}

/**
 * MCP elicitation, when the requester is among the call's approvers and the client can be asked. Where a chat
 * answer may approve the call, its arguments are shown whole and a person's token is at hand, a yes/no form with an
 * optional reason, decided with that token, `via: "mcp"`. Otherwise, when the client takes URL-mode elicitation,
 * a link to the call's card in the inbox, where the person signs in and sees all of it (edit, passkey step-up);
 * else, with a token, a form that says why not, links to the card, and offers only to reject the call (or leave it
 * for the inbox, the default). A decline of either form rejects. The first decision wins, so one made in the inbox
 * meanwhile stands (409 already_decided).
 */
export async function askInChat(
  deps: ChatDeps,
  session: Session,
  call: ToolCall,
  ctx: CallContext,
  signal: AbortSignal,
  /** Why the chat may not approve, when Tollgate said so to an approval asked for before (the form is asked again). */
  refused?: string,
): Promise<void> {
  if (!deps.elicitation) return;
  if (!call.approval?.approvers.includes('requester')) return;
  const modes = session.server.getClientCapabilities()?.elicitation;
  if (!modes) return;
  const expiresAt = Date.parse(call.approval.expiresAt);
  const timeout = Number.isNaN(expiresAt) ? undefined : Math.max(1000, expiresAt - Date.now());
  const args = JSON.stringify(call.arguments);
  const card = cardUrl(deps.inboxUrl ?? deps.tollgate.url, call.id);
  const shown = args.length <= MAX_CHAT_ARGUMENTS ? args : `arguments too long to show here: ${args.length} characters`;
  const preview = chatPreview(call.preview);
  // What the call's rule lets a person decide (issue 28 part 4): the form offers nothing else.
  const rule = ruleChoicesOf(call);
  const notHere =
    refused ??
    chatMayNotApprove(call) ??
    (rule.allowed && !rule.allowed.includes('approve') ? 'its rule does not allow an approval' : undefined) ??
    (args.length > MAX_CHAT_ARGUMENTS ? 'its arguments do not fit here' : undefined) ??
    (preview && !preview.whole ? 'its preview does not fit here' : undefined);
  const previewed = preview ? `\n${preview.text}` : '';
  if ((notHere || !session.userToken || !modes.form) && modes.url)
    return sendToCard(session, call, card, ctx, signal, timeout, notHere);
  if (!session.userToken || !modes.form) return;
  // With the rule's reasons, a rejection's reason is one of them (an enum), or free text where the rule allows it.
  const reasonField = rule.reasons
    ? rule.free
      ? {
          type: 'string' as const,
          title: 'Reason',
          description: `To reject: one of ${rule.reasons.map((r) => JSON.stringify(r)).join(', ')}, or your own words`,
          maxLength: 4000,
        }
      : { type: 'string' as const, title: 'Reason', description: 'To reject: choose one', enum: rule.reasons }
    : {
        type: 'string' as const,
        title: 'Reason',
        description: 'Optional: why (recorded in the audit trail)',
        maxLength: 4000,
      };
  const mayReject = !rule.allowed || rule.allowed.includes('reject');
  // Nothing this chat could decide: the card decides.
  if (notHere && !mayReject) {
    if (modes.url) return sendToCard(session, call, card, ctx, signal, timeout, notHere);
    return;
  }
  const form: ElicitRequestFormParams = notHere
    ? {
        mode: 'form',
        message: `${call.toolName} waits for a person's approval in the Tollgate inbox: ${card} (it cannot be approved in this chat: ${notHere}). With ${shown} (${call.policy.reason}). You may reject it here.${previewed}`,
        requestedSchema: {
          type: 'object',
          properties: {
            decision: {
              type: 'string',
              title: 'Decision',
              oneOf: [
                { const: 'wait', title: 'Leave it for the inbox' },
                { const: 'reject', title: 'Reject it' },
              ],
              default: 'wait',
            },
            reason: reasonField,
          },
          required: ['decision'],
        },
      }
    : {
        mode: 'form',
        message: `Allow ${call.toolName} with ${args}? (${call.policy.reason})${previewed}`,
        requestedSchema: {
          type: 'object',
          properties: {
            approve: { type: 'boolean', title: 'Approve', description: `Run ${call.toolName} now` },
            reason: reasonField,
          },
          required: ['approve'],
        },
      };
  const answer = await session.server
    .elicitInput(form, { relatedRequestId: ctx.requestId, signal, ...(timeout ? { timeout } : {}) })
    .catch((e) => {
      if (signal.aborted) return undefined;
      throw e;
    });
  if (!answer || answer.action === 'cancel' || signal.aborted) return; // dismissed: the inbox decides
  const content = answer.content ?? {};
  const reason =
    typeof content.reason === 'string' && content.reason.trim() ? content.reason.trim().slice(0, 4000) : undefined;
  // Where the chat may not approve, a decline rejects as on the yes/no form; "leave it for the inbox" does nothing.
  if (notHere && answer.action === 'accept' && content.decision !== 'reject') return;
  const approve = !notHere && answer.action === 'accept' && content.approve === true;
  // A rejection the rule would refuse (not allowed, or without one of its reasons) is not sent: the inbox decides.
  if (!approve && (!mayReject || (rule.reasons && !reason))) return;
  const person = new Tollgate({
    url: deps.tollgate.url,
    token: session.userToken,
    channel: 'mcp',
    headers: { 'user-agent': 'tollgate-mcp-gateway' },
  });
  try {
    await person.inbox().decide(call.id, {
      decision: approve ? 'approve' : 'reject',
      ...(reason ? { reason } : approve ? {} : { reason: 'declined in the chat' }),
    });
  } catch (e) {
    if (e instanceof TollgateError && e.code === 'already_decided') return; // someone decided first: theirs stands
    // The rule takes no approval from a chat (the call's view did not say so): asked again, with Reject only.
    if (e instanceof TollgateError && e.code === 'chat_approval_not_allowed' && !refused && !signal.aborted)
      return askInChat(deps, session, call, ctx, signal, /\(([^()]+)\); decide it in/.exec(e.detail)?.[1] ?? e.detail);
    // The rule asks for a passkey (the call's view did not say so): the same, the inbox's passkey signs for it.
    if (e instanceof TollgateError && e.code === 'step_up_required' && !refused && !signal.aborted)
      return askInChat(deps, session, call, ctx, signal, 'it needs a passkey, which signs for it in the inbox');
    if (
      e instanceof TollgateError &&
      (e.code === 'forbidden' || e.code === 'chat_approval_not_allowed' || e.code === 'decision_not_allowed')
    ) {
      deps.log(
        'warn',
        `tool call ${call.id}: the session's person may not decide it in the chat (${e.detail}); it waits for the inbox: ${card}`,
      );
      return;
    }
    throw e;
  }
}

/**
 * URL-mode elicitation: the client offers to open the call's card in the inbox. Accepting only opens it; the person
 * decides there, signed in as themselves, and the wait goes on meanwhile. Once the wait is over (`signal`), the
 * client is told the elicitation is complete, unless the tool call itself was cancelled.
 */
async function sendToCard(
  session: Session,
  call: ToolCall,
  card: string,
  ctx: CallContext,
  signal: AbortSignal,
  timeout: number | undefined,
  notHere: string | undefined,
): Promise<void> {
  const elicitationId = newId('elicit');
  const answer = await session.server
    .elicitInput(
      {
        mode: 'url',
        elicitationId,
        url: card,
        message: `${call.toolName} waits for your decision in the Tollgate inbox${notHere ? ` (it cannot be approved in this chat: ${notHere})` : ''}. Open its card to see the whole call (${call.policy.reason}), then approve, edit or reject it there.`,
      },
      { relatedRequestId: ctx.requestId, signal, ...(timeout ? { timeout } : {}) },
    )
    .catch((e) => {
      if (signal.aborted) return undefined;
      throw e;
    });
  if (answer?.action !== 'accept') return; // not opened: the inbox and the other channels still decide
  if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
  if (ctx.signal.aborted) return;
  await session.server.createElicitationCompletionNotifier(elicitationId, { relatedRequestId: ctx.requestId })();
}

/**
 * Asks in the session's conversation and waits for the outcome (progress meanwhile; an elicitation when the user
 * may answer): the answer is the result's text; an expired or cancelled question an `isError` result.
 */
export async function ask(
  deps: AskDeps,
  session: Session,
  args: Record<string, unknown>,
  ctx: CallContext,
): Promise<CallToolResult> {
  const input = askInput(args);
  if (typeof input === 'string') return refusalResult(`${ASK_HUMAN_TOOL}: ${input}`);
  const tollgate = deps.tollgate;
  let question: Question;
  try {
    const conversation = await deps.conversationOf(session);
    // The key is made once, before the first attempt: a retried ask never asks twice.
    question = await tollgate.questions.ask(
      conversation.id,
      {
        text: input.question,
        ...(input.choices ? { choices: input.choices } : {}),
        ...(deps.askHuman.timeoutSeconds ? { timeoutSeconds: deps.askHuman.timeoutSeconds } : {}),
        id: newId('ask'),
      },
      { signal: ctx.signal },
    );
  } catch (e) {
    if (e instanceof TollgateError && e.code === 'validation_failed')
      return refusalResult(`${ASK_HUMAN_TOOL}: Tollgate refused the question: ${e.detail}`);
    return deps.failure(ASK_HUMAN_TOOL, e, 'could not be asked');
  }
  const stop = new AbortController();
  const waiting = `Waiting for a person to answer in Tollgate: ${clip(question.text, 200)}`;
  ctx.progress(waiting);
  const timer = setInterval(() => ctx.progress(waiting), deps.progressIntervalMs);
  const asking = askQuestionInChat(deps, session, question, ctx, stop.signal).catch((e) =>
    deps.log('warn', `question ${question.id}: asking in the chat failed: ${messageOf(e)}`),
  );
  try {
    question = await tollgate.questions.wait(question, { signal: ctx.signal });
  } catch (e) {
    if (e instanceof TollgateError) return deps.failure(ASK_HUMAN_TOOL, e, 'could not be answered');
    throw e; // aborted: the client cancelled the call
  } finally {
    clearInterval(timer);
    stop.abort(); // answered elsewhere (the inbox), expired or cancelled: the question in the chat is withdrawn
    await asking;
  }
  if (question.status === 'answered' && question.answer)
    return { content: [{ type: 'text', text: question.answer.text }] };
  if (question.status === 'expired') {
    return refusalResult(
      `Nobody answered the question in time (it expired after ${question.timeoutSeconds} s): "${clip(question.text, 200)}". Go on without the answer, or tell the user.`,
    );
  }
  return refusalResult(
    `The question was cancelled in Tollgate${question.reason ? ` (${question.reason})` : ''} and will not be answered: "${clip(question.text, 200)}".`,
  );
}

/**
 * MCP elicitation for a question the session's user may answer (`askTo` names the requester) when the client
 * can be asked and a person's token is at hand. The answer is posted with that token, `via: "mcp"`; the first
 * answer wins, so one given in the inbox meanwhile stands (409 already_answered).
 */
export async function askQuestionInChat(
  deps: ChatDeps,
  session: Session,
  question: Question,
  ctx: CallContext,
  signal: AbortSignal,
): Promise<void> {
  if (!deps.elicitation || !session.userToken) return;
  if (!question.askTo.includes('requester')) return;
  if (!session.server.getClientCapabilities()?.elicitation) return;
  const expiresAt = Date.parse(question.expiresAt);
  const timeout = Number.isNaN(expiresAt) ? undefined : Math.max(1000, expiresAt - Date.now());
  const answerField = question.choices?.length
    ? { type: 'string' as const, title: 'Answer', enum: question.choices }
    : { type: 'string' as const, title: 'Answer', minLength: 1, maxLength: MAX_QUESTION };
  const reply = await session.server
    .elicitInput(
      {
        mode: 'form',
        message: question.text,
        requestedSchema: { type: 'object', properties: { answer: answerField }, required: ['answer'] },
      },
      { relatedRequestId: ctx.requestId, signal, ...(timeout ? { timeout } : {}) },
    )
    .catch((e) => {
      if (signal.aborted) return undefined;
      throw e;
    });
  if (!reply || reply.action !== 'accept' || signal.aborted) return; // declined or dismissed: the inbox answers
  const answer = typeof reply.content?.answer === 'string' ? reply.content.answer.trim() : '';
  if (!answer) return;
  const person = new Tollgate({
    url: deps.tollgate.url,
    token: session.userToken,
    channel: 'mcp',
    headers: { 'user-agent': 'tollgate-mcp-gateway' },
  });
  try {
    await person.answer(question.id, answer, { channel: 'mcp' });
  } catch (e) {
    if (e instanceof TollgateError && e.code === 'already_answered') return; // someone answered first: theirs stands
    if (e instanceof TollgateError && (e.code === 'forbidden' || e.code === 'validation_failed')) {
      deps.log(
        'warn',
        `question ${question.id}: the answer in the chat was refused (${e.code}: ${e.detail}); it waits for the inbox`,
      );
      return;
    }
    throw e;
  }
}

/** The ask_human arguments checked, or what is wrong with them (said to the model, which can correct itself). */
function askInput(args: Record<string, unknown>): { question: string; choices?: string[] } | string {
  const question = typeof args.question === 'string' ? args.question.trim() : '';
  if (!question) return 'question is required: the text to ask';
  if (question.length > MAX_QUESTION) return `question: at most ${MAX_QUESTION} characters`;
  if (args.choices === undefined || args.choices === null) return { question };
  if (!Array.isArray(args.choices) || args.choices.some((c) => typeof c !== 'string'))
    return 'choices: must be a list of strings';
  return { question, choices: args.choices as string[] };
}

/** The call's rule choices (`approval.allowedDecisions`, `rejectReasons`, `rejectFreeText`), as its view shows them. */
function ruleChoicesOf(call: ToolCall): { allowed?: string[]; reasons?: string[]; free: boolean } {
  const a = (call.approval ?? {}) as {
    allowedDecisions?: string[];
    rejectReasons?: string[];
    rejectFreeText?: boolean;
  };
  return {
    ...(a.allowedDecisions ? { allowed: a.allowedDecisions } : {}),
    ...(a.rejectReasons?.length ? { reasons: a.rejectReasons } : {}),
    free: a.rejectFreeText === true,
  };
}
