import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { EventsHandler, IEventHandler } from '@nestjs/cqrs';
import type { Span } from '@opentelemetry/api';
import { DataSource } from 'typeorm';
import { AUDIT_LOG, AuditLog } from '../../application/ports/audit-log.port';
import { OUTBOX_CONSUMERS, OutboxConsumer } from '../../application/ports/outbox.port';
import { EventsCommitted } from '../../application/ports/stored-event';
import { TOLLGATE_CONFIG, TollgateConfig } from '../config/config';
import { detachedScope, failSpan, inSpan } from '../observability/trace-context';

const BATCH = 100;
/** Commits within this window share one pass: under load a pass per commit would cost more than the commits. */
const COALESCE_MS = 25;
const TENANTS_PER_PASS = 50;
const MAX_BACKOFF_S = 300;

/** Told of what the relay does, for operators (the metrics adapter counts failures per consumer). */
export const OUTBOX_OBSERVER = Symbol('OutboxObserver');
export interface OutboxObserver {
  /** The consumers whose streams the relay serves, told once when it is made. */
  consumers(names: string[]): void;
  failed(consumer: string): void;
}

/**
 * Delivers committed events to the outbox consumers. Each (tenant, consumer) stream is leased to one
 * instance at a time (`leaseSeconds`; a crashed instance's lease simply runs out), read after its cursor in
 * batches, delivered in order, and the cursor advanced after each batch (and to the last event delivered
 * when one fails). A failure schedules a retry with
 * exponential backoff (1 s, 2 s, 4 s … 5 min) and keeps the event: nothing is skipped or lost.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private soon?: NodeJS.Timeout;
  /** Each consumer's pass in progress, and whether another is wanted after it: channels never wait on each other. */
  private readonly running = new Map<OutboxConsumer, Promise<void>>();
  private readonly again = new Set<OutboxConsumer>();
  /** The tenants whose commits asked for the coming pass. */
  private readonly kicked = new Set<string>();
  /**
   * Per consumer, the tenants it wanted nothing of at its last pass (`wantsNothingOf`), and until when a commit of
   * theirs needs no pass for it: the next timed pass looks again. Without this, each commit of a tenant without
   * webhooks cost a pass of three statements (due streams, the tenant's subscriptions, the cursor moved).
   */
  private readonly idle = new Map<OutboxConsumer, Map<string, number>>();
  private stopped = false;
  private readonly log = new Logger('Outbox');
  /** Passes are kicked from requests that commit, but serve every commit of the moment: none of them owns a pass. */
  private readonly background = detachedScope('tollgate.outbox');

  constructor(
    private readonly dataSource: DataSource,
    @Inject(AUDIT_LOG) private readonly audit: AuditLog,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
    @Optional() @Inject(OUTBOX_CONSUMERS) private readonly consumers: OutboxConsumer[] = [],
    @Optional() @Inject(OUTBOX_OBSERVER) private readonly observer?: OutboxObserver,
  ) {
    observer?.consumers(consumers.map((c) => c.name));
  }

  onApplicationBootstrap(): void {
    if (this.consumers.length === 0 || this.config.outboxPollMs === 0) return;
    this.timer = setInterval(() => this.start(), this.config.outboxPollMs).unref();
    this.start();
  }

  /**
   * Runs a pass shortly (after a commit of `tenants`), or right after the one in progress. A consumer that wanted
   * nothing of every one of those tenants at its last pass sits this one out (see `idle`).
   */
  kick(tenants: Iterable<string> = []): void {
    if (this.stopped || this.consumers.length === 0) return;
    for (const t of tenants) this.kicked.add(t);
    if (this.soon) return;
    this.soon = this.background(() =>
      setTimeout(() => {
        this.soon = undefined;
        const kicked = [...this.kicked];
        this.kicked.clear();
        this.start(kicked);
      }, COALESCE_MS),
    );
  }

  /** A pass of every consumer (the timer), or of those a commit of `kicked` may concern. */
  private start(kicked?: string[]): void {
    for (const consumer of this.consumers) if (!kicked || !this.idleOf(consumer, kicked)) this.startFor(consumer);
  }

  /** True when the consumer wanted nothing of each of `tenants` at its last pass, and the timer will look again. */
  private idleOf(consumer: OutboxConsumer, tenants: string[]): boolean {
    const idle = this.idle.get(consumer);
    if (!idle || tenants.length === 0) return false;
    const now = Date.now();
    return tenants.every((t) => (idle.get(t) ?? 0) > now);
  }

  /**
   * Notes that `consumer` wants nothing of `tenantId` for now. Only with the timer on: it is what looks again,
   * so a subscription made meanwhile gets its first events within `outboxPollMs` (the events before it were
   * never owed to it). The note outlives two ticks, so that the timed pass, not a commit just before it, renews
   * it; a tenant the timed pass did not reach gets its commits' passes again after that. With the timer off,
   * every commit keeps its pass.
   */
  private noteIdle(consumer: OutboxConsumer, tenantId: string, wantsNothing: boolean): void {
    let idle = this.idle.get(consumer);
    if (!wantsNothing || this.config.outboxPollMs === 0) {
      idle?.delete(tenantId);
      return;
    }
    if (!idle) this.idle.set(consumer, (idle = new Map()));
    idle.set(tenantId, Date.now() + 2 * this.config.outboxPollMs);
  }

  private startFor(consumer: OutboxConsumer): void {
    if (this.stopped) return;
    if (this.running.has(consumer)) {
      this.again.add(consumer);
      return;
    }
    const run = this.passFor(consumer)
      .catch((e) => this.log.warn(`outbox pass of ${consumer.name} failed: ${(e as Error).message}`))
      .finally(() => {
        this.running.delete(consumer);
        if (this.again.delete(consumer)) this.startFor(consumer);
      });
    this.running.set(consumer, run);
  }

  /**
   * One pass over every consumer's due streams; resolves when done (tests call it directly). Each consumer
   * passes on its own: a channel that is slow to answer delays only its own deliveries, not the others'.
   */
  async pass(): Promise<void> {
    await Promise.all(this.consumers.map((consumer) => this.passFor(consumer)));
  }

  private async passFor(consumer: OutboxConsumer): Promise<void> {
    const due: Array<{ tenant_id: string; seq: string }> = await this.dataSource.query(
      `SELECT h.tenant_id, h.seq FROM audit_heads h
         LEFT JOIN outbox_cursors c ON c.tenant_id = h.tenant_id AND c.consumer = $1
        WHERE h.seq > coalesce(c.last_seq, 0)
          AND (c.next_attempt_at IS NULL OR c.next_attempt_at <= now())
          AND (c.lease_until IS NULL OR c.lease_until < now() OR c.lease_owner = $2)
        LIMIT ${TENANTS_PER_PASS}`,
      [consumer.name, this.config.instanceId],
    );
    for (const { tenant_id, seq } of due) {
      if (this.stopped) return;
      const wantsNothing = consumer.wantsNothingOf !== undefined && (await consumer.wantsNothingOf(tenant_id));
      if (wantsNothing) await this.skipTo(consumer.name, tenant_id, Number(seq));
      else await this.drain(consumer, tenant_id);
      this.noteIdle(consumer, tenant_id, wantsNothing);
    }
  }

  /** One tenant's stream of one consumer, in a span of its own (its queries and the consumer's calls are children). */
  private drain(consumer: OutboxConsumer, tenantId: string): Promise<void> {
    return inSpan(
      `outbox ${consumer.name}`,
      { 'tollgate.outbox.consumer': consumer.name, 'tollgate.tenant': tenantId },
      (span) => this.drainStream(consumer, tenantId, span),
    );
  }

  private async drainStream(consumer: OutboxConsumer, tenantId: string, span: Span): Promise<void> {
    const lease = await this.lease(consumer.name, tenantId);
    if (lease === null) return; // another instance holds this stream
    let lastSeq = lease;
    /** The last event handled for sure: where the cursor goes if the batch fails half-way. */
    let delivered = lease;
    let released = false;
    try {
      for (;;) {
        const events = await this.audit.list({ tenantId, afterSeq: lastSeq }, BATCH);
        if (events.length === 0) break;
        const wanted = events.filter((e) => consumer.wants(e));
        if (consumer.deliverMany) {
          if (wanted.length > 0) await consumer.deliverMany(wanted);
        } else {
          for (const event of wanted) {
            await consumer.deliver(event);
            delivered = event.seq;
          }
        }
        delivered = lastSeq = events[events.length - 1].seq;
        const last = events.length < BATCH || this.stopped;
        // One cursor write per batch, not per event: after a crash a consumer may see up to a batch again
        // (deliveries are at least once, idempotent by event id), and skipped events cost nothing. The last
        // one also gives the lease back, so another instance's commits are delivered by that instance at once.
        // The lease is given back only if it is still ours (it may have run out and been taken over meanwhile).
        await this.dataSource.query(
          `UPDATE outbox_cursors SET last_seq = $3, attempts = 0, next_attempt_at = NULL, last_error = NULL${
            last
              ? ', lease_owner = CASE WHEN lease_owner = $4 THEN NULL ELSE lease_owner END, lease_until = CASE WHEN lease_owner = $4 THEN NULL ELSE lease_until END'
              : ''
          }
            WHERE tenant_id = $1 AND consumer = $2`,
          last ? [tenantId, consumer.name, lastSeq, this.config.instanceId] : [tenantId, consumer.name, lastSeq],
        );
        if (last) {
          released = true;
          break;
        }
      }
      span.setAttribute('tollgate.outbox.last_seq', lastSeq);
      if (!released) await this.release(consumer.name, tenantId);
    } catch (e) {
      const message = (e as Error).message ?? String(e);
      failSpan(span, e);
      this.observer?.failed(consumer.name);
      this.log.warn(`${consumer.name} failed on ${tenantId} after seq ${delivered}: ${message}`);
      await this.dataSource.query(
        `UPDATE outbox_cursors SET last_seq = greatest(last_seq, $4), attempts = attempts + 1, last_error = $3, lease_owner = NULL, lease_until = NULL,
                next_attempt_at = now() + make_interval(secs => least(${MAX_BACKOFF_S}, power(2, attempts)))
          WHERE tenant_id = $1 AND consumer = $2`,
        [tenantId, consumer.name, message.slice(0, 2000), delivered],
      );
    }
  }

  /**
   * Moves a stream's cursor to `seq` (the chain head read before the consumer said it wants nothing) in one
   * statement: unless another instance holds the stream, and never backwards. No lease is taken or left.
   */
  private async skipTo(consumer: string, tenantId: string, seq: number): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO outbox_cursors (tenant_id, consumer, last_seq) VALUES ($1, $2, $3)
       ON CONFLICT (tenant_id, consumer) DO UPDATE SET last_seq = greatest(outbox_cursors.last_seq, EXCLUDED.last_seq), attempts = 0, next_attempt_at = NULL, last_error = NULL
         WHERE outbox_cursors.lease_until IS NULL OR outbox_cursors.lease_until < now() OR outbox_cursors.lease_owner = $4`,
      [tenantId, consumer, seq, this.config.instanceId],
    );
  }

  /** Takes (or renews) the stream's lease; answers its cursor, or null when someone else holds it. */
  private async lease(consumer: string, tenantId: string): Promise<number | null> {
    const rows: Array<{ last_seq: string }> = await this.dataSource.query(
      `INSERT INTO outbox_cursors (tenant_id, consumer, lease_owner, lease_until) VALUES ($1, $2, $3, now() + make_interval(secs => $4))
       ON CONFLICT (tenant_id, consumer) DO UPDATE SET lease_owner = EXCLUDED.lease_owner, lease_until = EXCLUDED.lease_until
         WHERE outbox_cursors.lease_until IS NULL OR outbox_cursors.lease_until < now() OR outbox_cursors.lease_owner = EXCLUDED.lease_owner
       RETURNING last_seq`,
      [tenantId, consumer, this.config.instanceId, this.config.outboxLeaseSeconds],
    );
    return rows.length ? Number(rows[0].last_seq) : null;
  }

  private async release(consumer: string, tenantId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE outbox_cursors SET lease_owner = NULL, lease_until = NULL WHERE tenant_id = $1 AND consumer = $2 AND lease_owner = $3`,
      [tenantId, consumer, this.config.instanceId],
    );
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.soon);
    await Promise.all(this.running.values());
  }
}

/** A commit is the moment to deliver: no waiting for the next poll. */
@EventsHandler(EventsCommitted)
export class KickOutboxOnCommit implements IEventHandler<EventsCommitted> {
  constructor(private readonly relay: OutboxRelay) {}
  handle(committed: EventsCommitted): void {
    this.relay.kick(new Set(committed.events.map((e) => e.tenantId)));
  }
}
