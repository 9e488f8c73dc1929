import type { ActorRef, Channel, Problem, ToolCall } from './types.js';

/**
 * The server refused a request, or could not be reached. Carries the RFC 9457 problem the server answered
 * (`status`, the stable `code`, `detail`, and the problem's extension members such as `pendingToolCallIds` or
 * `decision`), or, for a network failure, `status` 0 and the code `network_error`.
 */
export class TollgateError extends Error {
  override readonly name: string = 'TollgateError';
  /** The HTTP status; 0 when no answer came (network_error). */
  readonly status: number;
  /** Stable and machine-readable: `not_found`, `conversation_blocked`, `already_decided`, … or `network_error`. */
  readonly code: string;
  readonly detail: string;
  /** The whole problem document, extension members included. */
  readonly problem: Problem;
  /** The server's `X-Request-Id` of the refused request, to find it in the server's logs. */
  readonly requestId?: string;

  constructor(problem: Problem, opts: { requestId?: string; cause?: unknown } = {}) {
    super(`${problem.code}: ${problem.detail}`, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.status = problem.status;
    this.code = problem.code;
    this.detail = problem.detail;
    this.problem = problem;
    if (opts.requestId !== undefined) this.requestId = opts.requestId;
  }

  /** A member of the problem beyond the standard ones (`pendingToolCallIds`, `toolCallStatus`, `retryAfter`, …). */
  get extensions(): Record<string, unknown> {
    const { type: _t, title: _ti, status: _s, detail: _d, code: _c, ...rest } = this.problem;
    return rest;
  }
}

/** How a tool call ended without running. `denied` is the policy's refusal; `rejected` a person's. */
export type RefusalStatus = 'rejected' | 'denied' | 'expired' | 'cancelled';

/**
 * A guarded tool call did not run: a person rejected it, the policy denied it, nobody decided in time, or a halt
 * cancelled it. `reason` is the decider's own words (what the model may be told), `decidedBy` and `via` who
 * and through which channel.
 */
export class ToolCallRejectedError extends Error {
  override readonly name: string = 'ToolCallRejectedError';
  readonly status: RefusalStatus;
  readonly reason?: string;
  /**
   * A person's answer instead of the tool running (decision `respond`): what the model is told as the tool's answer
   * (integrations' default refusal text).
   */
  readonly response?: string;
  readonly decidedBy?: ActorRef;
  readonly via?: Channel;
  readonly toolCall: ToolCall;

  constructor(status: RefusalStatus, toolCall: ToolCall) {
    const by = status === 'cancelled' ? (toolCall.cancellation?.by ?? toolCall.decision?.by) : toolCall.decision?.by;
    const reason =
      status === 'cancelled'
        ? (toolCall.cancellation?.reason ?? toolCall.decision?.reason)
        : status === 'denied'
          ? (toolCall.decision?.reason ?? toolCall.policy.reason)
          : toolCall.decision?.reason;
    const response =
      status === 'rejected' ? (toolCall.decision as { response?: string } | undefined)?.response : undefined;
    super(
      response !== undefined
        ? `${toolCall.toolName} did not run; ${by?.name ?? by?.id ?? 'a person'} answered instead: ${response}`
        : describeRefusal(status, toolCall.toolName, by, reason),
    );
    this.status = status;
    if (response !== undefined) this.response = response;
    if (reason !== undefined) this.reason = reason;
    if (by !== undefined) {
      this.decidedBy = by;
      this.via = by.via;
    }
    this.toolCall = toolCall;
  }
}

/** "delete_source was rejected by Ann via web: not today", "… was denied by the policy: Denied by policy rule 1 (…)". */
function describeRefusal(
  status: RefusalStatus,
  toolName: string,
  by: ActorRef | undefined,
  reason: string | undefined,
): string {
  const who =
    status === 'denied'
      ? ' by the policy'
      : status === 'expired'
        ? ' (nobody decided in time)'
        : by && by.via !== 'system'
          ? ` by ${by.name ?? by.id} via ${by.via}`
          : '';
  return `${toolName} was ${status}${who}${reason ? `: ${reason}` : ''}`;
}
