import type { DomainEvent } from '../../domain/shared/domain-event';

/** A domain event as appended to the audit trail: numbered and hash-chained per tenant. */
export interface StoredEvent extends DomainEvent {
  seq: number;
  id: string;
  prevHash: string;
  hash: string;
}

/** Published on the CQRS event bus after the transaction that wrote `events` committed. */
export class EventsCommitted {
  constructor(readonly events: StoredEvent[]) {}
}
