import { EventStream, type WatchOptions } from './sse.js';
import { allPages, type DecisionChannel, type TollgateClient } from './client.js';
import type {
  Approval,
  ApprovalPage,
  DeadlineRequest,
  DecisionRequest,
  GrantScope,
  JsonObject,
  StepDecision,
  StepDecisionRequest,
  StepUpEvidence,
  StepUpOptions,
  StepUpRequest,
  ToolCall,
  ToolCallStatus,
  WebAuthnResponseJSON,
} from './types.js';

// The API's shape, named in types.ts from the generated schema; exported here too, as before.
export type { StepDecision } from './types.js';

export interface DecideOptions {
  decision: DecisionRequest['decision'];
  /** A rejection's reason is what the agent reads. */
  reason?: string;
  /** `approve` only: run these arguments instead of the proposed ones. */
  arguments?: JsonObject;
  /** `always_allow` only: where the standing grant applies (default conversation). */
  scope?: GrantScope;
  /** `always_allow` only: seconds the standing grant lives (at most 90 days); without it, until revoked. */
  expiresIn?: number;
  /** `always_allow` only: argument name → glob; the grant covers only calls whose arguments all match. */
  args?: { [name: string]: string };
  /**
   * A call whose rule says `stepUp: passkey` (`needsPasskey(call)`): `{ passkey }`, the browser's assertion
   * answering `stepUp(id, …)`'s options for the same arguments, as it is. Without a valid one, 403
   * step_up_required; made for another call or other arguments, 403 step_up_mismatch. A rejection needs none.
   */
  stepUp?: { passkey: WebAuthnResponseJSON };
  /** Recorded as `decision.by.via`; default the client's `channel`, else the server's `api`. */
  channel?: DecisionChannel;
  signal?: AbortSignal;
}

/**
 * An approver's view (`tollgate.inbox()`): the calls the caller may decide, decisions, and the tenant's live
 * events. Needs a person's token (no `agent` role).
 */
export class Inbox {
  constructor(private readonly tollgate: TollgateClient) {}

  /** One page of the calls the caller may decide, oldest first (`status` pending by default). */
  list(
    q: { status?: ToolCallStatus; cursor?: string; limit?: number } = {},
    o: { signal?: AbortSignal } = {},
  ): Promise<ApprovalPage> {
    return this.tollgate.request<ApprovalPage>('GET', '/v1/approvals', { query: q, signal: o.signal });
  }

  /** Every page of `list` (at most `max` items, 10,000 by default). */
  all(q: { status?: ToolCallStatus; max?: number } = {}, o: { signal?: AbortSignal } = {}): Promise<Approval[]> {
    return allPages((cursor) => this.list({ status: q.status ?? 'pending', limit: 1000, cursor }, o), q.max);
  }

  /**
   * Decides a pending call; answers it as it now stands. The first decision wins: a later one answers
   * `409 already_decided` (TollgateError, with the standing `decision`), unless it repeats that decision.
   */
  decide(id: string, d: DecideOptions): Promise<ToolCall> {
    const body: DecisionRequest = { decision: d.decision };
    if (d.reason !== undefined) body.reason = d.reason;
    if (d.arguments !== undefined) body.arguments = d.arguments;
    if (d.scope !== undefined) body.scope = d.scope;
    if (d.expiresIn !== undefined) body.expiresIn = d.expiresIn;
    if (d.args !== undefined) body.args = d.args;
    if (d.stepUp !== undefined) body.stepUp = d.stepUp as StepUpEvidence;
    return this.tollgate.request<ToolCall>('POST', `/v1/tool-calls/${encodeURIComponent(id)}/decision`, {
      body,
      signal: d.signal,
      headers: this.tollgate.channelHeader(d.channel),
    });
  }

  /**
   * The passkey challenge an approval of this call needs (its rule says `stepUp: passkey`), bound to the call and
   * the arguments approved: `arguments` the edited ones the approval will carry; absent, the call's own (or those a
   * quorum's first approval fixed). Give `publicKey` to the browser's WebAuthn (@simplewebauthn/browser
   * `startAuthentication({ optionsJSON: o.publicKey })`) and send what it returns as `decide`'s `stepUp.passkey`.
   * Answers once, within 5 minutes. 409 step_up_not_required for a call that asks no passkey, 409 no_passkey for a
   * person who has registered none, 409 already_decided for a call no longer pending.
   */
  stepUp(id: string, o: StepUpRequest & { signal?: AbortSignal } = {}): Promise<StepUpOptions> {
    const body: StepUpRequest = o.arguments !== undefined ? { arguments: o.arguments } : {};
    return this.tollgate.request<StepUpOptions>('POST', `/v1/tool-calls/${encodeURIComponent(id)}/step-up`, {
      body,
      signal: o.signal,
    });
  }

  /**
   * One decision for every pending call of a conversation's step (or the named ones): each is decided on its own,
   * with its own event; those the caller may not decide come back in `refused` with the code deciding them alone
   * would answer (`self_approval`, `forbidden`, `already_decided`…).
   */
  decideStep(
    conversationId: string,
    d: StepDecisionRequest & { channel?: DecisionChannel; signal?: AbortSignal },
  ): Promise<StepDecision> {
    const body: StepDecisionRequest = {
      decision: d.decision,
      ...(d.reason !== undefined ? { reason: d.reason } : {}),
      ...(d.toolCallIds ? { toolCallIds: d.toolCallIds } : {}),
    };
    return this.tollgate.request<StepDecision>(
      'POST',
      `/v1/conversations/${encodeURIComponent(conversationId)}/decisions`,
      {
        body,
        signal: d.signal,
        headers: this.tollgate.channelHeader(d.channel),
      },
    );
  }

  /** Admins: more time for a pending call, `extendBy` seconds or a new `expiresAt` (at most a day from now). */
  extendDeadline(
    id: string,
    d: DeadlineRequest & { channel?: DecisionChannel; signal?: AbortSignal },
  ): Promise<ToolCall> {
    const body: DeadlineRequest = {
      ...(d.extendBy !== undefined ? { extendBy: d.extendBy } : {}),
      ...(d.expiresAt !== undefined ? { expiresAt: d.expiresAt } : {}),
      ...(d.reason !== undefined ? { reason: d.reason } : {}),
    };
    return this.tollgate.request<ToolCall>('POST', `/v1/tool-calls/${encodeURIComponent(id)}/deadline`, {
      body,
      signal: d.signal,
      headers: this.tollgate.channelHeader(d.channel),
    });
  }

  approve(id: string, o: Omit<DecideOptions, 'decision' | 'scope' | 'expiresIn' | 'args'> = {}): Promise<ToolCall> {
    return this.decide(id, { ...o, decision: 'approve' });
  }

  reject(
    id: string,
    o: Omit<DecideOptions, 'decision' | 'scope' | 'arguments' | 'expiresIn' | 'args'> = {},
  ): Promise<ToolCall> {
    return this.decide(id, { ...o, decision: 'reject' });
  }

  /**
   * The live events the caller may see (GET /v1/events/stream) as an async iterable, reconnecting and resuming
   * with Last-Event-ID after a drop: `for await (const event of inbox.watch({ signal })) …`.
   */
  watch(o: WatchOptions = {}): EventStream {
    return new EventStream(this.tollgate.transport, o);
  }
}
