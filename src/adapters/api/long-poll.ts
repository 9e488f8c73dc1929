import type { Principal } from '../../domain/shared/actor';
import { DomainError } from '../../domain/shared/domain-error';
import type { WaitSlots } from './limits';
import { intParam } from './request-params';

/** REST's `?wait=N`: whole seconds from 0 to 60. A bad value is a 400 only once `access` found no 404 first. */
export async function waitSeconds(raw: unknown, access: () => Promise<unknown>): Promise<number> {
  try {
    return intParam('wait', raw, 0, 60, 0);
  } catch (e) {
    await access();
    throw e;
  }
}

/** What a long-poll needs of the HTTP response: to hear the client go away. */
type ClosingResponse = { once(e: 'close', f: () => void): unknown; off(e: 'close', f: () => void): unknown };

/**
 * A long-poll's read (REST `?wait=N`), holding one of the caller's wait slots (429 past the per-token or
 * per-tenant bound) for as long as it waits. A client that goes away (`res` closes) frees its slot and its waiter
 * now (`signal` aborts), not when its wait would have ended.
 */
export async function withWaitSlot<T>(
  slots: WaitSlots,
  p: Principal,
  res: ClosingResponse,
  read: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const release = slots.acquire(p);
  const gone = new AbortController();
  const leave = () => {
    release();
    gone.abort();
  };
  res.once('close', leave);
  try {
    return await read(gone.signal);
  } finally {
    res.off('close', leave);
    release();
  }
}

/**
 * A REST read that may long-poll: `?wait` checked (a 404 from `access` first), answered at once without a wait,
 * else holding a wait slot while it waits.
 */
export async function readOrWait<T>(
  wait: { raw: unknown; access: () => Promise<unknown>; slots: WaitSlots; principal: Principal; res: ClosingResponse },
  read: (seconds: number, signal?: AbortSignal) => Promise<T>,
): Promise<T> {
  const seconds = await waitSeconds(wait.raw, wait.access);
  if (seconds === 0) return read(0);
  return withWaitSlot(wait.slots, wait.principal, wait.res, (signal) => read(seconds, signal));
}

/** How long one read of a watch waits before it reads again (it is woken sooner by any change). */
const WATCH_SLICE_S = 60;

/** A stream's end: aborted when the client cancels or the server stops; `closing()` tells the two apart. */
export interface WatchEnd {
  signal: AbortSignal;
  closing(): boolean;
}

/**
 * A watch (gRPC WatchToolCall, WatchQuestion): the resource at once, then what `worthSending` picks of each
 * change, until it leaves `pending`. Each read waits on the same waiters as a REST long-poll (woken after a
 * commit here, by a notification from another instance, or by the periodic re-check), and the watch holds one of
 * the caller's wait slots while open. A server that stops ends it with `unavailable` (retry after 1 s): the client
 * watches again, here or on another instance.
 */
export async function watchUntilSettled<V extends { status: string }>(
  slots: WaitSlots,
  p: Principal,
  end: WatchEnd,
  read: (waitSeconds: number, signal?: AbortSignal) => Promise<V>,
  send: (v: V) => void,
  worthSending: (before: V, now: V) => boolean,
): Promise<void> {
  const release = slots.acquire(p); // RESOURCE_EXHAUSTED past the per-token or per-tenant bound
  try {
    let last = await read(0);
    send(last);
    while (last.status === 'pending' && !end.signal.aborted) {
      const now = await read(WATCH_SLICE_S, end.signal);
      if (end.signal.aborted && !end.closing()) return; // the client went away
      if (worthSending(last, now)) send(now);
      last = now;
    }
    if (last.status === 'pending' && end.closing())
      throw new DomainError('unavailable', 'unavailable', 'The server is shutting down; watch again', {
        retryAfter: 1,
      });
  } finally {
    release();
  }
}
