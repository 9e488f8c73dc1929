import { context } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import type { EgressGuard } from '../webhooks/egress-guard';
import { sendWebhook, type SendOutcome } from '../webhooks/webhook-sender';

/** What one push request came to: the push service's status, or why none came (fixed words; `cause` for logs). */
export type PushDeliveryOutcome = SendOutcome;

/**
 * POSTs one encrypted push message (aes128gcm, binary) to a subscription's endpoint the way webhooks are sent: the
 * endpoint is a URL a browser handed us, so it is checked by the same egress guard, reached on exactly the checked
 * addresses, and never redirected.
 */
export function deliverPush(
  guard: EgressGuard,
  endpoint: string,
  headers: Record<string, string>,
  body: Buffer,
  timeoutMs: number,
): Promise<PushDeliveryOutcome> {
  // Untraced: a span would record the endpoint (a browser's capability URL) and send a traceparent to the push service.
  return context.with(suppressTracing(context.active()), () => sendWebhook(guard, endpoint, headers, body, timeoutMs));
}
