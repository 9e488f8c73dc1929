import { Inject } from '@nestjs/common';
import { EventsHandler, IEventHandler } from '@nestjs/cqrs';
import { EventsCommitted } from '../ports/stored-event';
import { WAITERS, ToolCallWaiters } from '../ports';

const LEAVES_PENDING = new Set(['ToolCallApproved', 'ToolCallRejected', 'ToolCallExpired', 'ToolCallCancelled']);

/** After commit, wake everyone long-polling a call that just left `pending`. */
@EventsHandler(EventsCommitted)
export class WakeWaitersHandler implements IEventHandler<EventsCommitted> {
  constructor(@Inject(WAITERS) private readonly waiters: ToolCallWaiters) {}

  handle({ events }: EventsCommitted): void {
    for (const e of events) if (e.toolCallId && LEAVES_PENDING.has(e.type)) this.waiters.wake(e.tenantId, e.toolCallId);
  }
}
