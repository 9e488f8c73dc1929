import { TollgateError } from './errors.js';
import { abortReason, type Transport } from './http.js';
import type { AuditEvent } from './types.js';

/** One dispatched Server-Sent Event. `id` is the last event id in force when it was dispatched. */
export interface SseEvent {
  kind: 'event';
  id?: string;
  event: string;
  data: string;
}

export type SseItem = SseEvent | { kind: 'comment'; text: string } | { kind: 'retry'; ms: number };

/**
 * An incremental parser of `text/event-stream` (the WHATWG HTML "event stream interpretation"): lines end with
 * CRLF, LF or CR (a CR at the end of one chunk and an LF at the start of the next are one line end), `data`
 * lines join with "\n", an `id` holding NUL is ignored, `retry` takes digits only, comments are reported, and an
 * event with no data is not dispatched. At most `maxEventChars` are held for one line or event; beyond that it
 * throws, since a stream that never ends a frame would otherwise grow without bound.
 */
export class SseParser {
  private line = '';
  private afterCr = false;
  private data: string[] = [];
  private dataChars = 0;
  private eventType = '';
  private lastEventId: string | undefined;

  constructor(private readonly maxEventChars = 16 * 1024 * 1024) {}

  push(chunk: string): SseItem[] {
    const items: SseItem[] = [];
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      if (c === 10 && this.afterCr && i === start && this.line === '') {
        // The LF of a CRLF split across chunks (or right after the CR): not a second line end.
        this.afterCr = false;
        start = i + 1;
        continue;
      }
      this.line += chunk.slice(start, i);
      this.afterCr = c === 13;
      this.takeLine(this.line, items);
      this.line = '';
      start = i + 1;
      if (c === 13 && chunk.charCodeAt(i + 1) === 10) {
        i++;
        start = i + 1;
        this.afterCr = false;
      }
    }
    if (start < chunk.length) {
      this.afterCr = false;
      this.line += chunk.slice(start);
    }
    if (this.line.length + this.dataChars > this.maxEventChars) {
      throw new RangeError(`an event stream frame is over ${this.maxEventChars} characters`);
    }
    return items;
  }

  private takeLine(line: string, items: SseItem[]): void {
    if (line === '') return this.dispatch(items);
    if (line.startsWith(':')) {
      items.push({ kind: 'comment', text: line.slice(1).replace(/^ /, '') });
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') {
      this.data.push(value);
      this.dataChars += value.length + 1;
      if (this.dataChars > this.maxEventChars)
        throw new RangeError(`an event stream frame is over ${this.maxEventChars} characters`);
    } else if (field === 'event') this.eventType = value;
    else if (field === 'id') {
      if (!value.includes('\0')) this.lastEventId = value;
    } else if (field === 'retry') {
      if (/^\d+$/.test(value)) items.push({ kind: 'retry', ms: Number(value) });
    }
  }

  private dispatch(items: SseItem[]): void {
    if (this.data.length > 0) {
      items.push({
        kind: 'event',
        ...(this.lastEventId !== undefined ? { id: this.lastEventId } : {}),
        event: this.eventType || 'message',
        data: this.data.join('\n'),
      });
    }
    this.data = [];
    this.dataChars = 0;
    this.eventType = '';
  }
}

export type StreamPhase = 'connecting' | 'live' | 'reconnecting';

export interface StreamState {
  state: StreamPhase;
  /** Connections the server accepted so far; above 1 on `live`, this one is a reconnection. */
  opened: number;
  /** While reconnecting: when the next attempt starts (ms since the epoch); absent while one is under way. */
  retryAt?: number;
  /** When the server last sent anything, heartbeats included (ms since the epoch). */
  heardAt?: number;
  /** While reconnecting: why the last connection failed or ended. */
  error?: Error;
}

export interface WatchOptions {
  /** Resume after this event (its `seq`); default: from now on. */
  lastEventId?: number | string;
  signal?: AbortSignal;
  /** Told each change of the connection: live, reconnecting (and when), connecting. */
  onState?: (s: StreamState) => void;
  /** A connection silent this long (the server sends a comment every 15 s) is replaced. Default 45,000 ms. */
  silenceMs?: number;
  /** The longest wait before a reconnection, the server's `retry:` included. Default 30,000 ms. */
  maxDelayMs?: number;
  /** The largest frame accepted. Default 16 MiB of text. */
  maxEventChars?: number;
}

/**
 * GET /v1/events/stream as an async iterable of audit events. It reconnects by itself after a drop (the
 * server's `retry:` delay, then backing off with jitter up to `maxDelayMs`), resuming with Last-Event-ID so
 * nothing committed meanwhile is missed; a silent connection is replaced. A refusal that reconnecting cannot
 * cure (401, 403, 404, 400) ends the iteration with a TollgateError; `close()` (or breaking out of the loop)
 * ends it quietly; the signal ends it with its reason. Pull-based: while the consumer is busy nothing more is
 * read, and the server drops a reader that falls far behind, which this stream resumes.
 */
export class EventStream implements AsyncIterable<AuditEvent> {
  private closed = false;
  private connection?: AbortController;
  private wake?: () => void;
  private id: string | undefined;
  private readonly iterator: AsyncGenerator<AuditEvent, void, undefined>;

  constructor(
    private readonly transport: Transport,
    private readonly o: WatchOptions = {},
  ) {
    this.id = o.lastEventId === undefined ? undefined : String(o.lastEventId);
    this.iterator = this.run();
  }

  /** The `seq` of the last event received (or where the stream started), for a later resume. */
  get lastEventId(): string | undefined {
    return this.id;
  }

  [Symbol.asyncIterator](): AsyncGenerator<AuditEvent, void, undefined> {
    return this.iterator;
  }

  close(): void {
    this.closed = true;
    this.connection?.abort();
    this.wake?.();
  }

  /** Cuts the wait before the next reconnection short; no effect while connected. */
  retryNow(): void {
    this.wake?.();
  }

  private async *run(): AsyncGenerator<AuditEvent, void, undefined> {
    const { signal } = this.o;
    const onAbort = () => this.close();
    signal?.addEventListener('abort', onAbort, { once: true });
    let opened = 0;
    let failures = 0;
    let serverRetryMs = 1000;
    let heardAt: number | undefined;
    const state = (s: Omit<StreamState, 'opened' | 'heardAt'>) =>
      this.o.onState?.({ ...s, opened, ...(heardAt !== undefined ? { heardAt } : {}) });
    try {
      state({ state: 'connecting' });
      while (!this.closed) {
        let why: Error | undefined;
        try {
          for await (const item of this.connect(
            () => {
              opened += 1;
              failures = 0;
              heardAt = Date.now();
              state({ state: 'live' });
            },
            () => (heardAt = Date.now()),
          )) {
            if (item.kind === 'retry') serverRetryMs = item.ms;
            else yield item.event;
          }
          why = new Error('the server closed the stream');
        } catch (e) {
          if (this.closed) break;
          if (e instanceof TollgateError && isFatal(e.status)) throw e;
          if (e instanceof RangeError) throw e;
          why = e instanceof Error ? e : new Error(String(e));
          failures += 1;
        }
        if (this.closed) break;
        const base = failures === 0 ? serverRetryMs : serverRetryMs * 2 ** Math.min(failures - 1, 10);
        const delay = Math.min(this.o.maxDelayMs ?? 30_000, base * (0.8 + Math.random() * 0.4));
        state({ state: 'reconnecting', retryAt: Date.now() + delay, error: why });
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = undefined;
        if (!this.closed) state({ state: 'reconnecting' });
      }
      if (signal?.aborted) throw abortReason(signal);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.closed = true;
      this.connection?.abort();
    }
  }

  /** One connection: its audit events (and the server's retry delay) until it ends or fails. */
  private async *connect(
    opened: () => void,
    heard: () => void,
  ): AsyncGenerator<{ kind: 'event'; event: AuditEvent } | { kind: 'retry'; ms: number }> {
    const controller = new AbortController();
    this.connection = controller;
    const silenceMs = this.o.silenceMs ?? 45_000;
    let watchdog: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => controller.abort(new Error(`no word from the server in ${silenceMs} ms`)), silenceMs);
    };
    try {
      arm();
      const res = await this.transport.open('/v1/events/stream', {
        signal: controller.signal,
        headers: this.id !== undefined ? { 'last-event-id': this.id } : {},
        maxAttempts: 1,
        timeoutMs: silenceMs,
      });
      if (!res.body) throw new Error('the stream has no body');
      opened();
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      const parser = new SseParser(this.o.maxEventChars);
      try {
        for (;;) {
          const { value, done } = await reader.read().catch((e: unknown) => {
            throw controller.signal.aborted && !this.closed ? (controller.signal.reason as Error) : e;
          });
          if (done) return;
          heard();
          for (const item of parser.push(decoder.decode(value, { stream: true }))) {
            if (item.kind === 'comment') {
              // The stream's first comment names where it starts, so a reconnect before any event resumes there.
              const m = /after event (\d+)/.exec(item.text);
              if (m && this.id === undefined) this.id = m[1];
            } else if (item.kind === 'retry') {
              yield item;
            } else {
              if (item.id !== undefined) this.id = item.id;
              let event: AuditEvent;
              try {
                event = JSON.parse(item.data) as AuditEvent;
              } catch {
                continue; // not an audit event; the id still counts
              }
              clearTimeout(watchdog); // the consumer's time is not the server's silence
              yield { kind: 'event', event };
            }
          }
          arm();
        }
      } finally {
        reader.cancel().catch(() => undefined);
      }
    } finally {
      clearTimeout(watchdog);
      controller.abort();
    }
  }
}

/** Refusals that reconnecting would not cure. */
function isFatal(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}
