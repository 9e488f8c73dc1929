import { ApiClient, ProblemError } from './api-client';

/** One audit event as the live stream carries it (CONTRACT §9, §11). */
export interface StreamEvent {
  seq: number;
  type: string;
  at: string;
  conversationId?: string;
  toolCallId?: string;
  toolName?: string;
  actor: { id: string; via?: string; name?: string; kind?: string };
  data: Record<string, unknown>;
}

export interface StreamHandlers {
  /** The stream is open (first time or again): what was missed while away is worth a fresh look. */
  onOpen(reconnected: boolean): void;
  onEvent(e: StreamEvent): void;
  /** Lost; it reconnects by itself (with Last-Event-ID) after `retryMs`. */
  onDown(reason: string, retryMs: number): void;
  /** 401/403/404…: reconnecting would not help. */
  onFatal(e: ProblemError): void;
}

/**
 * Follows `GET /v1/events/stream`, reconnecting with `Last-Event-ID` (1 s, then up to 5 s apart) so that
 * nothing is missed across a server restart or a dropped connection. `close()` stops it.
 */
export function followEvents(api: ApiClient, h: StreamHandlers): { close(): void } {
  let lastId: number | undefined;
  let closed = false;
  let controller: AbortController | undefined;
  let retry = 1000;
  let opened = false;

  const run = async () => {
    while (!closed) {
      controller = new AbortController();
      try {
        const headers = api.headers({ accept: 'text/event-stream', ...(lastId !== undefined ? { 'last-event-id': String(lastId) } : {}) });
        const res = await fetch(api.url('/v1/events/stream'), { headers, signal: controller.signal });
        if (!res.ok || !res.body) {
          const problem = await res.json().catch(() => ({ detail: res.statusText }));
          const err = new ProblemError(res.status, problem as Record<string, unknown>);
          if (res.status < 500 && res.status !== 429) return h.onFatal(err);
          throw err;
        }
        h.onOpen(opened);
        opened = true;
        retry = 1000;
        const decoder = new TextDecoder();
        let buffer = '';
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const frame = parseFrame(block);
            if (!frame) continue;
            if (frame.id !== undefined) lastId = frame.id;
            try {
              h.onEvent(JSON.parse(frame.data) as StreamEvent);
            } catch {
              /* a frame we cannot read is skipped; the next list refresh covers it */
            }
          }
        }
        if (!closed) h.onDown('the server closed the stream', retry);
      } catch (e) {
        if (closed) return;
        h.onDown(e instanceof ProblemError ? e.message : ((e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message), retry);
      }
      if (closed) return;
      await new Promise((r) => setTimeout(r, retry));
      retry = Math.min(retry * 2, 5000);
    }
  };
  void run();
  return {
    close() {
      closed = true;
      controller?.abort();
    },
  };
}

function parseFrame(block: string): { id?: number; data: string } | undefined {
  let id: number | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id' && /^\d+$/.test(value)) id = Number(value);
    else if (field === 'data') data.push(value);
  }
  return data.length ? { id, data: data.join('\n') } : undefined;
}

/** The events that end a pending request, whoever or whatever ended it. */
export const ENDING_EVENTS: Record<string, string> = {
  ToolCallApproved: 'approved',
  ToolCallRejected: 'rejected',
  ToolCallExpired: 'expired',
  ToolCallCancelled: 'cancelled',
};

/** "approved by Ann via slack", "expired", "cancelled by ann (incident drill)". */
export function describeEnding(e: StreamEvent): string {
  const outcome = ENDING_EVENTS[e.type] ?? e.type;
  if (e.type === 'ToolCallExpired') return 'expired';
  const who = e.actor?.name ?? e.actor?.id;
  const via = (e.data?.via as string | undefined) ?? e.actor?.via;
  const reason = typeof e.data?.reason === 'string' && e.data.reason ? ` (${e.data.reason})` : '';
  return `${outcome}${who ? ` by ${who}` : ''}${via && via !== 'system' ? ` via ${via}` : ''}${reason}`;
}
