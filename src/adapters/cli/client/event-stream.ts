import { TollgateError, type AuditEvent } from '@tollgate/sdk';
import { ApiClient, ProblemError } from './api-client';
import { oneLineText as text } from '../safe-text';

/** One audit event as the live stream carries it (CONTRACT §9, §11). */
export type StreamEvent = AuditEvent;

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
 * Follows `GET /v1/events/stream` through the SDK's event stream, which reconnects with `Last-Event-ID` (at most
 * 5 s apart) so that nothing is missed across a server restart or a dropped connection. `close()` stops it.
 */
export function followEvents(api: ApiClient, h: StreamHandlers): { close(): void } {
  const stream = api.tollgate.inbox().watch({
    maxDelayMs: 5000,
    onState: (s) => {
      if (s.state === 'live') h.onOpen(s.opened > 1);
      else if (s.state === 'reconnecting' && s.retryAt !== undefined)
        h.onDown(reasonOf(s.error), Math.max(0, s.retryAt - Date.now()));
    },
  });
  void (async () => {
    try {
      for await (const e of stream) h.onEvent(e);
    } catch (e) {
      if (e instanceof TollgateError) h.onFatal(new ProblemError(e.status, e.problem));
    }
  })();
  return { close: () => stream.close() };
}

/** "ECONNREFUSED", "unavailable: …", "the server closed the stream". */
function reasonOf(e: Error | undefined): string {
  if (!e) return 'lost';
  if (e instanceof TollgateError) {
    if (e.status !== 0) return e.message;
    const cause = e.cause as { code?: string; cause?: { code?: string } } | undefined;
    return cause?.cause?.code ?? cause?.code ?? e.detail;
  }
  return e.message;
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
  const outcome = ENDING_EVENTS[e.type] ?? text(e.type);
  if (e.type === 'ToolCallExpired') return 'expired';
  // Names and reasons are others' text, printed on a terminal: one line, no control characters.
  const behalf = e.actor?.onBehalfOf ? text(e.actor.onBehalfOf.name ?? e.actor.onBehalfOf.id) : '';
  const who = text(e.actor?.name ?? e.actor?.id) + (behalf ? ` for ${behalf}` : '');
  const via = text((e.data?.via as string | undefined) ?? e.actor?.via);
  const reason = typeof e.data?.reason === 'string' && e.data.reason ? ` (${text(e.data.reason)})` : '';
  return `${outcome}${who ? ` by ${who}` : ''}${via && via !== 'system' ? ` via ${via}` : ''}${reason}`;
}
