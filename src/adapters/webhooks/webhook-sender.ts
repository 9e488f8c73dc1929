import * as http from 'node:http';
import * as https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { EgressGuard, ResolvedAddress } from './egress-guard';

/**
 * What one attempt came to. `status` is the receiver's answer; `error` is one of a few fixed words, so the
 * attempt log an admin reads never repeats what a refused or unreachable destination said (no port-scan
 * oracle); `cause` holds the details for the operator's log only.
 */
export type SendOutcome =
  | { status: number }
  | { error: 'destination_not_allowed' | 'dns_failed' | 'connect_failed' | 'timeout'; cause: string };

/** Answers the addresses the guard checked, whatever the name resolves to now. */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  }) as LookupFunction;
}

/**
 * POSTs one body to a URL someone else chose (a webhook's, a browser's push endpoint): the destination is checked first (no connection to a refused one), then reached
 * on exactly the checked addresses, with the URL's host name kept for `Host` and TLS (SNI, certificate).
 * Redirects are not followed: a 3xx is an answer like any other non-2xx. The answer's body is not read.
 */
export async function sendWebhook(
  guard: EgressGuard,
  rawUrl: string,
  headers: Record<string, string>,
  body: string | Buffer,
  timeoutMs: number,
): Promise<SendOutcome> {
  const signal = AbortSignal.timeout(timeoutMs);
  const timedOut = new Promise<null>((resolve) =>
    signal.addEventListener('abort', () => resolve(null), { once: true }),
  );
  const target = await Promise.race([guard.check(rawUrl), timedOut]);
  if (target === null) return { error: 'timeout', cause: `no address within ${timeoutMs} ms` };
  if (!target.ok) {
    const cause = target.resolved ? `${target.detail} (resolved to ${target.resolved.join(', ')})` : target.detail;
    return { error: target.refusal === 'dns_failed' ? 'dns_failed' : 'destination_not_allowed', cause };
  }
  const transport = target.url.protocol === 'https:' ? https : http;
  return new Promise<SendOutcome>((resolve) => {
    const req = transport.request(
      target.url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: pinnedLookup(target.addresses),
        agent: false, // no pooled socket: each attempt connects to the addresses just checked
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
