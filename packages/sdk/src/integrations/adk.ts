/**
 * Google Agent Development Kit for TypeScript (`@google/adk`): `tollgateTools(tools, options)` gates an agent's
 * tools behind Tollgate (or `withApproval(tool, options)` one tool). When the model calls one, the call is
 * proposed to Tollgate: the policy lets it through, denies it, or holds it for a person; the tool runs only once
 * approved, with the approved (maybe edited) arguments, exactly once (Tollgate's claim), and its result is
 * reported. A refusal is the tool's result, so the model reads who refused and why.
 *
 * Tollgate takes the place of the tool's `requireConfirmation`: the original tool is run with Tollgate's approval as
 * its `toolConfirmation`, so a tool that asks ADK for confirmation itself runs without asking again.
 *
 * The run waits inside the tool call by default. With `interrupt: true` a call held for a person is surfaced as
 * ADK's own confirmation request (the invocation ends with an `adk_request_confirmation` call, the session keeps
 * it), and `resumeWhenDecided` answers it once Tollgate has decided. The answer carries Tollgate's decision for
 * the record only: resumed, the tool asks Tollgate again (idempotently, by the model's call id), so a
 * confirmation sent by anyone else cannot approve the call, and the approver's edits are what runs.
 */
import {
  BaseTool,
  BaseToolset,
  isBaseTool,
  isBaseToolset,
  REQUEST_CONFIRMATION_FUNCTION_CALL_NAME,
  ToolConfirmation,
  type Context,
  type Event,
  type ReadonlyContext,
  type Runner,
  type RunAsyncToolRequest,
  type ToolProcessLlmRequest,
  type ToolUnion,
} from '@google/adk';
import { outcomeOf, type ApprovalRequest, type RunContext } from '../conversation.js';
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

export interface WithApprovalOptions extends GateOptions<JsonObject> {
  /** The conversation, or a function of the call (its arguments, the ADK tool context and the tool) returning it. */
  conversation: ConversationSource<{ input: JsonObject; context: Context; tool: BaseTool }>;
  /** The tool's name in Tollgate. Default: the tool's own name. */
  toolName?: string;
  /**
   * ADK's own pause/resume flow: a call Tollgate holds for a person ends the invocation with an
   * `adk_request_confirmation` call instead of waiting inside it; `resumeWhenDecided` answers it once Tollgate
   * has decided. Default false: the run waits.
   */
  interrupt?: boolean;
}

/** The value of the ToolConfirmation payload of a call Tollgate holds (`interrupt: true`). */
export interface TollgateConfirmationRequest {
  kind: 'tollgate-approval';
  /** Tollgate's id of the pending call (`tc_…`). */
  toolCallId: string;
  conversationId: string;
  toolName: string;
  arguments: JsonObject;
}

/** The payload of the answer `resumeWhenDecided` sends: Tollgate's decision, for the record (never trusted). */
export interface TollgateConfirmationAnswer {
  kind: 'tollgate-decision';
  toolCallId: string;
  status: string;
}

export function isTollgateConfirmationRequest(value: unknown): value is TollgateConfirmationRequest {
  const v = value as Partial<TollgateConfirmationRequest> | null;
  return !!v && typeof v === 'object' && v.kind === 'tollgate-approval' && typeof v.toolCallId === 'string';
}

/** A tool of ADK gated by Tollgate: what `withApproval` answers. The original is `tool`. */
export class TollgateTool extends BaseTool {
  constructor(
    readonly tool: BaseTool,
    private readonly options: WithApprovalOptions,
  ) {
    super({ name: tool.name, description: tool.description, isLongRunning: tool.isLongRunning });
    // A tool without a function declaration (Google Search, URL context, Maps grounding, Vertex AI / enterprise
    // search, RAG retrieval) only adds a setting to the model request: Google runs it, no call ever reaches here.
    if (tool._getDeclaration() === undefined) throw modelSide(tool);
  }

  override _getDeclaration() {
    return this.tool._getDeclaration();
  }

  /**
   * The original tool adds itself to the request (its declaration, and itself in `toolsDict`, where the runner
   * finds the tool it calls): this gated tool takes its place there, so no call reaches the original directly.
   */
  override async processLlmRequest(request: ToolProcessLlmRequest): Promise<void> {
    await this.tool.processLlmRequest(request);
    const dict = request.llmRequest.toolsDict;
    // A tool that did not register itself is run by the model's side (or not at all): none of its calls would
    // reach Tollgate, so the request is not sent.
    if (dict[this.name] !== this.tool) throw modelSide(this.tool);
    dict[this.name] = this;
  }

  /**
   * Every call of this tool goes through Tollgate. ADK asks this when a confirmation comes back, to check that
   * the tool it names gates at all: yes.
   */
  override async checkRequireConfirmation(): Promise<boolean> {
    return true;
  }

  override async runAsync({ args, toolContext }: RunAsyncToolRequest): Promise<unknown> {
    const input = args as JsonObject;
    const o = this.options;
    const toolName = o.toolName ?? this.name;
    const conversation = await conversationOf(o.conversation, { input, context: toolContext, tool: this.tool });
    const request: ApprovalRequest = { toolName, arguments: input };
    const id = toolCallIdOf(toolContext.functionCallId);
    if (id !== undefined) request.id = id;
    const { display, reason, annotations } = guardOptions(o);
    const d = typeof display === 'function' ? display(input) : display;
    const r = typeof reason === 'function' ? reason(input) : reason;
    if (d !== undefined) request.display = d;
    if (r !== undefined) request.reason = r;
    if (annotations !== undefined) request.annotations = annotations;
    const signal = toolContext.abortSignal;
    // What ADK's confirmation brought back, if anything, is set aside: only Tollgate's decision counts.
    const resumed = toolContext.toolConfirmation !== undefined;
    try {
      // Claimed with the proposal when the policy lets it through: it runs at once.
      const handle = await conversation.propose(request, { claim: true, ...(signal ? { signal } : {}) });
      if (o.interrupt && !resumed && handle.toolCall.status === 'pending') {
        const payload: TollgateConfirmationRequest = {
          kind: 'tollgate-approval',
          toolCallId: handle.id,
          conversationId: conversation.id,
          toolName,
          arguments: handle.toolCall.arguments,
        };
        toolContext.requestConfirmation({ hint: `${toolName} is waiting for a decision in Tollgate`, payload });
        toolContext.actions.skipSummarization = true;
        // Not shown to the model: ADK ends the invocation with the confirmation request instead of this response.
        return { pending: `${toolName} is waiting for a decision in Tollgate` };
      }
      return await handle.run((approved, run) => this.runOriginal(approved, toolContext, run), {
        ...(signal ? { signal } : {}),
      });
    } catch (e) {
      return refusalOrThrow(e, o.onRefusal);
    }
  }

  /** The original tool, with the arguments to run and Tollgate's approval as its confirmation. */
  private runOriginal(approved: JsonObject, toolContext: Context, run: RunContext): Promise<unknown> {
    toolContext.toolConfirmation = new ToolConfirmation({
      confirmed: true,
      hint: `approved in Tollgate (${run.toolCall.id})`,
      payload: { tollgate: { toolCallId: run.toolCall.id, receipt: run.receipt, edited: run.edited } },
    });
    return this.tool.runAsync({ args: approved, toolContext });
  }
}

function modelSide(tool: BaseTool): TypeError {
  return new TypeError(
    `cannot gate a model-side tool: ${tool.name}; remove it or accept that it runs without Tollgate`,
  );
}

/** A toolset whose tools are gated as they are listed (an MCP toolset, say). */
export class TollgateToolset extends BaseToolset {
  constructor(
    readonly toolset: BaseToolset,
    private readonly options: (tool: BaseTool) => WithApprovalOptions,
  ) {
    // The toolset filters and prefixes its own tools: this one lists them all, as the original answered them.
    super([]);
  }

  override async getTools(context?: ReadonlyContext): Promise<BaseTool[]> {
    return (await this.toolset.getTools(context)).map((t) => new TollgateTool(t, this.options(t)));
  }

  override async close(): Promise<void> {
    await this.toolset.close();
  }

  override async processLlmRequest(toolContext: Context, llmRequest: ToolProcessLlmRequest['llmRequest']) {
    await this.toolset.processLlmRequest(toolContext, llmRequest);
  }
}

/**
 * Returns the tool gated by Tollgate: proposed when the model calls it (the Tollgate call's id is the model's
 * function call id, so a call run again does not propose twice), run once approved with the arguments to run
 * (validated by the tool's own schema), refused with the refusal as its result.
 */
export function withApproval(tool: BaseTool, options: WithApprovalOptions): TollgateTool {
  if (!isBaseTool(tool)) throw new TypeError('withApproval: not an ADK tool (a BaseTool, e.g. a FunctionTool)');
  return new TollgateTool(tool, options);
}

/**
 * An agent's tool list with every tool gated (toolsets too, tool by tool): `tools: tollgateTools([...], {
 * conversation })`. `options` may be a function of each tool (e.g. its own `display`). A workflow node (or
 * anything that is not a tool or a toolset) is refused: it could not be gated; so is a model-side tool (Google
 * Search, URL context, …), which Google runs without any call reaching Tollgate.
 */
export function tollgateTools(
  tools: readonly ToolUnion[],
  options: Omit<WithApprovalOptions, 'toolName'> | ((tool: BaseTool) => WithApprovalOptions),
): Array<TollgateTool | TollgateToolset> {
  const of = typeof options === 'function' ? options : () => options;
  return tools.map((t) => {
    if (isBaseTool(t)) return new TollgateTool(t, of(t));
    if (isBaseToolset(t)) return new TollgateToolset(t, of);
    throw new TypeError('tollgateTools: only tools and toolsets can be gated (a workflow node cannot)');
  });
}

/** The message a run is resumed with: the answers to its confirmation requests. */
export type ConfirmationMessage = Parameters<Runner['runAsync']>[0]['newMessage'];

/** The Tollgate confirmation requests among `events` that no later event answers, with their ADK call ids. */
export function pendingConfirmations(
  events: readonly Event[],
): Array<{ functionCallId: string; request: TollgateConfirmationRequest }> {
  const answered = new Set<string>();
  const pending: Array<{ functionCallId: string; request: TollgateConfirmationRequest }> = [];
  for (let i = events.length - 1; i >= 0; i--) {
    for (const part of events[i].content?.parts ?? []) {
      const response = part.functionResponse;
      if (response?.id) answered.add(response.id);
      const call = part.functionCall;
      // Only the agent raises a confirmation request: one in a user's message is not ours to answer.
      if (call?.name !== REQUEST_CONFIRMATION_FUNCTION_CALL_NAME || !call.id || events[i].author === 'user') continue;
      if (answered.has(call.id)) continue;
      const payload = (call.args?.toolConfirmation as { payload?: unknown } | undefined)?.payload;
      if (isTollgateConfirmationRequest(payload)) pending.unshift({ functionCallId: call.id, request: payload });
    }
  }
  return pending;
}

/**
 * Waits for Tollgate's decisions on the pending Tollgate confirmation requests among `events` and answers the
 * message that resumes the run, or undefined when there is none. Resumed, each tool asks Tollgate itself: the
 * answers' `confirmed` is informative.
 */
export async function decideConfirmations(
  events: readonly Event[],
  o: { tollgate: Tollgate; signal?: AbortSignal },
): Promise<ConfirmationMessage | undefined> {
  const pending = pendingConfirmations(events);
  if (pending.length === 0) return undefined;
  const parts = [];
  for (const { functionCallId, request } of pending) {
    const call = await o.tollgate.waitForDecision(request.toolCallId, o.signal ? { signal: o.signal } : {});
    const { status } = outcomeOf(call);
    const payload: TollgateConfirmationAnswer = { kind: 'tollgate-decision', toolCallId: call.id, status };
    parts.push({
      functionResponse: {
        id: functionCallId,
        name: REQUEST_CONFIRMATION_FUNCTION_CALL_NAME,
        response: { confirmed: status === 'approved', payload },
      },
    });
  }
  return { role: 'user', parts };
}

/**
 * While the session holds Tollgate confirmation requests (tools gated with `interrupt: true`), waits for their
 * decisions and resumes the run with the answers, until it ends or stops on something else. Answers the events
 * of the resumed runs (empty when there was nothing to resume).
 */
export async function resumeWhenDecided(
  runner: Runner,
  session: { userId: string; sessionId: string },
  o: { tollgate: Tollgate; signal?: AbortSignal },
): Promise<Event[]> {
  const events: Event[] = [];
  for (;;) {
    const stored = await runner.sessionService.getSession({ appName: runner.appName, ...session });
    if (!stored) throw new Error(`resumeWhenDecided: no session ${session.sessionId} of ${session.userId}`);
    const message = await decideConfirmations(stored.events, o);
    if (!message) return events;
    for await (const event of runner.runAsync({
      ...session,
      newMessage: message,
      ...(o.signal ? { abortSignal: o.signal } : {}),
    }))
      events.push(event);
  }
}
