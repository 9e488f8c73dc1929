import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import { ToolCallWaiters, Watch } from '../../application/ports';

interface Entry {
  woken: boolean;
  resolve?: () => void;
}

/**
 * Long-poll waiters of this process, keyed by tool call. Woken after commit by the event
 * handler; at shutdown every waiter is answered at once so in-flight requests can finish.
 */
@Injectable()
export class InProcessWaiters implements ToolCallWaiters, BeforeApplicationShutdown {
  private readonly byCall = new Map<string, Set<Entry>>();
  closing = false;

  watch(tenantId: string, toolCallId: string): Watch {
    const key = `${tenantId}\u0000${toolCallId}`;
    const entry: Entry = { woken: false };
    let set = this.byCall.get(key);
    if (!set) this.byCall.set(key, (set = new Set()));
    set.add(entry);
    return {
      next: (timeoutMs, signal) =>
        new Promise<void>((resolve) => {
          if (entry.woken || this.closing || signal?.aborted) {
            entry.woken = false;
            return resolve();
          }
          const timer = setTimeout(done, timeoutMs);
          // A client that went away ends the wait now, not when its timeout would have.
          signal?.addEventListener('abort', done, { once: true });
          function done() {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            entry.resolve = undefined;
            entry.woken = false;
            resolve();
          }
          entry.resolve = done;
        }),
      close: () => {
        set!.delete(entry);
        if (set!.size === 0) this.byCall.delete(key);
      },
    };
  }

  wake(tenantId: string, toolCallId: string): void {
    for (const e of this.byCall.get(`${tenantId}\u0000${toolCallId}`) ?? []) {
      e.woken = true;
      e.resolve?.();
    }
  }

  /** The calls someone is waiting on right now. */
  waitedOn(): Array<{ tenantId: string; toolCallId: string }> {
    return [...this.byCall.keys()].map((k) => {
      const [tenantId, toolCallId] = k.split('\u0000');
      return { tenantId, toolCallId };
    });
  }

  /** After a lost notification channel: everyone re-reads. */
  wakeAll(): void {
    for (const set of this.byCall.values())
      for (const e of set) {
        e.woken = true;
        e.resolve?.();
      }
  }

  get size(): number {
    let n = 0;
    for (const s of this.byCall.values()) n += s.size;
    return n;
  }

  beforeApplicationShutdown(): void {
    this.closing = true;
    for (const set of this.byCall.values()) for (const e of set) e.resolve?.();
  }
}
