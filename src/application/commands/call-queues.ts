import { Injectable } from '@nestjs/common';

/** Bounded: the calls of the last conversations this instance proposed in; older ones fall back to their own key. */
const REMEMBERED = 10_000;

/**
 * Which in-process queue a command on one call waits in. A proposal waits in its conversation's queue; a claim or a
 * result report of a call proposed on this instance waits in the same one, so an agent's report in the background
 * and its next proposal take turns instead of racing their optimistic commits (the loser would be done again, under
 * row locks). A call this instance has not seen keeps a queue of its own; the version check still decides.
 */
@Injectable()
export class CallQueues {
  private readonly conversationOf = new Map<string, string>();

  /** The calls a proposal made in `conversationId`. */
  proposed(tenant: string, conversationId: string, toolCallIds: Iterable<string>): void {
    for (const id of toolCallIds) {
      const key = `${tenant}\u0000${id}`;
      this.conversationOf.delete(key); // re-inserted: the newest go last
      this.conversationOf.set(key, conversationId);
    }
    for (const oldest of this.conversationOf.keys()) {
      if (this.conversationOf.size <= REMEMBERED) break;
      this.conversationOf.delete(oldest);
    }
  }

  static conversation(tenant: string, conversationId: string): string {
    return `conversation\u0000${tenant}\u0000${conversationId}`;
  }

  /** The queue of a command on one call. */
  ofCall(tenant: string, toolCallId: string): string {
    const conversationId = this.conversationOf.get(`${tenant}\u0000${toolCallId}`);
    return conversationId === undefined
      ? `tool-call\u0000${tenant}\u0000${toolCallId}`
      : CallQueues.conversation(tenant, conversationId);
  }
}
