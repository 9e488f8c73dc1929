/**
 * The live stream through the SDK's EventStream: read with fetch, so the bearer token travels in the
 * Authorization header (EventSource cannot set headers, and a token in a URL ends up in logs). It reconnects
 * with Last-Event-ID, so nothing committed while the page was away is missed; a silent connection (no
 * heartbeat for 45 s) is replaced. This file maps it onto the page's callbacks.
 */
import { TollgateError, type AuditEvent, type Tollgate } from '@tollgate/sdk';

export type StreamState = 'connecting' | 'live' | 'reconnecting';

export interface StreamStatus {
  state: StreamState;
  /** While reconnecting: when the next attempt starts (local ms); absent while an attempt is under way. */
  retryAt?: number;
  /** When the server last sent anything on a stream, heartbeats included (local ms); absent before the first. */
  heardAt?: number;
}

export interface StreamOptions {
  tollgate: Tollgate;
  /** Each (re)connection that the server accepted. */
  onOpen(): void;
  onEvent(e: AuditEvent): void;
  onState(status: StreamStatus): void;
  /** 401/403 (or another refusal reconnecting cannot cure): the token is no good; the stream stops. */
  onRefused(status: number): void;
}

export interface Stream {
  close(): void;
  /** Cuts the wait before the next attempt short (a "reconnect now" button); no effect while connected. */
  retryNow(): void;
}

export function openStream(opts: StreamOptions): Stream {
  const stream = opts.tollgate.inbox().watch({
    maxDelayMs: 30_000,
    onState: (s) => {
      opts.onState({
        state: s.state,
        ...(s.retryAt !== undefined ? { retryAt: s.retryAt } : {}),
        ...(s.heardAt !== undefined ? { heardAt: s.heardAt } : {}),
      });
      if (s.state === 'live') opts.onOpen();
    },
  });
  void (async () => {
    try {
      for await (const e of stream) opts.onEvent(e);
    } catch (e) {
      if (e instanceof TollgateError) opts.onRefused(e.status);
    }
  })();
  return { close: () => stream.close(), retryNow: () => stream.retryNow() };
}
