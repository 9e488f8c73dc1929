/**
 * Vercel AI SDK (`ai` 6 and 7): `withApproval(tool, options)` gates a `tool({...})` behind Tollgate. The tool's
 * `execute` runs only once Tollgate approves, with the approved (maybe edited) arguments; a refusal is the
 * tool's result text, so the model reads who refused and why. Works in generateText, streamText and agents.
 *
 * Not `needsApproval` (nor, alone, ai 7's `toolApproval`): those flows can only approve or deny the original
 * input, while Tollgate's approvers may edit the arguments and the run needs Tollgate's claim (exactly once, with
 * a receipt). With ai 7, `tollgateToolApproval()` as the run's `toolApproval` records Tollgate's decisions as the
 * AI SDK's approval statuses (and can end the run while a person decides); execution stays in the gated `execute`.
 *
 * Only types are imported from `ai`, and only those both majors share, so either major works at run time.
 */
import type { Tool } from 'ai';
import { outcomeOf, type ApprovalOutcome, type RunContext, type TollgateConversation } from '../conversation.js';
import { ToolCallRejectedError } from '../errors.js';
import type { JsonObject } from '../types.js';
import {
  conversationOf,
  guardOptions,
  refusalOrThrow,
  toolCallIdOf,
  type ConversationSource,
  type GateOptions,
} from './shared.js';

/**
 * What the AI SDK passes to a tool's `execute` (its `ToolExecutionOptions`), as both majors have it: ai 6 carries
 * the run's `experimental_context`, ai 7 the tool's own `context` (from `toolsContext`).
 */
export interface ToolCallOptions {
  toolCallId: string;
  messages: unknown[];
  abortSignal?: AbortSignal;
  /** ai 7: the tool's context. */
  context?: unknown;
  /** ai 6: the run's context. */
  experimental_context?: unknown;
}

export interface WithApprovalOptions<INPUT> extends GateOptions<INPUT> {
  /** The tool's name in Tollgate (the key of the tool in `tools`): what policies match and people see. */
  toolName: string;
  /**
   * The conversation, or a function of the call (its input and execute options) returning it. Under
   * `tollgateToolApproval` it is also asked before `execute`, with options that have no `abortSignal`.
   */
  conversation: ConversationSource<{ input: INPUT; options: ToolCallOptions }>;
}

/** What the wrapped `execute` gets as its options: the framework's, plus Tollgate's receipt and call. */
export type ApprovedExecutionOptions = ToolCallOptions & { tollgate: RunContext };

/** What a gated tool carries for `tollgateToolApproval`: a symbol key, so spreading the tool keeps it. */
const GATE = Symbol.for('@tollgate/sdk/ai:gate');
type Gate = WithApprovalOptions<JsonObject>;

/**
 * Returns the tool with its `execute` gated. The Tollgate tool-call id is derived from the AI SDK's
 * `toolCallId`, so a repeated step does not propose twice; the run's abort signal ends the wait.
 */
export function withApproval<INPUT extends JsonObject, OUTPUT>(
  tool: Tool<INPUT, OUTPUT>,
  options: WithApprovalOptions<INPUT>,
): Tool<INPUT, OUTPUT | string> {
  const execute = tool.execute;
  if (typeof execute !== 'function')
    throw new TypeError(`withApproval: the tool ${options.toolName} has no execute to gate`);
  const gated = async (input: INPUT, callOptions: ToolCallOptions): Promise<OUTPUT | string> => {
    const conversation = await conversationOf(options.conversation, { input, options: callOptions });
    const run = conversation.guard<INPUT, OUTPUT>(
      options.toolName,
      async (approved, tollgate) =>
        lastValue(execute(approved, { ...callOptions, tollgate } as ApprovedExecutionOptions as never)),
      guardOptions(options),
    );
    const id = toolCallIdOf(callOptions.toolCallId);
    try {
      return await run(input, {
        ...(id !== undefined ? { id } : {}),
        ...(callOptions.abortSignal ? { signal: callOptions.abortSignal } : {}),
      });
    } catch (e) {
      return refusalOrThrow(e, options.onRefusal) as string;
    }
  };
  return { ...tool, execute: gated, [GATE]: options } as Tool<INPUT, OUTPUT | string>;
}

/** ai 7's approval status (`ToolApprovalStatus`), as `tollgateToolApproval` answers it. */
export type ToolApprovalStatus =
  | { type: 'not-applicable' }
  | { type: 'approved'; reason?: string }
  | { type: 'denied'; reason?: string }
  | { type: 'user-approval'; reason?: string };

/** What ai 7 passes to a generic `toolApproval` function (`GenericToolApprovalFunction`), as far as it is read. */
export interface ToolApprovalCall {
  toolCall: { toolName: string; toolCallId: string; input: unknown };
  tools?: Record<string, unknown> | undefined;
  toolsContext?: unknown;
  runtimeContext?: unknown;
  messages: unknown[];
}

export interface TollgateToolApprovalOptions {
  /**
   * What a call Tollgate holds for a person does to the run. `'wait'` (default): the approval waits for the
   * decision, so the run goes on once a person decided. `'request'`: the AI SDK's manual approval — the run ends
   * with a `tool-approval-request` (`reason`: held in Tollgate for a person); `toolApprovalResponses(result, …)`
   * then answers it from Tollgate's decision, and the next call with those responses resumes.
   */
  pending?: 'wait' | 'request';
  /** Ends a wait for a person (ai 7 gives approval functions no abort signal): e.g. the run's `abortSignal`. */
  signal?: AbortSignal;
}

/**
 * ai 7: a generic `toolApproval` for `ToolLoopAgent`, `generateText` and `streamText` that asks Tollgate about each
 * call of a tool gated by `withApproval` and records Tollgate's decision as the AI SDK's approval status: approved
 * → `approved` (reason: who approved; the gated `execute` then claims the call and runs the approved, maybe
 * edited, arguments); refused → `denied`, its reason being the refusal text, which the model reads as the tool's
 * `execution-denied` result. Tools not gated by `withApproval` are `not-applicable` (they run as without it).
 *
 * The AI SDK evaluates `toolApproval` again when a run resumes from approval responses, so an approval response
 * (from a chat UI, say) cannot run a call Tollgate refused; and an approved one still runs only through the gate.
 */
export function tollgateToolApproval(
  o: TollgateToolApprovalOptions = {},
): (call: ToolApprovalCall) => Promise<ToolApprovalStatus> {
  return async ({ toolCall, tools, toolsContext, messages }) => {
    const gate = gateOf(tools?.[toolCall.toolName]);
    if (!gate) return { type: 'not-applicable' };
    const input = toolCall.input as JsonObject;
    const conversation = await gateConversation(gate, input, toolCall, toolsContext, messages);
    const handle = await conversation.propose(request(gate, input, toolCall.toolCallId), {
      ...(o.signal ? { signal: o.signal } : {}),
    });
    let outcome: ApprovalOutcome;
    if (handle.toolCall.status !== 'pending') outcome = outcomeOf(handle.toolCall);
    else if (o.pending === 'request') return { type: 'user-approval', reason: 'held in Tollgate for a person' };
    else outcome = await handle.wait(o.signal ? { signal: o.signal } : {});
    return statusOf(outcome, gate);
  };
}

/** A manual approval request of the AI SDK (a `tool-approval-request` content part of ai 7's result). */
interface ApprovalRequestPart {
  type: string;
  approvalId?: string;
  isAutomatic?: boolean;
  toolCall?: { toolName: string; toolCallId: string; input: unknown };
}

/** ai 7's `ToolApprovalResponse`. */
export interface ToolApprovalResponse {
  type: 'tool-approval-response';
  approvalId: string;
  approved: boolean;
  reason?: string;
}

/**
 * ai 7, with `tollgateToolApproval({ pending: 'request' })`: waits for Tollgate's decisions on the result's manual
 * approval requests and answers them — approved, or not with the refusal text as the reason. Push
 * `{ role: 'tool', content: responses }` after the result's response messages and call again to resume. Requests
 * for tools not gated by `withApproval` (under `tools`) are left out.
 *
 * Each call is looked up in the conversation its tool's `withApproval` names (the same one `tollgateToolApproval`
 * and the gated `execute` use): a `conversation` function is called as `tollgateToolApproval` calls it, with the
 * run's `toolsContext` and `messages` when given.
 */
export async function toolApprovalResponses(
  result: { content: readonly unknown[] },
  o: {
    tools: Record<string, unknown>;
    /** The run's `toolsContext`, for a `conversation` function that reads the tool's context. */
    toolsContext?: unknown;
    /** The run's messages, for a `conversation` function that reads them. Default: none. */
    messages?: unknown[];
    signal?: AbortSignal;
  },
): Promise<ToolApprovalResponse[]> {
  const responses: ToolApprovalResponse[] = [];
  for (const part of result.content as ApprovalRequestPart[]) {
    if (part.type !== 'tool-approval-request' || part.isAutomatic || !part.approvalId || !part.toolCall) continue;
    const gate = gateOf(o.tools[part.toolCall.toolName]);
    if (!gate) continue;
    const input = part.toolCall.input as JsonObject;
    const conversation = await gateConversation(gate, input, part.toolCall, o.toolsContext, o.messages ?? []);
    // Proposing again (same id, same arguments) answers the same call: no new request for people.
    const handle = await conversation.propose(request(gate, input, part.toolCall.toolCallId), {
      ...(o.signal ? { signal: o.signal } : {}),
    });
    const status = statusOf(await handle.wait(o.signal ? { signal: o.signal } : {}), gate);
    responses.push({
      type: 'tool-approval-response',
      approvalId: part.approvalId,
      approved: status.type === 'approved',
      ...(status.type !== 'not-applicable' && status.reason !== undefined ? { reason: status.reason } : {}),
    });
  }
  return responses;
}

/** The conversation of a gated tool's call, resolved as before `execute` (options without an `abortSignal`). */
function gateConversation(
  gate: Gate,
  input: JsonObject,
  toolCall: { toolName: string; toolCallId: string },
  toolsContext: unknown,
  messages: unknown[],
): Promise<TollgateConversation> {
  const context = (toolsContext as Record<string, unknown> | undefined)?.[toolCall.toolName];
  return conversationOf(gate.conversation, { input, options: { toolCallId: toolCall.toolCallId, messages, context } });
}

function gateOf(tool: unknown): Gate | undefined {
  return tool && typeof tool === 'object' ? ((tool as { [GATE]?: Gate })[GATE] ?? undefined) : undefined;
}

/** The proposal the gated `execute` makes too (same id, arguments and options), so both answer one call. */
function request(gate: Gate, input: JsonObject, toolCallId: string) {
  const { display, reason, annotations } = guardOptions(gate);
  const pick = <V>(v: V | ((a: JsonObject) => V | undefined) | undefined) =>
    typeof v === 'function' ? (v as (a: JsonObject) => V | undefined)(input) : v;
  const d = pick(display);
  const r = pick(reason);
  const id = toolCallIdOf(toolCallId);
  return {
    toolName: gate.toolName,
    arguments: input,
    ...(id !== undefined ? { id } : {}),
    ...(d !== undefined ? { display: d } : {}),
    ...(r !== undefined ? { reason: r } : {}),
    ...(annotations !== undefined ? { annotations } : {}),
  };
}

/** Tollgate's outcome as the AI SDK's status: who approved, or the refusal text the model is told. */
function statusOf(outcome: ApprovalOutcome, gate: Gate): ToolApprovalStatus {
  if (outcome.status === 'approved') {
    const by = outcome.decision?.by;
    const who = !by || by.via === 'policy' ? 'by the policy' : `by ${by.name ?? by.id} via ${by.via}`;
    const edited = outcome.decision?.editedArguments ? ', with edited arguments' : '';
    return { type: 'approved', reason: `${gate.toolName} was approved ${who}${edited}` };
  }
  const refusal = refusalOrThrow(new ToolCallRejectedError(outcome.status, outcome.toolCall), gate.onRefusal);
  return { type: 'denied', reason: typeof refusal === 'string' ? refusal : JSON.stringify(refusal) };
}

/** An execute may stream preliminary results (an async iterable): the last one is the result. */
async function lastValue<T>(value: AsyncIterable<T> | PromiseLike<T> | T): Promise<T> {
  const v = await value;
  if (v && typeof v === 'object' && Symbol.asyncIterator in v) {
    let last: T | undefined;
    for await (const item of v as AsyncIterable<T>) last = item;
    return last as T;
  }
  return v as T;
}
