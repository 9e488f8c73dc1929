/**
 * LangGraph.js (`@langchain/langgraph`): gate a tool of a graph behind Tollgate with `interrupt()`, so the graph
 * pauses (checkpointed) while people decide, and resumes when the decision arrives.
 *
 * - `withApproval(tool, options)`: the tool, for a ToolNode, proposing each call to Tollgate and interrupting the
 *   graph while it is pending; resumed, it runs with the approved (maybe edited) arguments, exactly once, or
 *   answers the refusal as the ToolMessage the model reads.
 * - `requestApproval(conversation, call)`: the same step for your own nodes: propose, interrupt while pending,
 *   and answer the outcome and the call's handle (to claim, run and report).
 * - `resumeWhenDecided(graph, config, { tollgate })`: waits for the decisions the graph is interrupted on and
 *   resumes it, until it ends or stops on something else.
 *
 * On resume LangGraph runs the interrupted node again from its start, so the proposal is repeated: it is
 * idempotent by the model's tool-call id (the call's `externalId`), and the decision is read from Tollgate, never
 * from the resume value (which cannot approve anything).
 */
import { Command, interrupt } from '@langchain/langgraph';
import { tool as makeTool, type StructuredToolInterface, type ToolRunnableConfig } from '@langchain/core/tools';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { ApprovalOutcome, ApprovalRequest, ToolCallHandle, TollgateConversation } from '../conversation.js';
import { ToolCallRejectedError } from '../errors.js';
import type { Tollgate } from '../tollgate.js';
import type { JsonObject } from '../types.js';
import {
  conversationOf,
  guardOptions,
  refusalOrThrow,
  toolCallIdOf,
  type ConversationSource,
  type GateOptions,
} from './shared.js';

/** The value a Tollgate interrupt carries (`state.tasks[i].interrupts[j].value`): what the graph waits for. */
export interface TollgateInterrupt {
  kind: 'tollgate-approval';
  /** Tollgate's id of the pending call (`tc_…`). */
  toolCallId: string;
  conversationId: string;
  toolName: string;
  arguments: JsonObject;
}

export function isTollgateInterrupt(value: unknown): value is TollgateInterrupt {
  return !!value && typeof value === 'object' && (value as { kind?: unknown }).kind === 'tollgate-approval';
}

/**
 * Proposes the call (idempotently: give `id`, the model's tool-call id) and, while it is pending, interrupts the
 * graph. Must run inside a graph node (or a tool a ToolNode runs) with a checkpointer. Resumed, answers the
 * outcome as Tollgate has it, and the handle to claim and run an approved call. With `claim: true` the proposal
 * claims an approved call at once (the handle's `run` then starts without another request): only when it runs.
 */
export async function requestApproval(
  conversation: TollgateConversation,
  call: ApprovalRequest,
  o: { signal?: AbortSignal; claim?: boolean } = {},
): Promise<{ outcome: ApprovalOutcome; handle: ToolCallHandle }> {
  const handle = await conversation.propose(call, o);
  if (handle.toolCall.status === 'pending') {
    const value: TollgateInterrupt = {
      kind: 'tollgate-approval',
      toolCallId: handle.id,
      conversationId: conversation.id,
      toolName: handle.toolCall.toolName,
      arguments: handle.toolCall.arguments,
    };
    interrupt(value); // the first time this throws (the graph pauses); resumed, it returns and Tollgate is asked
  }
  return { outcome: await handle.wait(o), handle };
}

export interface WithApprovalOptions extends GateOptions<JsonObject> {
  /** The conversation, or a function of the call (its arguments and the tool's config) returning it. */
  conversation: ConversationSource<{ input: JsonObject; config: ToolRunnableConfig }>;
  /** The tool's name in Tollgate. Default: the tool's own name. */
  toolName?: string;
}

/**
 * The tool gated by Tollgate, for a ToolNode (in a graph compiled with a checkpointer). The original tool runs
 * only once approved, with the arguments to run; a refusal is the tool's answer (the ToolMessage's content).
 */
export function withApproval(tool: StructuredToolInterface, options: WithApprovalOptions): StructuredToolInterface {
  const toolName = options.toolName ?? tool.name;
  const pick = <T>(v: T | ((a: JsonObject) => T | undefined) | undefined, a: JsonObject) =>
    typeof v === 'function' ? (v as (a: JsonObject) => T | undefined)(a) : v;
  const gated = async (input: JsonObject, config: ToolRunnableConfig): Promise<unknown> => {
    const conversation = await conversationOf(options.conversation, { input, config });
    const id = toolCallIdOf(config.toolCall?.id);
    const { display, reason, annotations } = guardOptions(options);
    const request: ApprovalRequest = { toolName, arguments: input };
    if (id !== undefined) request.id = id;
    const d = pick(display, input);
    const r = pick(reason, input);
    if (d !== undefined) request.display = d;
    if (r !== undefined) request.reason = r;
    if (annotations !== undefined) request.annotations = annotations;
    const signal = config.signal;
    try {
      // It runs as soon as it is approved: claim it with the proposal (resumed, the proposal repeats and claims).
      const { outcome, handle } = await requestApproval(conversation, request, {
        claim: true,
        ...(signal ? { signal } : {}),
      });
      if (outcome.status !== 'approved') throw new ToolCallRejectedError(outcome.status, outcome.toolCall);
      // The original tool with the arguments to run, outside this tool call (its answer is our content).
      const { toolCall: _t, ...rest } = config;
      return await handle.run((approved) => tool.invoke(approved, rest as RunnableConfig), signal ? { signal } : {});
    } catch (e) {
      return refusalOrThrow(e, options.onRefusal);
    }
  };
  return makeTool(gated as never, {
    name: tool.name,
    description: tool.description,
    schema: tool.schema as never,
  }) as unknown as StructuredToolInterface;
}

/** A compiled graph, as far as resuming it goes. */
interface Resumable {
  invoke(input: unknown, config?: RunnableConfig): Promise<unknown>;
  getState(
    config: RunnableConfig,
  ): Promise<{ tasks: ReadonlyArray<{ interrupts?: ReadonlyArray<{ id?: string; value?: unknown }> }> }>;
}

/**
 * While the graph (thread `config`) is interrupted on Tollgate calls, waits for their decisions and resumes it.
 * Answers the graph's last result, or undefined when it was not interrupted on Tollgate. Calls a ToolNode runs in
 * parallel interrupt one per round, so this may resume several times.
 */
export async function resumeWhenDecided(
  graph: Resumable,
  config: RunnableConfig,
  o: { tollgate: Tollgate; signal?: AbortSignal },
): Promise<unknown> {
  let result: unknown;
  for (;;) {
    const state = await graph.getState(config);
    const waiting = state.tasks.flatMap((t) => t.interrupts ?? []).filter((i) => isTollgateInterrupt(i.value));
    if (waiting.length === 0) return result;
    const resume: Record<string, unknown> = {};
    for (const i of waiting) {
      const call = await o.tollgate.waitForDecision(
        (i.value as TollgateInterrupt).toolCallId,
        o.signal ? { signal: o.signal } : {},
      );
      resume[i.id ?? ''] = { toolCallId: call.id, status: call.status }; // informative only: the node asks Tollgate
    }
    result = await graph.invoke(new Command({ resume }), { ...config, ...(o.signal ? { signal: o.signal } : {}) });
  }
}
