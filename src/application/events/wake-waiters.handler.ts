import { Inject } from '@nestjs/common';
import { EventsHandler, IEventHandler } from '@nestjs/cqrs';
import { DomainEvent } from '../../domain/shared/domain-event';
import { EventsCommitted } from '../ports/stored-event';
import { WAITERS, ToolCallWaiters } from '../ports';

const LEAVES_PENDING = new Set(['ToolCallApproved', 'ToolCallRejected', 'ToolCallExpired', 'ToolCallCancelled']);

/** Events after which a long-poll on the call should re-read: it left `pending`. A policy denial never was pending. */
export function wakesWaiters(e: DomainEvent): boolean {
  return !!e.toolCallId && LEAVES_PENDING.has(e.type) && (e.data as { via?: string }).via !== 'policy';
}

/** After commit, wake everyone long-polling a call that just left `pending`. */
@EventsHandler(EventsCommitted)
export class WakeWaitersHandler implements IEventHandler<EventsCommitted> {
  constructor(@Inject(WAITERS) private readonly waiters: ToolCallWaiters) {}

  handle({ events }: EventsCommitted): void {
    for (const e of events) if (wakesWaiters(e)) this.waiters.wake(e.tenantId, e.toolCallId!);
  }
}
