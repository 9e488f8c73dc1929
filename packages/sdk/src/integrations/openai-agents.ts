/**
 * OpenAI Agents SDK for JS (`@openai/agents` 0.14 and 0.20; only its types are imported):
 * `withApproval(tool(...), options)` gates a function tool behind Tollgate. When the model calls it, the call is
 * proposed to Tollgate and the tool runs only once approved, with the approved (maybe edited) arguments, exactly
 * once (Tollgate's claim); a refusal is the tool's output, so the model reads who refused and why.
 *
 * The run waits inside the tool call by default. With `interrupt: true` it uses the SDK's `needsApproval` flow
 * instead (an interruption and a saveable RunState; `decideInterruptions` records Tollgate's decisions), but the
 * run still goes through the gated invoke: `RunState.approve` alone could only run the original arguments, while
 * Tollgate's approvers may edit them and the run needs Tollgate's claim.
 */
import type { FunctionTool, RunContext, RunState, RunToolApprovalItem } from '@openai/agents';
import { outcomeOf, type TollgateConversation } from '../conversation.js';
import { ToolCallRejectedError } from '../errors.js';
import { toolCallKey } from '../ids.js';
import type { JsonObject } from '../types.js';
import {
  conversationOf,
  guardOptions,
  refusalOrThrow,
  toolCallIdOf,
  type ConversationSource,
  type GateOptions,
} from './shared.js';

/** The details the runner passes to a tool's invocation: the model's call (`callId`) and the run's signal. */
export type ToolCallDetails = Parameters<FunctionTool['invoke']>[2];

export interface WithApprovalOptions<Context = unknown> extends GateOptions<JsonObject> {
  /** The conversation, or a function of the call (its arguments, run context and details) returning it. */
  conversation: ConversationSource<{ input: JsonObject; runContext: RunContext<Context>; details?: ToolCallDetails }>;
  /** The tool's name in Tollgate. Default: the tool's own name. */
  toolName?: string;
  /**
   * The Agents SDK's own human-in-the-loop flow: a call Tollgate holds for a person ends the run with an
   * interruption (`result.interruptions`, a `RunState` you may save) instead of waiting inside the run;
   * `decideInterruptions` then approves or rejects them from Tollgate's decisions, and `run(agent, state)`
   * resumes. Default false: the run waits.
   */
  interrupt?: boolean;
}

/**
 * Returns the tool with its invocation gated: the model's arguments are proposed (the tool-call id is the
 * model's `callId`, so a replayed turn does not propose twice), and once approved the tool is invoked with the
 * arguments to run — parsed and validated by the tool as usual. The run's abort signal ends the wait.
 */
export function withApproval<T extends FunctionTool<any, any, any>>(
  tool: T,
  options: WithApprovalOptions<T extends FunctionTool<infer C, any, any> ? C : unknown>,
): T {
  const invoke = tool.invoke.bind(tool);
  const toolName = options.toolName ?? tool.name;
  const gated = async (runContext: RunContext<any>, input: string, details?: ToolCallDetails): Promise<unknown> => {
    const args = parseArguments(input, toolName);
    const conversation = await conversationOf(options.conversation, {
      input: args,
      runContext,
      ...(details ? { details } : {}),
    });
    const run = conversation.guard<JsonObject, unknown>(
      toolName,
      (approved) => invoke(runContext, JSON.stringify(approved), details),
      guardOptions(options),
    );
    const id = toolCallIdOf(details?.toolCall?.callId);
    try {
      return await run(args, {
        ...(id !== undefined ? { id } : {}),
        ...(details?.signal ? { signal: details.signal } : {}),
      });
    } catch (e) {
      return refusalOrThrow(e, options.onRefusal);
    }
  };
  if (!options.interrupt) return { ...tool, invoke: gated } as T;
  // Proposed here (idempotently, by callId) so that people see it while the run is interrupted; the gated
  // invoke proposes the same call again once resumed, and claims it.
  const needsApproval = async (runContext: RunContext<any>, input: unknown, callId?: string): Promise<boolean> => {
    const args = typeof input === 'string' ? parseArguments(input, toolName) : (input as JsonObject);
    const conversation = await conversationOf(options.conversation, { input: args, runContext });
    const { display, reason, annotations } = guardOptions(options);
    const pick = <V>(v: V | ((a: JsonObject) => V | undefined) | undefined) =>
      typeof v === 'function' ? (v as (a: JsonObject) => V | undefined)(args) : v;
    const d = pick(display);
    const r = pick(reason);
    const handle = await conversation.propose({
      toolName,
      arguments: args,
      ...(callId ? { id: callId } : {}),
      ...(d !== undefined ? { display: d } : {}),
      ...(r !== undefined ? { reason: r } : {}),
      ...(annotations !== undefined ? { annotations } : {}),
    });
    return handle.toolCall.status === 'pending';
  };
  return { ...tool, invoke: gated, needsApproval } as T;
}

/**
 * Waits for Tollgate's decisions on the run's interruptions (tools gated with `interrupt: true`) and records them
 * in its state: approved → `state.approve(item)` (the tool then runs with the approved, maybe edited, arguments);
 * refused → `state.reject(item, { message })`, the message being what the model is told. Resume with
 * `run(agent, state)`. Interruptions that are not Tollgate calls of this conversation are left as they are.
 */
export async function decideInterruptions<S extends RunState<any, any>>(
  result: { interruptions: RunToolApprovalItem[]; state: S },
  o: { conversation: TollgateConversation; signal?: AbortSignal; onRefusal?: GateOptions<JsonObject>['onRefusal'] },
): Promise<S> {
  const calls = (await o.conversation.refresh(o.signal ? { signal: o.signal } : {})).toolCalls ?? [];
  for (const item of result.interruptions) {
    const callId = (item.rawItem as { callId?: string }).callId;
    if (!callId) continue;
    const key = await toolCallKey(callId);
    const call = calls.find((c) => c.externalId === key);
    if (!call) continue;
    const decided = await o.conversation.tollgate.waitForDecision(call, o.signal ? { signal: o.signal } : {});
    const { status } = outcomeOf(decided);
    if (status === 'approved') {
      result.state.approve(item);
    } else {
      const message = refusalOrThrow(new ToolCallRejectedError(status, decided), o.onRefusal);
      result.state.reject(item, { message: typeof message === 'string' ? message : JSON.stringify(message) });
    }
  }
  return result.state;
}

function parseArguments(input: string, toolName: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(input || '{}');
  } catch {
    throw new TypeError(`${toolName}: the model's arguments are not JSON`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new TypeError(`${toolName}: the model's arguments are not a JSON object`);
  return value as JsonObject;
}
