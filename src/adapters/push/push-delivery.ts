import * as http from 'node:http';
import * as https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { EgressGuard, ResolvedAddress } from '../webhooks/egress-guard';

/** What one push request came to: the push service's status, or why none came (fixed words; `cause` for logs). */
export type PushDeliveryOutcome =
  | { status: number }
  | { error: 'destination_not_allowed' | 'dns_failed' | 'connect_failed' | 'timeout'; cause: string };

/** Answers the addresses the guard checked, whatever the name resolves to now (no DNS rebinding). */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  }) as LookupFunction;
}

/**
 * POSTs one encrypted push message to a subscription's endpoint the way webhooks are sent (webhook-sender.ts): the
 * endpoint is a URL a browser handed us, so it is checked by the same egress guard, reached on exactly the checked
 * addresses, and never redirected. The body is binary (aes128gcm), which is why this is not sendWebhook itself.
 */
export async function deliverPush(
  guard: EgressGuard,
  endpoint: string,
  headers: Record<string, string>,
  body: Buffer,
  timeoutMs: number,
): Promise<PushDeliveryOutcome> {
  const signal = AbortSignal.timeout(timeoutMs);
  const timedOut = new Promise<null>((resolve) =>
    signal.addEventListener('abort', () => resolve(null), { once: true }),
  );
  const target = await Promise.race([guard.check(endpoint), timedOut]);
  if (target === null) return { error: 'timeout', cause: `no address within ${timeoutMs} ms` };
  if (!target.ok) {
    const cause = target.resolved ? `${target.detail} (resolved to ${target.resolved.join(', ')})` : target.detail;
    return { error: target.refusal === 'dns_failed' ? 'dns_failed' : 'destination_not_allowed', cause };
  }
  const transport = target.url.protocol === 'https:' ? https : http;
  return new Promise<PushDeliveryOutcome>((resolve) => {
    const req = transport.request(
      target.url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(body.length) },
        lookup: pinnedLookup(target.addresses),
        agent: false, // no pooled socket: each request connects to the addresses just checked
        signal,
      },
      (res) => {
        resolve({ status: res.statusCode ?? 0 });
        res.destroy();
      },
    );
    req.on('error', (e: Error & { code?: string }) => {
      resolve(
        signal.aborted
          ? { error: 'timeout', cause: `no answer within ${timeoutMs} ms` }
          : { error: 'connect_failed', cause: `${e.code ?? e.name}: ${e.message}` },
      );
    });
    req.end(body);
  });
}
