/**
 * Vercel AI SDK (`ai` 6): `withApproval(tool, options)` gates a `tool({...})` behind Tollgate. The tool's
 * `execute` runs only once Tollgate approves, with the approved (maybe edited) arguments; a refusal is the
 * tool's result text, so the model reads who refused and why. Works in generateText, streamText and agents.
 *
 * Not `needsApproval`: that flow can only approve or deny the original input, while Tollgate's approvers may
 * edit the arguments and the run needs Tollgate's claim (exactly once, with a receipt).
 */
import type { Tool, ToolExecutionOptions } from 'ai';
import type { RunContext } from '../conversation.js';
import type { JsonObject } from '../types.js';
import {
  conversationOf,
  guardOptions,
  refusalOrThrow,
  toolCallIdOf,
  type ConversationSource,
  type GateOptions,
} from './shared.js';

export interface WithApprovalOptions<INPUT> extends GateOptions<INPUT> {
  /** The tool's name in Tollgate (the key of the tool in `tools`): what policies match and people see. */
  toolName: string;
  /** The conversation, or a function of the call (its input and execute options) returning it. */
  conversation: ConversationSource<{ input: INPUT; options: ToolExecutionOptions }>;
}

/** What the wrapped `execute` gets as its options: the framework's, plus Tollgate's receipt and call. */
export type ApprovedExecutionOptions = ToolExecutionOptions & { tollgate: RunContext };

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
  const gated = async (input: INPUT, callOptions: ToolExecutionOptions): Promise<OUTPUT | string> => {
    const conversation = await conversationOf(options.conversation, { input, options: callOptions });
    const run = conversation.guard<INPUT, OUTPUT>(
      options.toolName,
      async (approved, tollgate) =>
        lastValue(execute(approved, { ...callOptions, tollgate } as ApprovedExecutionOptions)),
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
  return { ...tool, execute: gated } as Tool<INPUT, OUTPUT | string>;
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
