/**
 * Server-Sent Events read with fetch, so the bearer token travels in the Authorization header (EventSource
 * cannot set headers, and a token in a URL ends up in logs). Reconnects with Last-Event-ID, so nothing
 * committed while the page was away is missed; a silent connection (no heartbeat for 45 s) is replaced.
 */

export interface SseFrame {
  id?: string;
  event: string;
  data: string;
}

/** Splits complete frames off the front of `buffer` (per the SSE spec: fields, comments, blank-line ends). */
export function parseFrames(buffer: string): { frames: SseFrame[]; comments: string[]; retry?: number; rest: string } {
  const frames: SseFrame[] = [];
  const comments: string[] = [];
  let retry: number | undefined;
  const text = buffer.replace(/\r\n?/g, '\n');
  let start = 0;
  let cut: number;
  while ((cut = text.indexOf('\n\n', start)) >= 0) {
    const block = text.slice(start, cut);
    start = cut + 2;
    let id: string | undefined;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        comments.push(line.slice(1).trim());
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'retry' && /^\d+$/.test(value)) retry = Number(value);
    }
    if (data.length > 0) frames.push({ id, event, data: data.join('\n') });
  }
  return { frames, comments, retry, rest: text.slice(start) };
}

export type StreamState = 'connecting' | 'live' | 'reconnecting';

export interface StreamStatus {
  state: StreamState;
  /** While reconnecting: when the next attempt starts (local ms); absent while an attempt is under way. */
  retryAt?: number;
  /** When the server last sent anything on a stream, heartbeats included (local ms); absent before the first. */
  heardAt?: number;
}

export interface StreamOptions {
  url: string;
  token: string;
  /** Each (re)connection that the server accepted. */
  onOpen(): void;
  onFrames(frames: SseFrame[]): void;
  onState(status: StreamStatus): void;
  /** 401/403: the token is no good; the stream stops. */
  onRefused(status: number): void;
}

const SILENCE_MS = 45_000; // the server sends a comment every 15 s
const MAX_BACKOFF_MS = 30_000;

export interface Stream {
  close(): void;
  /** Cuts the wait before the next attempt short (a "reconnect now" button); no effect while connected. */
  retryNow(): void;
}

export function openStream(opts: StreamOptions): Stream {
  let lastEventId: string | undefined;
  let closed = false;
  let controller: AbortController | undefined;
  let failures = 0;
  let retryMs = 1000;
  let heardAt: number | undefined;
  let wake: (() => void) | undefined;

  async function connectOnce(): Promise<void> {
    controller = new AbortController();
    const abort = controller;
    let watchdog = setTimeout(() => abort.abort(), SILENCE_MS);
    const alive = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => abort.abort(), SILENCE_MS);
    };
    try {
      const headers: Record<string, string> = { authorization: `Bearer ${opts.token}`, accept: 'text/event-stream' };
      if (lastEventId) headers['last-event-id'] = lastEventId;
      const res = await fetch(opts.url, { headers, signal: abort.signal, cache: 'no-store' });
      if (res.status === 401 || res.status === 403) {
        closed = true;
        opts.onRefused(res.status);
        return;
      }
      if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}`);
      failures = 0;
      heardAt = Date.now();
      opts.onState({ state: 'live', heardAt });
      opts.onOpen();
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        alive();
        heardAt = Date.now();
        buffer += decoder.decode(value, { stream: true });
        const parsed = parseFrames(buffer);
        buffer = parsed.rest;
        if (parsed.retry !== undefined) retryMs = parsed.retry;
        // The stream's first comment names where it starts, so a reconnect before any event still resumes there.
        for (const c of parsed.comments) {
          const m = /after event (\d+)/.exec(c);
          if (m && lastEventId === undefined) lastEventId = m[1];
        }
        for (const f of parsed.frames) if (f.id !== undefined) lastEventId = f.id;
        if (parsed.frames.length > 0) opts.onFrames(parsed.frames);
      }
    } finally {
      clearTimeout(watchdog);
    }
  }

  void (async () => {
    opts.onState({ state: 'connecting' });
    while (!closed) {
      try {
        await connectOnce();
      } catch {
        failures += 1;
      }
      if (closed) return;
      const base = failures === 0 ? retryMs : Math.min(MAX_BACKOFF_MS, retryMs * 2 ** Math.min(failures - 1, 5));
      const wait = base * (0.8 + Math.random() * 0.4);
      opts.onState({ state: 'reconnecting', retryAt: Date.now() + wait, heardAt });
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
      if (!closed) opts.onState({ state: 'reconnecting', heardAt });
    }
  })();

  return {
    close() {
      closed = true;
      controller?.abort();
      wake?.();
    },
    retryNow() {
      wake?.();
    },
  };
}
