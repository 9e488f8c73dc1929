import { DomainEvent } from './domain-event';

/**
 * Minimal aggregate base: events are only collected here and pulled by the repository,
 * which writes them in the same transaction as the state (never published before commit).
 */
export abstract class AggregateRoot {
  private pending: DomainEvent[] = [];

  protected constructor(
    readonly tenantId: string,
    /** Version loaded from storage; the repository updates `WHERE version = :version`. */
    public version: number,
  ) {}

  protected record(event: DomainEvent): void {
    this.pending.push(event);
  }

  pullEvents(): DomainEvent[] {
    const events = this.pending;
    this.pending = [];
    return events;
  }

  get hasChanges(): boolean {
    return this.pending.length > 0;
  }
}
