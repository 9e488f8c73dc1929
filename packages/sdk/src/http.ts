import { TollgateError } from './errors.js';
import type { Problem } from './types.js';

/** The fetch the SDK calls: the global one unless one is injected (tests, proxies, instrumentation). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** A bearer token, or a function giving a fresh one before each request (rotating tokens). */
export type TokenSource = string | (() => string | Promise<string>);

export interface RetryOptions {
  /** Attempts per request, the first included, before a transient failure is thrown. Default 8. */
  maxAttempts?: number;
  /** The first backoff; it doubles per attempt, with jitter. Default 250 ms. */
  initialDelayMs?: number;
  /** The cap of the backoff. Default 8,000 ms. */
  maxDelayMs?: number;
  /** The longest Retry-After honoured; a longer one is cut to this. Default 60,000 ms. */
  maxRetryAfterMs?: number;
}

/** Told before each retry: what failed, and how long the SDK waits before the next attempt. */
export interface RetryInfo {
  method: string;
  path: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  delayMs: number;
  /** The HTTP status of the failed attempt; 0 for a network error. */
  status: number;
  /** The problem's code (`rate_limited`, `unavailable`, `network_error`, …). */
  code: string;
  /** True when the server asked for this delay (Retry-After). */
  retryAfter: boolean;
}

export interface TransportOptions {
  /** The server, e.g. `http://127.0.0.1:8080`; may carry a path prefix. Empty: same origin (browsers). */
  url: string;
  token?: TokenSource;
  fetch?: FetchLike;
  retry?: RetryOptions;
  /** Sent with every request (e.g. a `user-agent`). */
  headers?: Record<string, string>;
  /** Per attempt, unless a request says otherwise. Default 30,000 ms. */
  timeoutMs?: number;
  onRetry?: (info: RetryInfo) => void;
}

/** A query string's parameters; an array repeats its parameter (`?externalId=a&externalId=b`). */
export type Query = Record<string, string | number | boolean | readonly string[] | undefined | null>;

export interface RequestOptions {
  query?: Query;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is, with this content type (YAML policies). */
  raw?: { text: string; contentType: string };
  headers?: Record<string, string>;
  signal?: AbortSignal;
  timeoutMs?: number;
  /**
   * `true` (the default): a request that may be repeated whatever happened to the previous attempt, so any
   * transient failure is retried. `false`: retried only when the server surely did not act on it (429, 503
   * unavailable, a connection that was never made).
   */
  idempotent?: boolean;
  /** `accept` header; default `application/json`. */
  accept?: string;
  /** Overrides the client's `retry.maxAttempts` for this request (1: no retries). */
  maxAttempts?: number;
}

/** Network failures that mean the request never reached the server, so repeating it is always safe. */
const NEVER_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export { sleep };

export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/**
 * HTTP to Tollgate: bearer token, JSON, RFC 9457 problems turned into TollgateError, and retries of transient
 * failures (network errors, 429, 502–504) with capped exponential backoff and jitter, honouring Retry-After.
 */
export class Transport {
  readonly baseUrl: string;
  private readonly fetchImpl: FetchLike;
  private readonly retry: Required<RetryOptions>;

  constructor(private readonly opts: TransportOptions) {
    this.baseUrl = opts.url.replace(/\/+$/, '');
    this.fetchImpl = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.retry = { maxAttempts: 8, initialDelayMs: 250, maxDelayMs: 8000, maxRetryAfterMs: 60_000, ...opts.retry };
  }

  /** The current bearer token (a token function is called). */
  async token(): Promise<string | undefined> {
    const t = this.opts.token;
    const value = typeof t === 'function' ? await t() : t;
    return value?.trim() || undefined;
  }

  url(path: string, query: Query = {}): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (Array.isArray(v)) for (const each of v) params.append(k, each);
      else if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
    }
    const qs = params.toString();
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ''}`;
  }

  /** The capped exponential backoff of attempt `n` (from 1), with "equal jitter": half fixed, half random. */
  backoff(attempt: number): number {
    const d = Math.min(this.retry.maxDelayMs, this.retry.initialDelayMs * 2 ** Math.min(attempt - 1, 30));
    return d / 2 + Math.random() * (d / 2);
  }

  /** Sends once per attempt until an answer that is not transient; parses JSON answers (other types as text). */
  async request<T>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    const a = await this.send(method, path, o);
    return parseBody(a) as T;
  }

  /** Like `request`, answering the status, headers and text; non-2xx answers throw TollgateError. */
  async send(method: string, path: string, o: RequestOptions = {}): Promise<Answer> {
    return this.loop(method, path, o, false) as Promise<Answer>;
  }

  /** Opens a stream (`accept: text/event-stream`): the Response with its body unread. */
  async open(path: string, o: RequestOptions = {}): Promise<Response> {
    return this.loop('GET', path, { ...o, accept: 'text/event-stream' }, true) as Promise<Response>;
  }

  private async loop(method: string, path: string, o: RequestOptions, stream: boolean): Promise<Answer | Response> {
    const idempotent = o.idempotent ?? true;
    let refreshedToken = false;
    for (let attempt = 1; ; attempt++) {
      if (o.signal?.aborted) throw abortReason(o.signal);
      let failure: TollgateError;
      let retryable: boolean;
      let retryAfterMs: number | undefined;
      const token = await this.token(); // outside the try: a token function's own failure is the caller's to see
      try {
        const res = await this.attempt(method, path, o, stream, token);
        if (res.status >= 200 && res.status < 300) return res;
        const problem = readProblem(res as Answer); // only a 2xx stream comes back unread
        failure = new TollgateError(problem, { requestId: res.headers.get('x-request-id') ?? undefined });
        if (res.status === 401 && typeof this.opts.token === 'function' && !refreshedToken) {
          refreshedToken = true; // a rotated token: ask for a fresh one once
          attempt--;
          continue;
        }
        retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), problem.retryAfter);
        retryable = isTransientStatus(res.status, problem.code, idempotent);
      } catch (e) {
        if (o.signal?.aborted) throw abortReason(o.signal);
        if (e instanceof TollgateError) throw e;
        failure = networkError(this.baseUrl, e);
        retryable = idempotent || NEVER_SENT.has(causeCode(e) ?? '');
      }
      if (!retryable || attempt >= (o.maxAttempts ?? this.retry.maxAttempts)) throw failure;
      const delayMs =
        retryAfterMs !== undefined ? Math.min(retryAfterMs, this.retry.maxRetryAfterMs) : this.backoff(attempt);
      this.opts.onRetry?.({
        method,
        path,
        attempt,
        delayMs,
        status: failure.status,
        code: failure.code,
        retryAfter: retryAfterMs !== undefined,
      });
      await sleep(delayMs, o.signal);
    }
  }

  private async attempt(
    method: string,
    path: string,
    o: RequestOptions,
    stream: boolean,
    token: string | undefined,
  ): Promise<Answer | Response> {
    const headers: Record<string, string> = {
      accept: o.accept ?? 'application/json',
      ...this.opts.headers,
      ...o.headers,
    };
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (o.raw) {
      body = o.raw.text;
      headers['content-type'] = o.raw.contentType;
    } else if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] = 'application/json';
    }
    // One controller per attempt: the caller's signal and this attempt's timeout both abort it.
    const controller = new AbortController();
    const timeoutMs = o.timeoutMs ?? this.opts.timeoutMs ?? 30_000;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DOMException('no answer in time', 'TimeoutError'));
    }, timeoutMs);
    const onAbort = () => controller.abort(abortReason(o.signal!));
    o.signal?.addEventListener('abort', onAbort, { once: true });
    let streaming = false;
    try {
      const res = await this.fetchImpl(this.url(path, o.query), { method, headers, body, signal: controller.signal });
      if (stream && res.ok) {
        streaming = true; // the timeout was for the answer's head; the caller's signal still ends the stream
        return res;
      }
      // The body is read under the same timeout and signal, so a stalled answer cannot hang the caller.
      return await answerOf(res);
    } catch (e) {
      if (timedOut) throw Object.assign(new Error('no answer in time'), { name: 'TimeoutError', cause: e });
      throw e;
    } finally {
      clearTimeout(timer);
      if (!streaming) o.signal?.removeEventListener('abort', onAbort);
    }
  }
}

function isTransientStatus(status: number, code: string, idempotent: boolean): boolean {
  if (status === 429) return true; // refused before anything was done
  if (status === 503) return code === 'unavailable' || code === 'http_503'; // not `halted`: a halt is an answer
  return idempotent && (status === 502 || status === 504);
}

/** Retry-After in seconds or as an HTTP date; else the problem's `retryAfter` member. */
export function parseRetryAfter(header: string | null, member?: number): number | undefined {
  if (header !== null && header.trim() !== '') {
    const v = header.trim();
    if (/^\d+$/.test(v)) return Number(v) * 1000;
    const at = Date.parse(v);
    if (!Number.isNaN(at)) return Math.max(0, at - Date.now());
  }
  return typeof member === 'number' && member >= 0 ? member * 1000 : undefined;
}

/** An answer read whole. */
export interface Answer {
  status: number;
  statusText: string;
  headers: Headers;
  text: string;
}

async function answerOf(res: Response): Promise<Answer> {
  return { status: res.status, statusText: res.statusText, headers: res.headers, text: await res.text() };
}

function parseBody(a: Answer): unknown {
  if (!a.text) return undefined;
  return /json/.test(a.headers.get('content-type') ?? '') ? JSON.parse(a.text) : a.text;
}

function readProblem(res: Answer): Problem {
  const text = res.text;
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const p = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Partial<Problem>) : {};
  const code = typeof p.code === 'string' ? p.code : `http_${res.status}`;
  return {
    ...p,
    type: typeof p.type === 'string' ? p.type : `urn:tollgate:problem:${code}`,
    title: typeof p.title === 'string' ? p.title : res.statusText || `HTTP ${res.status}`,
    status: res.status,
    detail: typeof p.detail === 'string' ? p.detail : text.slice(0, 200) || res.statusText || `HTTP ${res.status}`,
    code,
  };
}

function causeCode(e: unknown): string | undefined {
  const err = e as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = err?.cause?.code ?? err?.code;
  return typeof code === 'string' ? code : undefined;
}

/** "cannot reach Tollgate at http://…: ECONNREFUSED" as a TollgateError with status 0, code network_error. */
export function networkError(baseUrl: string, e: unknown): TollgateError {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  const why =
    err?.name === 'TimeoutError'
      ? 'no answer in time'
      : (causeCode(e) ?? err?.cause?.message ?? err?.message ?? String(e));
  return new TollgateError(
    {
      type: 'urn:tollgate:problem:network_error',
      title: 'Network error',
      status: 0,
      detail: withoutCredentials(`cannot reach Tollgate at ${baseUrl || 'this origin'}: ${why}`),
      code: 'network_error',
    },
    { cause: e },
  );
}

/**
 * The text with any URL's `user:pass@` removed: the detail is shown to people and models (a hook's deny reason),
 * and fetch's own message repeats the URL it refused.
 */
function withoutCredentials(s: string): string {
  return s.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi, '$1');
}
