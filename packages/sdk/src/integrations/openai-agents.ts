/**
 * OpenAI Agents SDK for JS (`@openai/agents`): `withApproval(tool(...), options)` gates a function tool behind
 * Tollgate. When the model calls it, the call is proposed to Tollgate and the tool runs only once approved, with
 * the approved (maybe edited) arguments, exactly once (Tollgate's claim); a refusal is the tool's output, so the
 * model reads who refused and why.
 *
 * Not the SDK's `needsApproval` + `RunState.approve/reject`: approving there can only run the original arguments,
 * while Tollgate's approvers may edit them and the run needs Tollgate's claim.
 */
import type { FunctionTool, RunContext } from '@openai/agents';
import type { JsonObject } from '../types.js';
import { conversationOf, guardOptions, refusalOrThrow, toolCallIdOf, type ConversationSource, type GateOptions } from './shared.js';

/** The details the runner passes to a tool's invocation: the model's call (`callId`) and the run's signal. */
export type ToolCallDetails = Parameters<FunctionTool['invoke']>[2];

export interface WithApprovalOptions<Context = unknown> extends GateOptions<JsonObject> {
  /** The conversation, or a function of the call (its arguments, run context and details) returning it. */
  conversation: ConversationSource<{ input: JsonObject; runContext: RunContext<Context>; details?: ToolCallDetails }>;
  /** The tool's name in Tollgate. Default: the tool's own name. */
  toolName?: string;
}

/**
 * Returns the tool with its invocation gated: the model's arguments are proposed (the tool-call id is the
 * model's `callId`, so a replayed turn does not propose twice), and once approved the tool is invoked with the
 * arguments to run — parsed and validated by the tool as usual. The run's abort signal ends the wait.
 */
export function withApproval<T extends FunctionTool<any, any, any>>(tool: T, options: WithApprovalOptions<T extends FunctionTool<infer C, any, any> ? C : unknown>): T {
  const invoke = tool.invoke.bind(tool);
  const toolName = options.toolName ?? tool.name;
  const gated = async (runContext: RunContext<any>, input: string, details?: ToolCallDetails): Promise<unknown> => {
    const args = parseArguments(input, toolName);
    const conversation = await conversationOf(options.conversation, { input: args, runContext, ...(details ? { details } : {}) });
    const run = conversation.guard<JsonObject, unknown>(toolName, (approved) => invoke(runContext, JSON.stringify(approved), details), guardOptions(options));
    const id = toolCallIdOf(details?.toolCall?.callId);
    try {
      return await run(args, { ...(id !== undefined ? { id } : {}), ...(details?.signal ? { signal: details.signal } : {}) });
    } catch (e) {
      return refusalOrThrow(e, options.onRefusal);
    }
  };
  return { ...tool, invoke: gated } as T;
}

function parseArguments(input: string, toolName: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(input || '{}');
  } catch {
    throw new TypeError(`${toolName}: the model's arguments are not JSON`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new TypeError(`${toolName}: the model's arguments are not a JSON object`);
  return value as JsonObject;
}
