/**
 * LangChain 1 (`langchain`): `tollgateMiddleware({ conversation })` for `createAgent`, in the place of
 * `humanInTheLoopMiddleware`. Each tool call the model makes is proposed to Tollgate, and the tool runs only once
 * approved, with the approved (maybe edited) arguments, exactly once (Tollgate's claim), its result reported; a
 * refusal is the ToolMessage the model reads (who refused and why), and the tool never runs.
 *
 * LangChain's own decisions map onto Tollgate's: approve → approve; edit → approve with edited arguments;
 * reject with a message → reject with a reason. Its docs call that last one the person's "manual response
 * instead of executing the tool" (`respond`): Tollgate records who answered and the words, and the model reads
 * them. Tollgate has no separate `respond` decision.
 *
 * It gates in `wrapToolCall`, not `afterModel` as `humanInTheLoopMiddleware` does: the claim and the report must
 * surround the tool's run. While a person decides, the tool call waits (long-polling Tollgate) by default, so it
 * works with any agent, checkpointer or not. With `interrupt: true` the graph pauses instead, as LangChain's HITL
 * does (`__interrupt__`, needs a checkpointer), and `resumeWhenDecided(agent, config, { tollgate })` resumes it.
 * On resume the tool node runs again from its start: the proposal repeats, idempotent by the model's tool-call id,
 * and the decision is read from Tollgate, never from the resume value.
 */
import { createMiddleware, type ToolCallRequest } from 'langchain';
import { ToolMessage } from '@langchain/core/messages';
import type { ApprovalRequest, ToolCallHandle } from '../conversation.js';
import { ToolCallRejectedError } from '../errors.js';
import type { JsonObject, JsonValue } from '../types.js';
import { requestApproval } from './langgraph.js';
import {
  conversationOf,
  guardOptions,
  refusalOrThrow,
  toolCallIdOf,
  type ConversationSource,
  type GateOptions,
} from './shared.js';

export { isTollgateInterrupt, resumeWhenDecided, type TollgateInterrupt } from './langgraph.js';

export interface TollgateMiddlewareOptions extends GateOptions<JsonObject> {
  /** The conversation, or a function of the tool call's request (`toolCall`, `state`, `runtime`) returning it. */
  conversation: ConversationSource<ToolCallRequest>;
  /**
   * The names of the tools to gate. Default: every tool call, so a tool added later is not let through unseen;
   * Tollgate's policy lets the harmless ones through at once.
   */
  tools?: readonly string[];
  /**
   * Pause the graph (LangGraph's `interrupt()`, needs a checkpointer) while a person decides, instead of waiting
   * inside the tool call; resume with `resumeWhenDecided(agent, config, { tollgate })`. Default false.
   */
  interrupt?: boolean;
}

/**
 * The middleware for `createAgent({ model, tools, middleware: [tollgateMiddleware({ conversation })] })`.
 * The Tollgate tool-call id is the model's tool-call id, so a repeated step does not propose twice; the run's
 * abort signal ends the wait.
 */
export function tollgateMiddleware(options: TollgateMiddlewareOptions) {
  const gated = options.tools ? new Set(options.tools) : undefined;
  const pick = <T>(v: T | ((a: JsonObject) => T | undefined) | undefined, a: JsonObject) =>
    typeof v === 'function' ? (v as (a: JsonObject) => T | undefined)(a) : v;
  return createMiddleware({
    name: 'TollgateMiddleware',
    wrapToolCall: async (request, handler) => {
      const { toolCall } = request;
      if (gated && !gated.has(toolCall.name)) return handler(request);
      const args = argumentsOf(toolCall.args, toolCall.name);
      const conversation = await conversationOf(options.conversation, request as ToolCallRequest);
      const { display, reason, annotations } = guardOptions(options);
      const call: ApprovalRequest = { toolName: toolCall.name, arguments: args };
      const id = toolCallIdOf(toolCall.id);
      // Resumed, the tool node runs again from its start: without the model's id each run would propose anew.
      if (options.interrupt && id === undefined)
        throw new TypeError(
          `tollgateMiddleware({ interrupt: true }): the tool call ${toolCall.name} has no id, so a resumed run ` +
            'could not find it in Tollgate and would propose it again; use a model that gives its tool calls ids',
        );
      if (id !== undefined) call.id = id;
      const d = pick(display, args);
      const r = pick(reason, args);
      if (d !== undefined) call.display = d;
      if (r !== undefined) call.reason = r;
      if (annotations !== undefined) call.annotations = annotations;
      const signal = request.runtime.signal;
      const o = signal ? { signal } : {};
      try {
        // Claimed with the proposal when the policy approves at once: it runs right after.
        let handle: ToolCallHandle;
        if (options.interrupt) {
          const asked = await requestApproval(conversation, call, { claim: true, ...o });
          if (asked.outcome.status !== 'approved')
            throw new ToolCallRejectedError(asked.outcome.status, asked.outcome.toolCall);
          handle = asked.handle;
        } else {
          handle = await conversation.propose(call, { claim: true, ...o });
        }
        // The tool runs with the arguments Tollgate gives (an approver's edit), not the model's.
        return await handle.run((approved) => handler({ ...request, toolCall: { ...toolCall, args: approved } }), {
          ...o,
          output: outputOf,
        });
      } catch (e) {
        const content = refusalOrThrow(e, options.onRefusal);
        return new ToolMessage({
          content: typeof content === 'string' ? content : JSON.stringify(content),
          tool_call_id: toolCall.id ?? '',
          name: toolCall.name,
          status: 'error', // as LangChain's own HITL marks a rejected call
        });
      }
    },
  });
}

/** What is reported as the call's output: the ToolMessage's content (a Command reports none). */
function outputOf(result: unknown): JsonValue | undefined {
  if (!ToolMessage.isInstance(result)) return undefined;
  return result.content as JsonValue;
}

function argumentsOf(args: unknown, toolName: string): JsonObject {
  if (!args || typeof args !== 'object' || Array.isArray(args))
    throw new TypeError(`${toolName}: the model's arguments are not a JSON object`);
  return args as JsonObject;
}
