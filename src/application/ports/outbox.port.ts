import type { AuditEvent } from './audit-log.port';

/** Everything that leaves the process after a change: one consumer per way out (Slack, webhooks…). */
export const OUTBOX_CONSUMERS = Symbol('OutboxConsumers');

/**
 * Delivered after commit, in seq order per tenant, at least once (idempotent by `event.id`), retried
 * with backoff while `deliver` throws, never for a change that rolled back (its events do not exist).
 */
export interface OutboxConsumer {
  /** Stable name: the cursor is kept under it. */
  readonly name: string;
  wants(event: AuditEvent): boolean;
  deliver(event: AuditEvent): Promise<void>;
  /**
   * Optional: the wanted events of one batch (in seq order) at once, so a consumer can do its work in
   * a few statements instead of a few per event. All or nothing: throwing retries the whole batch.
   */
  deliverMany?(events: AuditEvent[]): Promise<void>;
  /**
   * Optional: true when none of the tenant's events appended so far can be wanted (a webhook fan-out for a
   * tenant without subscriptions). The relay then moves the cursor to the chain head it read before asking,
   * in one statement, without reading the events.
   */
  wantsNothingOf?(tenantId: string): Promise<boolean>;
}
