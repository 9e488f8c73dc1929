import { TollgateError } from './errors.js';
import { sleep } from './http.js';
import { throwIfAborted } from './signals.js';

/** How to long-poll one thing that waits for a person: a tool call's decision, a question's answer. */
export interface LongPoll<T> {
  /** Still waiting for a person. */
  pending(t: T): boolean;
  /** When the server gives up on it (ms since the epoch), NaN when unknown. */
  expiresAt(t: T): number;
  /** Reads it again, the server holding the answer up to `wait` seconds while it stays pending. */
  read(t: T, wait: number): Promise<T>;
  /** The longest wait per request, in seconds (the client's `pollSeconds`). */
  pollSeconds: number | undefined;
  /** The transport's backoff (ms) for a retry attempt. */
  backoff(attempt: number): number;
  signal?: AbortSignal;
}

/**
 * Long-polls until `t` is no longer pending. It rides out network errors and server restarts (it keeps asking,
 * with backoff, while the thing may still be settled) and honours the signal.
 */
export async function untilSettled<T>(t: T, p: LongPoll<T>): Promise<T> {
  const poll = Math.max(1, Math.min(60, p.pollSeconds ?? 30));
  let failures = 0;
  while (p.pending(t)) {
    throwIfAborted(p.signal);
    const expiresAt = p.expiresAt(t);
    const left = Number.isNaN(expiresAt) ? poll : Math.ceil((expiresAt - Date.now()) / 1000);
    // At least a second: past the expiry the server expires it on read, whatever the clocks say.
    const wait = Math.max(1, Math.min(poll, left));
    try {
      t = await p.read(t, wait);
      failures = 0;
    } catch (e) {
      throwIfAborted(p.signal);
      // The transport gave up on a transient failure (a long outage): keep at it while a person may still
      // settle it, i.e. until a minute past its expiry by our clock. Anything else is the caller's to see.
      const transient = e instanceof TollgateError && (e.status === 0 || e.status === 429 || e.status >= 502);
      if (!transient || (!Number.isNaN(expiresAt) && Date.now() > expiresAt + 60_000)) throw e;
      failures += 1;
      await sleep(p.backoff(failures + 3), p.signal);
    }
  }
  return t;
}
