import { TollgateError, ToolCallRejectedError } from './errors.js';
import { abortReason } from './http.js';
import { ID_PATTERN, newId, toolCallKey } from './ids.js';
import { Questions, type AskOptions, type QuestionOutcome } from './questions.js';
import { anySignal, anySignalOfAll, throwIfAborted } from './signals.js';
import type { ReportMode, TollgateClient } from './client.js';
import type {
  Conversation,
  Display,
  ExecutionClaim,
  JsonObject,
  JsonValue,
  Proposal,
  ProposedToolCall,
  ToolAnnotations,
  ToolCall,
  ToolCallDecision,
} from './types.js';

/** How a request for approval ended. `denied`: the policy refused it; `rejected`: a person did. */
export type ApprovalStatus = 'approved' | 'rejected' | 'expired' | 'cancelled' | 'denied';

export interface ApprovalOutcome {
  status: ApprovalStatus;
  /** The call as it stands. */
  toolCall: ToolCall;
  /** The arguments to run: an approver's edit when there was one, else the proposed ones. */
  arguments: JsonObject;
  decision?: ToolCallDecision;
}

/**
 * A call to propose. `id` is the framework's own tool-call id, the idempotency key: proposing it again with the
 * same tool and arguments answers the same call. Left out, the SDK makes one before the first attempt.
 * Any id is accepted: one the API would refuse is replaced by its SHA-256 (`x_<hex>`), the same every time.
 */
export type ApprovalRequest = ProposedToolCall;

export interface ProposeOptions {
  signal?: AbortSignal;
  /**
   * While the conversation holds a pending call from an earlier step, a new proposal is refused
   * (`conversation_blocked`). `wait` (the default) waits for those calls to be decided, then proposes;
   * `throw` throws the TollgateError.
   */
  onBlocked?: 'wait' | 'throw';
  /**
   * Claim the run at once when the policy approves the call on the spot: the proposal's answer then holds the
   * claim, and `run` starts without another request (one round trip for an auto-approved call). Only when you
   * will run it: a claimed call that is never reported stays `executed`. Default false; `guard` sets it.
   */
  claim?: boolean;
}

/** What a guarded function is given besides its arguments. */
export interface RunContext {
  /** The signed receipt of this run, for the tool's backend to check (`verifyReceipt`). */
  receipt: string;
  /** The call, now `executed`. */
  toolCall: ToolCall;
  /** True when an approver edited the arguments (the function gets the edited ones). */
  edited: boolean;
  /** Aborts when the caller's signal does. */
  signal?: AbortSignal;
}

export interface RunOptions<R> {
  signal?: AbortSignal;
  /** What is reported as the call's `output` (at most 64 KiB of JSON). Default: the result itself when it is JSON of that size. */
  output?: (result: R) => JsonValue | undefined;
  /** How the result is reported: see `TollgateOptions.report`. Default: the client's, else `background`. */
  report?: ReportMode;
}

export interface GuardOptions<A extends JsonObject, R> extends RunOptions<R>, Pick<ProposeOptions, 'onBlocked'> {
  /** What people are shown, from the arguments. */
  display?: Display | ((args: A) => Display | undefined);
  /** Why the agent wants it, shown to people. */
  reason?: string | ((args: A) => string | undefined);
  /** The tool's flags, counted only for a tool that is not registered. */
  annotations?: ToolAnnotations;
  confidence?: number | ((args: A) => number | undefined);
  estimatedCost?: number | ((args: A) => number | undefined);
}

/** Per call of a guarded function: the framework's tool-call id (idempotency), a signal, and overrides. */
export interface GuardCallOptions {
  id?: string;
  signal?: AbortSignal;
  reason?: string;
  display?: Display;
  confidence?: number;
  estimatedCost?: number;
}

/** A function that runs only once Tollgate approves it, with the approved (maybe edited) arguments. */
export type GuardedTool<A extends JsonObject, R> = (args: A, call?: GuardCallOptions) => Promise<R>;

const MAX_OUTPUT_BYTES = 64 * 1024;

/**
 * Runs `f` once the current turn is done: setImmediate in Node (a zero timeout waits at least 1 ms there),
 * a zero timeout in browsers.
 */
function soon(f: () => void): void {
  if (typeof setImmediate === 'function') setImmediate(f);
  else setTimeout(f, 0);
}
const MAX_ERROR_CHARS = 16_000;

/**
 * A conversation of an agent (`tollgate.conversation(...)`): propose calls, wait for decisions, and run what
 * is approved. Single proposals made in the same turn of the event loop (parallel guarded calls of one model
 * step) go to the server as one step, so people see and decide them together.
 */
export class TollgateConversation<C extends TollgateClient = TollgateClient> {
  private queue: Queued[] = [];
  private flushing = false;
  /** Background reports waiting a turn for this conversation's next proposal, to go with it (`results`). */
  private carried: Carried[] = [];
  /** Proposals preparing their ids: carried reports wait for them. */
  private preparing = 0;
  /** False once the server refused `results` as an unknown field (a server older than 0.6). */
  private carriesResults = true;
  /** False once the server refused `claim` as an unknown field (older than 0.6): the run is claimed on its own route. */
  private claimsWithProposal = true;

  constructor(
    /** The client that started it: a `Tollgate` when `tollgate.conversation()` made it. */
    readonly tollgate: C,
    private view: Conversation,
  ) {}

  get id(): string {
    return this.view.id;
  }

  /** The conversation as last answered by the server. */
  get conversation(): Conversation {
    return this.view;
  }

  /** Reads the conversation again, with all its calls. */
  async refresh(o: { signal?: AbortSignal } = {}): Promise<Conversation> {
    this.view = await this.tollgate.getConversation(this.id, o);
    return this.view;
  }

  /**
   * Asks a person a question in this conversation and waits for the answer: free text, or one of `choices`.
   * Resolves `{ status: 'answered', answer, by }`, or `expired` / `cancelled` (a halt); never throws for those.
   * Waits like `requestApproval`: long-polling, riding out network errors and restarts, honouring `signal`.
   */
  ask(text: string, o: AskOptions = {}): Promise<QuestionOutcome> {
    return new Questions(this.tollgate).askAndWait(this.id, text, o);
  }

  /**
   * @internal A background report of one of this conversation's calls. It waits one turn: a proposal made in
   * that turn (an agent's next call, back to back) takes it along, one request and one commit for both;
   * otherwise it is sent alone. Resolves once it landed or was handed to `onReportError`; never rejects.
   */
  carry(report: Omit<Carried, 'done'>): Promise<void> {
    return new Promise<void>((done) => {
      this.carried.push({ ...report, done });
      soon(() => this.releaseUnlessAProposalFollows());
    });
  }

  /**
   * Carried reports go alone unless a proposal is on its way to take them: one queued in this turn, or one still
   * preparing its ids (it checks again when it is done).
   */
  private releaseUnlessAProposalFollows(): void {
    if (this.queue.length === 0 && this.preparing === 0) this.release(this.carried.splice(0), false);
  }

  /** Sends carried reports alone (a proposal did not take them, or its request failed). */
  private release(items: Carried[], sentBefore: boolean): void {
    for (const c of items) void c.alone(sentBefore).then(c.done);
  }

  /** Proposes one call and waits for its decision. Never throws for a refusal: see `status`. */
  async requestApproval(call: ApprovalRequest, o: ProposeOptions = {}): Promise<ApprovalOutcome> {
    // It runs nothing, so it claims nothing.
    const handle = await this.propose(call, { ...o, claim: false });
    return handle.wait(o);
  }

  /** Proposes one call (joining others proposed in the same turn into one step). */
  async propose(call: ApprovalRequest, o: ProposeOptions = {}): Promise<ToolCallHandle> {
    const prepared = await this.preparingFor(() => this.prepare(call));
    throwIfAborted(o.signal);
    return new Promise<ToolCallHandle>((resolve, reject) => {
      // The caller's signal ends its wait at once, whatever the step it joined is doing.
      const onAbort = () => reject(abortReason(o.signal!));
      o.signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => o.signal?.removeEventListener('abort', onAbort);
      this.queue.push({
        call: prepared,
        resolve: (h) => (done(), resolve(h)),
        reject: (e) => (done(), reject(e)),
        o,
      });
      if (!this.flushing) {
        this.flushing = true;
        soon(() => void this.flush());
      }
    });
  }

  /** Proposes several calls as one step (1 to 64) and answers one handle per call, in order. */
  async proposeStep(calls: ApprovalRequest[], o: ProposeOptions = {}): Promise<ToolCallHandle[]> {
    const prepared = await this.preparingFor(() => Promise.all(calls.map((c) => this.prepare(c))));
    const proposal = await this.send(prepared, o);
    return handles(this.tollgate, proposal, this);
  }

  /**
   * Wraps `fn` so that each call is proposed, waits for a decision, claims the run, runs `fn` with the approved
   * (maybe edited) arguments and the receipt, reports the result and returns it. A refusal throws
   * ToolCallRejectedError; an error of `fn` is reported as `failed` and thrown again.
   */
  guard<A extends JsonObject, R>(
    toolName: string,
    fn: (args: A, context: RunContext) => R | Promise<R>,
    options: GuardOptions<A, R> = {},
  ): GuardedTool<A, R> {
    const pick = <T>(v: T | ((args: A) => T | undefined) | undefined, args: A): T | undefined =>
      typeof v === 'function' ? (v as (args: A) => T | undefined)(args) : v;
    return async (args: A, call: GuardCallOptions = {}): Promise<R> => {
      const { signal, dispose } = anySignal([options.signal, call.signal]);
      try {
        const request: ApprovalRequest = { toolName, arguments: args };
        if (call.id !== undefined) request.id = call.id;
        const reason = call.reason ?? pick(options.reason, args);
        const display = call.display ?? pick(options.display, args);
        const confidence = call.confidence ?? pick(options.confidence, args);
        const estimatedCost = call.estimatedCost ?? pick(options.estimatedCost, args);
        if (reason !== undefined) request.reason = reason;
        if (display !== undefined) request.display = display;
        if (confidence !== undefined) request.confidence = confidence;
        if (estimatedCost !== undefined) request.estimatedCost = estimatedCost;
        if (options.annotations) request.annotations = options.annotations;
        const handle = await this.propose(request, { signal, onBlocked: options.onBlocked, claim: true });
        return await handle.run((approved, ctx) => fn(approved as A, ctx), {
          signal,
          output: options.output,
          ...(options.report ? { report: options.report } : {}),
        });
      } finally {
        dispose();
      }
    };
  }

  /**
   * Runs a proposal's preparation (a framework's id is hashed, which takes more than a turn), during which carried
   * reports wait for it; if it fails, or nothing is queued after it, they go alone.
   */
  private async preparingFor<T>(prepare: () => Promise<T>): Promise<T> {
    this.preparing += 1;
    try {
      return await prepare();
    } finally {
      this.preparing -= 1;
      // What it queues (or `proposeStep` sends) takes them first, in this turn's microtasks; else they go alone.
      soon(() => this.releaseUnlessAProposalFollows());
    }
  }

  private async prepare(call: ApprovalRequest): Promise<ProposedToolCall> {
    if (!call || typeof call.toolName !== 'string') throw new TypeError('a proposal needs a toolName');
    if (!call.arguments || typeof call.arguments !== 'object' || Array.isArray(call.arguments))
      throw new TypeError('a proposal needs arguments: a JSON object');
    const id = call.id === undefined ? newId('call') : ID_PATTERN.test(call.id) ? call.id : await toolCallKey(call.id);
    return { ...call, id };
  }

  /**
   * Sends the proposals queued in this turn as one step. Blocked by an earlier step, those that asked to throw
   * get the problem and the others wait and go again together; refused as a whole for any other reason, each
   * is proposed alone and meets its own answer.
   */
  private async flush(): Promise<void> {
    try {
      await this.flushQueued();
    } finally {
      // Reports left for a proposal that did not go (its callers gave up): sent alone.
      this.releaseUnlessAProposalFollows();
    }
  }

  private async flushQueued(): Promise<void> {
    let batch = this.queue.splice(0);
    this.flushing = false;
    for (;;) {
      batch = batch.filter((b) => {
        if (!b.o.signal?.aborted) return true;
        b.reject(abortReason(b.o.signal));
        return false;
      });
      if (batch.length === 0) return;
      if (batch.length === 1) return this.settle(batch[0]);
      // One key for the step and for its calls sent again alone below: a claim the step made is answered to them.
      const claimKey = newId('claim');
      try {
        // The step claims what the policy lets through only when every caller in it will run its call.
        const proposal = await this.send(
          batch.map((b) => b.call),
          { onBlocked: 'throw', claim: batch.every((b) => b.o.claim === true) },
          claimKey,
        );
        const made = handles(this.tollgate, proposal, this);
        batch.forEach((b, i) => {
          // A caller that gave up meanwhile was rejected already: a claim made for it is given up too.
          if (b.o.signal?.aborted) made[i].giveUp();
          else b.resolve(made[i]);
        });
        return;
      } catch (e) {
        if (
          e instanceof TollgateError &&
          e.code === 'conversation_blocked' &&
          Array.isArray(e.problem.pendingToolCallIds) &&
          e.problem.pendingToolCallIds.length > 0
        ) {
          for (const b of batch) if (b.o.onBlocked === 'throw') b.reject(e);
          batch = batch.filter((b) => b.o.onBlocked !== 'throw');
          if (batch.length === 0) return;
          const signals = anySignalOfAll(batch.map((b) => b.o.signal));
          try {
            await Promise.all(
              e.problem.pendingToolCallIds.map((id) => this.tollgate.waitForDecision(id, { signal: signals.signal })),
            );
          } catch {
            // Every caller gave up (aborted): each was rejected by its own signal already.
          } finally {
            signals.dispose();
          }
          continue;
        }
        // One bad call (a 400, an idempotency mismatch) must not sink its siblings. Repeating the ones that
        // may have landed is safe: their ids make them idempotent.
        await Promise.all(batch.map((b) => this.settle(b, claimKey)));
        return;
      }
    }
  }

  private async settle(b: Queued, claimKey?: string): Promise<void> {
    try {
      const proposal = await this.send([b.call], b.o, claimKey);
      b.resolve(handles(this.tollgate, proposal, this)[0]);
    } catch (e) {
      b.reject(e);
    }
  }

  private async send(calls: ProposedToolCall[], o: ProposeOptions, claimKey = newId('claim')): Promise<Proposal> {
    let carrying = this.carriesResults;
    for (;;) {
      // The key makes the claim idempotent too: a retry after a lost answer is answered the same claims.
      const claiming = o.claim && this.claimsWithProposal ? { claim: true, claimKey } : {};
      // Background reports waiting for this proposal go with it, recorded first in the same transaction.
      const carried = carrying ? this.carried.splice(0, MAX_CARRIED) : [];
      const results = carried.length
        ? { results: carried.map((c) => ({ toolCallId: c.toolCallId, ...c.result })) }
        : {};
      let proposal: Proposal;
      try {
        proposal = await this.tollgate.request<Proposal>(
          'POST',
          `/v1/conversations/${encodeURIComponent(this.id)}/tool-calls`,
          // A proposal that claims is not cut short: the server may have claimed already, and that must be known.
          { body: { toolCalls: calls, ...claiming, ...results }, signal: o.claim ? undefined : o.signal },
        );
      } catch (e) {
        if (
          e instanceof TollgateError &&
          'claim' in claiming &&
          /(^|; )claim(Key)?: unknown field "claim(Key)?"/.test(e.detail)
        ) {
          // A server older than 0.6 claims only on its own route: propose alone, and `run` claims after.
          this.claimsWithProposal = false;
          this.release(carried, false);
          continue;
        }
        if (carried.length > 0) {
          // Refused (4xx, or a halt), nothing of the request was written; otherwise its answer may have been lost.
          const refused = e instanceof TollgateError && ((e.status >= 400 && e.status < 500) || e.code === 'halted');
          this.release(carried, !refused);
          // Refused for a result (or by a server that takes none with a proposal): the proposal goes again alone.
          if (refused && e.code !== 'conversation_blocked' && e.code !== 'halted') {
            carrying = false;
            if (/(^|; )results: unknown field "results"/.test(e.detail)) this.carriesResults = false;
            continue;
          }
        }
        if (!(e instanceof TollgateError) || e.code !== 'conversation_blocked' || o.onBlocked === 'throw') throw e;
        const blocking = Array.isArray(e.problem.pendingToolCallIds) ? e.problem.pendingToolCallIds : [];
        if (blocking.length === 0) throw e;
        // Wait for the earlier step's calls to be decided (or to expire), then propose again.
        await Promise.all(blocking.map((id) => this.tollgate.waitForDecision(id, { signal: o.signal })));
        continue;
      }
      for (const c of carried) c.done();
      this.view = { ...this.view, ...proposal.conversation };
      if (o.claim && o.signal?.aborted) {
        handles(this.tollgate, proposal, this).forEach((h) => h.giveUp());
        throw abortReason(o.signal);
      }
      return proposal;
    }
  }
}

/** At most this many results go with one proposal (the server's bound). */
const MAX_CARRIED = 64;

interface Carried {
  toolCallId: string;
  result: ReportBody;
  /** Sends it alone, as a report in the background is sent (never rejects). */
  alone(sentBefore: boolean): Promise<void>;
  done(): void;
}

type ReportBody =
  { outcome: 'succeeded'; output?: JsonValue } | { outcome: 'failed'; error?: string; output?: JsonValue };

interface Queued {
  call: ProposedToolCall;
  resolve(h: ToolCallHandle): void;
  reject(e: unknown): void;
  o: ProposeOptions;
}

/** A handle per call of the proposal, holding the claim the proposal made of it, if any. */
function handles(tollgate: TollgateClient, proposal: Proposal, conversation: TollgateConversation): ToolCallHandle[] {
  const claims = new Map((proposal.claims ?? []).map((k) => [k.toolCallId, k]));
  return proposal.toolCalls.map((tc) => {
    const k = claims.get(tc.id);
    return new ToolCallHandle(
      tollgate,
      tc,
      k && { toolCall: tc, arguments: k.arguments, receipt: k.receipt },
      conversation,
    );
  });
}

/** One proposed call: wait for its decision, claim it, run it, report. */
export class ToolCallHandle {
  constructor(
    private readonly tollgate: TollgateClient,
    private call: ToolCall,
    /** The claim its proposal made (`claim: true`), not yet used by `run`. */
    private claimed?: ExecutionClaim,
    /** Its conversation, whose next proposal may carry this call's background report. */
    private readonly conversation?: TollgateConversation,
  ) {}

  /** The server's id (`tc_…`). */
  get id(): string {
    return this.call.id;
  }

  /** The call as last seen. */
  get toolCall(): ToolCall {
    return this.call;
  }

  /** Waits (long-polling) until the call is decided, expired or cancelled. Never throws for a refusal. */
  async wait(o: { signal?: AbortSignal } = {}): Promise<ApprovalOutcome> {
    this.call = await this.tollgate.waitForDecision(this.call, o);
    return outcomeOf(this.call);
  }

  /** Claims the run (exactly once): the arguments to run and the receipt; the proposal's claim when it made one. */
  async claim(o: { signal?: AbortSignal } = {}): Promise<ExecutionClaim> {
    const made = this.claimed;
    this.claimed = undefined;
    if (made) return made;
    const claim = await this.tollgate.claimExecution(this.call.id, o);
    this.call = claim.toolCall;
    return claim;
  }

  async report(result: ReportBody, o: { signal?: AbortSignal } = {}): Promise<ToolCall> {
    return this.reportOnce(result, o);
  }

  private async reportOnce(result: ReportBody, o: { signal?: AbortSignal; sentBefore?: boolean }): Promise<ToolCall> {
    this.call = await this.tollgate.reportResult(this.call.id, result, o);
    return this.call;
  }

  /**
   * Waits for the decision; approved, claims the run, calls `fn` with the arguments to run and the receipt,
   * reports its result and returns it. Refused, throws ToolCallRejectedError. When `fn` throws, the call is
   * reported `failed` with the error's message and the error is thrown again.
   */
  async run<R>(fn: (args: JsonObject, context: RunContext) => R | Promise<R>, o: RunOptions<R> = {}): Promise<R> {
    // Claimed with the proposal: nothing to wait for, nothing more to ask.
    const claim = this.claimed ? await this.claim(o) : await this.waitAndClaim(o);
    const edited = claim.toolCall.decision?.editedArguments !== undefined;
    const background = (o.report ?? this.tollgate.options.report ?? 'background') === 'background';
    const report = (r: ReportBody) => {
      const send = (sentBefore = false) =>
        this.reportOnce(r, { sentBefore }).then(
          () => undefined,
          (e) => this.reportFailed(e),
        );
      if (!background) return send();
      // In the background the report waits a turn for the agent's next proposal in this conversation and goes
      // with it (alone, it would meet that proposal in the conversation's queue on the server: two commits).
      const sent = this.conversation
        ? this.conversation.carry({ toolCallId: this.call.id, result: r, alone: send })
        : send();
      return this.tollgate.inBackground(sent);
    };
    let result: R;
    try {
      result = await fn(claim.arguments, {
        receipt: claim.receipt,
        toolCall: claim.toolCall,
        edited,
        ...(o.signal ? { signal: o.signal } : {}),
      });
    } catch (error) {
      await report({ outcome: 'failed', error: messageOf(error) });
      throw error;
    }
    const output = o.output ? o.output(result) : result;
    const json = jsonOutput(output);
    await report(json === undefined ? { outcome: 'succeeded' } : { outcome: 'succeeded', output: json });
    return result;
  }

  private async waitAndClaim(o: { signal?: AbortSignal }): Promise<ExecutionClaim> {
    const outcome = await this.wait(o);
    if (outcome.status !== 'approved') throw new ToolCallRejectedError(outcome.status, outcome.toolCall);
    try {
      return await this.claim(o);
    } catch (e) {
      // A halt between the approval and the claim cancels the call: that is a refusal, not a failure.
      if (e instanceof TollgateError && (e.code === 'halted' || e.code === 'not_approved')) {
        const now = await this.tollgate.getToolCall(this.call.id, o).catch(() => undefined);
        if (now) this.call = now;
        if (now?.status === 'cancelled') throw new ToolCallRejectedError('cancelled', now);
      }
      throw e;
    }
  }

  /**
   * @internal A claim its caller will not run (it gave up while the proposal that made it was under way): the
   * call is reported `failed` in the background, so the trail says it never ran instead of leaving it `executed`.
   */
  giveUp(): void {
    const made = this.claimed;
    this.claimed = undefined;
    if (!made) return;
    const sent = this.report({ outcome: 'failed', error: 'the caller gave up before it ran (aborted)' }).then(
      () => undefined,
      (e) => this.reportFailed(e),
    );
    void this.tollgate.inBackground(sent);
  }

  private reportFailed(e: unknown): void {
    const hook = this.tollgate.options.onReportError;
    try {
      if (hook) return hook(e, this.call);
    } catch (thrown) {
      e = thrown; // a hook that throws must not sink the report's promise (and flush() with it)
    }
    console.warn(
      `tollgate: the result of ${this.call.toolName} (${this.call.id}) could not be reported: ${messageOf(e)}`,
    );
  }
}

/** The approval outcome of a call that is no longer pending. */
export function outcomeOf(call: ToolCall): ApprovalOutcome {
  const decision = call.decision;
  const base = { toolCall: call, ...(decision ? { decision } : {}) };
  switch (call.status) {
    case 'approved':
    case 'executed':
    case 'completed':
      return { status: 'approved', arguments: decision?.editedArguments ?? call.arguments, ...base };
    case 'rejected':
      return { status: decision?.by.via === 'policy' ? 'denied' : 'rejected', arguments: call.arguments, ...base };
    case 'expired':
    case 'cancelled':
      return { status: call.status, arguments: call.arguments, ...base };
    default:
      throw new TollgateError({
        type: 'urn:tollgate:problem:still_pending',
        title: 'Still pending',
        status: 0,
        detail: `tool call ${call.id} is still pending`,
        code: 'still_pending',
      });
  }
}

function messageOf(e: unknown): string {
  const text =
    e instanceof Error
      ? e.message || e.name
      : typeof e === 'string'
        ? e
        : (() => {
            try {
              return JSON.stringify(e) ?? String(e);
            } catch {
              return String(e);
            }
          })();
  return (text || 'failed').slice(0, MAX_ERROR_CHARS);
}

/** The result as JSON the server accepts as `output` (64 KiB at most), or undefined when it is not. */
function jsonOutput(value: unknown): JsonValue | undefined {
  if (value === undefined) return undefined;
  try {
    const text = JSON.stringify(value);
    if (text === undefined || new TextEncoder().encode(text).length > MAX_OUTPUT_BYTES) return undefined;
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}
