import { TollgateError } from './errors.js';
import {
  sleep,
  Transport,
  type FetchLike,
  type Query,
  type RequestOptions,
  type RetryInfo,
  type RetryOptions,
  type TokenSource,
} from './http.js';
import { untilSettled } from './long-poll.js';
import type {
  AuditCheckpoint,
  AuditReviewers,
  AuditEventPage,
  Conversation,
  ConversationPage,
  ConversationStatus,
  ExecutionClaim,
  HaltRequest,
  HaltResult,
  Jwks,
  Page,
  Policy,
  PolicyDocument,
  RegisterToolRequest,
  ResultRequest,
  ResumeRequest,
  ResumeResult,
  StartConversationRequest,
  Me,
  Status,
  Tool,
  ToolCall,
  ToolPage,
  VerifyResult,
} from './types.js';

/**
 * How a guarded run's result is reported. `background` (the default): the result is returned (or the error
 * thrown) as soon as the function ends, and the report is sent meanwhile, with the usual retries; `flush()` and
 * `close()` wait for it. `await`: the report is sent first. A process that dies before a background report lands
 * leaves the call `executed`, which the audit's gap findings show (RUN-01).
 */
export type ReportMode = 'background' | 'await';

/** Where a person's decision (or halt) is recorded as coming from: `decision.by.via`. */
export type DecisionChannel = 'web' | 'cli' | 'api' | 'mcp';

export interface TollgateOptions {
  /** The server, e.g. `http://127.0.0.1:8080` (a path prefix is kept). Empty in a page served by Tollgate: same origin. */
  url: string;
  /** The bearer token, or a function returning a fresh one (called before each request, and again after a 401). */
  token?: TokenSource;
  /** Default: the global fetch. */
  fetch?: FetchLike;
  /** Retries of transient failures: network errors, 429, 502–504, 503 unavailable. */
  retry?: RetryOptions;
  /** Told before each retry (logging, metrics). */
  onRetry?: (info: RetryInfo) => void;
  /** Sent with every request, e.g. `{ 'user-agent': 'my-agent/1.0' }`. */
  headers?: Record<string, string>;
  /** Per attempt of an ordinary request. Default 30,000 ms. */
  timeoutMs?: number;
  /** `X-Tollgate-Channel` of decisions, halts and resumes (recorded as `via`). Default: none (the server says `api`). */
  channel?: DecisionChannel;
  /**
   * The gRPC address (`host:port`, plaintext) to wait for decisions on with `WatchToolCall` instead of the REST
   * long-poll. Node only; needs the optional peer dependencies @grpc/grpc-js and @grpc/proto-loader.
   */
  grpc?: string;
  /** The longest single long-poll while waiting for a decision, 1–60 s. Default 30. */
  pollSeconds?: number;
  /**
   * A guarded function ran but its result could not be reported (after retries). The run is already on record
   * (claimed, with its arguments); only the outcome is missing. Default: a console warning.
   */
  onReportError?: (error: unknown, toolCall: ToolCall) => void;
  /** How guarded runs report their results (`ReportMode`). Default `background`: off the agent's critical path. */
  report?: ReportMode;
}

export interface WaitOptions {
  signal?: AbortSignal;
}

/**
 * The API's operations, one method each (named after its operationId), over one transport. `Tollgate` adds the
 * helpers built on them (conversations, the inbox, questions, grants); those helpers hold a `TollgateClient`,
 * so they do not import `Tollgate` back (no import cycle).
 */
export class TollgateClient {
  /** @internal */
  readonly transport: Transport;
  /** @internal */
  readonly options: TollgateOptions;
  private readonly reports = new Set<Promise<void>>();

  constructor(options: TollgateOptions) {
    if (typeof options?.url !== 'string') throw new TypeError('new Tollgate({ url }) needs the server URL');
    this.options = options;
    this.transport = new Transport({
      url: options.url,
      token: options.token,
      fetch: options.fetch,
      retry: options.retry,
      headers: options.headers,
      timeoutMs: options.timeoutMs,
      onRetry: options.onRetry,
    });
  }

  /** The server's base URL, without a trailing slash. */
  get url(): string {
    return this.transport.baseUrl;
  }

  /** Any route: JSON in, JSON (or text) out, problems as TollgateError, transient failures retried. */
  request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return this.transport.request<T>(method, path, options);
  }

  /* ── agents ─────────────────────────────────────────────────────────────────────────────────────────── */

  startConversation(body: StartConversationRequest, o: WaitOptions = {}): Promise<Conversation> {
    return this.request<Conversation>('POST', '/v1/conversations', { body, signal: o.signal });
  }

  /**
   * The conversation with all its calls; with `externalIds` (1 to 64, your framework's call ids), only the calls
   * of those, each looked up on its own: a process that knows the ids it proposed under finds its calls without
   * reading a long conversation whole. An id no call has is simply not in `toolCalls`.
   */
  getConversation(
    id: string,
    o: { externalIds?: readonly string[]; signal?: AbortSignal } = {},
  ): Promise<Conversation> {
    // An empty list would send no parameter at all, and so read every call: the opposite of what was asked.
    if (o.externalIds?.length === 0) throw new TypeError('getConversation: externalIds needs at least one id');
    return this.request<Conversation>('GET', `/v1/conversations/${enc(id)}`, {
      query: { externalId: o.externalIds },
      signal: o.signal,
    });
  }

  listConversations(
    q: { status?: ConversationStatus; cursor?: string; limit?: number } = {},
    o: WaitOptions = {},
  ): Promise<ConversationPage> {
    return this.request<ConversationPage>('GET', '/v1/conversations', { query: q, signal: o.signal });
  }

  /** The call as it stands; with `wait` (0–60 s) a pending call is answered as soon as it leaves pending. */
  getToolCall(id: string, o: { wait?: number; signal?: AbortSignal } = {}): Promise<ToolCall> {
    const wait = o.wait === undefined ? undefined : Math.max(0, Math.min(60, Math.ceil(o.wait)));
    return this.request<ToolCall>('GET', `/v1/tool-calls/${enc(id)}`, {
      query: { wait },
      signal: o.signal,
      // A long-poll answers after up to `wait` seconds: give it that long, and then some.
      ...(wait ? { timeoutMs: wait * 1000 + 15_000 } : {}),
    });
  }

  /**
   * Waits until every result report sent in the background has landed, or has been given up and handed to
   * `onReportError`. Call it before the process exits on its own terms (`close()` does).
   */
  async flush(): Promise<void> {
    while (this.reports.size > 0) await Promise.allSettled([...this.reports]);
  }

  /** @internal Keeps a background report (which never rejects) for `flush()`; resolves at once. */
  inBackground(report: Promise<void>): Promise<void> {
    this.reports.add(report);
    const done = () => void this.reports.delete(report);
    void report.then(done, done);
    return Promise.resolve();
  }

  /**
   * Waits for the background reports (`flush()`), then lets go of what this client holds open: the gRPC channel
   * its `grpc` waits opened (HTTP keeps nothing open).
   */
  async close(): Promise<void> {
    await this.flush();
    if (!this.options.grpc) return;
    const { closeGrpc } = (await import(/* @vite-ignore */ GRPC_WATCH)) as typeof import('./grpc-watch.js');
    await closeGrpc(this);
  }

  /**
   * Long-polls until the call leaves `pending`: decided, expired or cancelled. It survives network errors and
   * server restarts (it keeps asking, with backoff, while the call may still be decided) and honours the signal.
   * With the `grpc` option it waits on the gRPC `WatchToolCall` stream instead (src/grpc-watch.ts).
   */
  async waitForDecision(idOrCall: string | ToolCall, o: WaitOptions = {}): Promise<ToolCall> {
    let call = typeof idOrCall === 'string' ? await this.getToolCall(idOrCall, o) : idOrCall;
    if (this.options.grpc && call.status === 'pending') {
      // A computed specifier: bundlers (the web inbox) leave the Node-only gRPC module out.
      const { waitOverGrpc } = (await import(/* @vite-ignore */ GRPC_WATCH)) as typeof import('./grpc-watch.js');
      return waitOverGrpc(this, this.options.grpc, call, o.signal);
    }
    return untilSettled(call, {
      pending: (c) => c.status === 'pending',
      expiresAt: (c) => (c.approval ? Date.parse(c.approval.expiresAt) : NaN),
      read: (c, wait) => this.getToolCall(c.id, { wait, signal: o.signal }),
      pollSeconds: this.options.pollSeconds,
      backoff: (attempt) => this.transport.backoff(attempt),
      signal: o.signal,
    });
  }

  /**
   * Claims the run of an approved call, exactly once: the arguments to run (edited ones when an approver edited
   * them) and the signed receipt. Retried only when the server surely did not act on it: a claim whose answer
   * was lost cannot be repeated (the next answers `409 already_executed`).
   */
  claimExecution(id: string, o: WaitOptions = {}): Promise<ExecutionClaim> {
    return this.request<ExecutionClaim>('POST', `/v1/tool-calls/${enc(id)}/execution`, {
      signal: o.signal,
      idempotent: false,
    });
  }

  /**
   * Reports the run's outcome (the call becomes `completed`). A retry whose first attempt did land answers
   * `409 already_completed`; that is taken as done.
   */
  async reportResult(
    id: string,
    result: ResultRequest,
    o: WaitOptions & {
      /** @internal Sent before, its answer lost (with a proposal): `already_completed` is taken as done at once. */
      sentBefore?: boolean;
    } = {},
  ): Promise<ToolCall> {
    let attempts = 0;
    for (;;) {
      attempts += 1;
      try {
        return await this.request<ToolCall>('POST', `/v1/tool-calls/${enc(id)}/result`, {
          body: result,
          signal: o.signal,
          maxAttempts: 1,
        });
      } catch (e) {
        if (e instanceof TollgateError && e.code === 'already_completed' && (attempts > 1 || o.sentBefore))
          return this.getToolCall(id, o);
        const transient =
          e instanceof TollgateError &&
          (e.status === 0 || e.status === 429 || e.status === 502 || e.status === 504 || e.code === 'unavailable');
        const max = this.options.retry?.maxAttempts ?? 8;
        if (!transient || attempts >= max) throw e;
        const retryAfter =
          e instanceof TollgateError && typeof e.problem.retryAfter === 'number'
            ? e.problem.retryAfter * 1000
            : undefined;
        const delayMs = retryAfter ?? this.transport.backoff(attempts);
        this.options.onRetry?.({
          method: 'POST',
          path: `/v1/tool-calls/${enc(id)}/result`,
          attempt: attempts,
          delayMs,
          status: (e as TollgateError).status,
          code: (e as TollgateError).code,
          retryAfter: retryAfter !== undefined,
        });
        await sleep(delayMs, o.signal);
      }
    }
  }

  registerTool(name: string, body: RegisterToolRequest = {}, o: WaitOptions = {}): Promise<Tool> {
    return this.request<Tool>('PUT', `/v1/tools/${enc(name)}`, { body, signal: o.signal });
  }

  getTool(name: string, o: WaitOptions = {}): Promise<Tool> {
    return this.request<Tool>('GET', `/v1/tools/${enc(name)}`, { signal: o.signal });
  }

  listTools(q: { cursor?: string; limit?: number } = {}, o: WaitOptions = {}): Promise<ToolPage> {
    return this.request<ToolPage>('GET', '/v1/tools', { query: q, signal: o.signal });
  }

  getPolicy(o: WaitOptions = {}): Promise<Policy> {
    return this.request<Policy>('GET', '/v1/policy', { signal: o.signal });
  }

  /** A new policy version (admin): a document, or its YAML (or JSON) text. */
  putPolicy(document: PolicyDocument | string, o: WaitOptions = {}): Promise<Policy> {
    const raw =
      typeof document === 'string'
        ? { text: document, contentType: /^\s*[{[]/.test(document) ? 'application/json' : 'application/yaml' }
        : undefined;
    return this.request<Policy>(
      'PUT',
      '/v1/policy',
      raw ? { raw, signal: o.signal } : { body: document, signal: o.signal },
    );
  }

  /** Who this client's token is: its id, tenant, kind and roles as Tollgate counts them (any token). */
  me(o: WaitOptions = {}): Promise<Me> {
    return this.request<Me>('GET', '/v1/me', { signal: o.signal });
  }

  getStatus(o: WaitOptions = {}): Promise<Status> {
    return this.request<Status>('GET', '/v1/status', { signal: o.signal });
  }

  /** The kill switch (admin). */
  halt(body: HaltRequest, o: WaitOptions & { channel?: DecisionChannel } = {}): Promise<HaltResult> {
    return this.request<HaltResult>('POST', '/v1/halt', {
      body,
      signal: o.signal,
      headers: this.channelHeader(o.channel),
    });
  }

  resume(body: ResumeRequest, o: WaitOptions & { channel?: DecisionChannel } = {}): Promise<ResumeResult> {
    return this.request<ResumeResult>('POST', '/v1/resume', {
      body,
      signal: o.signal,
      headers: this.channelHeader(o.channel),
    });
  }

  listAuditEvents(q: AuditQuery = {}, o: WaitOptions = {}): Promise<AuditEventPage> {
    return this.request<AuditEventPage>('GET', '/v1/audit/events', { query: q as Query, signal: o.signal });
  }

  verifyAuditTrail(q: { checkpoint?: string } = {}, o: WaitOptions = {}): Promise<VerifyResult> {
    return this.request<VerifyResult>('GET', '/v1/audit/verify', { query: q, signal: o.signal });
  }

  getAuditCheckpoint(o: WaitOptions = {}): Promise<AuditCheckpoint> {
    return this.request<AuditCheckpoint>('GET', '/v1/audit/checkpoint', { signal: o.signal });
  }

  /** How each person decides in the window: approve rate, median and p90 time to decide, HITL-03 (auditor, admin). */
  getAuditReviewers(q: { from?: string; to?: string } = {}, o: WaitOptions = {}): Promise<AuditReviewers> {
    return this.request<AuditReviewers>('GET', '/v1/audit/reviewers', { query: q, signal: o.signal });
  }

  /** The public keys of receipts and checkpoints (no token needed). */
  getJwks(o: WaitOptions = {}): Promise<Jwks> {
    return this.request<Jwks>('GET', '/.well-known/jwks.json', { signal: o.signal });
  }

  /** @internal */
  channelHeader(channel?: DecisionChannel): Record<string, string> {
    const c = channel ?? this.options.channel;
    return c ? { 'x-tollgate-channel': c } : {};
  }
}

export interface AuditQuery {
  conversationId?: string;
  toolCallId?: string;
  toolName?: string;
  actor?: string;
  /** One type or several, comma-separated. */
  type?: string;
  /** ISO 8601 date or time, inclusive. */
  from?: string;
  /** ISO 8601 date or time, exclusive. */
  to?: string;
  cursor?: string;
  limit?: number;
}

/** Every item of a paged list, following `nextCursor` (at most `max` items). */
export async function allPages<T>(page: (cursor: string | undefined) => Promise<Page<T>>, max = 10_000): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const p = await page(cursor);
    items.push(...p.items);
    cursor = p.nextCursor ?? undefined;
  } while (cursor && items.length < max);
  return items;
}

const enc = encodeURIComponent;
const GRPC_WATCH = ['.', 'grpc-watch.js'].join('/');
