import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import type { Span } from '@opentelemetry/api';
import type { AuditEvent } from '../../application/ports/audit-log.port';
import type { OutboxConsumer } from '../../application/ports/outbox.port';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';
import { detachedScope, failSpan, inSpan } from '../../infrastructure/observability/trace-context';
import { TollgateMetrics, WebhookOutcome } from '../metrics/metrics';
import { EgressGuard } from './egress-guard';
import { sendWebhook } from './webhook-sender';
import { signWebhook } from './webhook-signature';
import { DueDelivery, WebhookAttempt, WebhookStore } from './webhook.store';

const BATCH = 20;
const MAX_RETRY_MS = 60 * 60 * 1000;

/**
 * Sends queued webhook deliveries: signed per Standard Webhooks, only to destinations the egress guard allows
 * (checked again at each attempt), a 2xx answer within the timeout counts (redirects are not followed),
 * anything else is retried with exponential backoff (base, 2×base, 4×base … at most an hour apart) until
 * `maxAttempts`, then the delivery is marked failed. Each delivery is leased while in flight, so several
 * instances share the work without sending one twice at the same time. Every attempt is recorded.
 * Endpoints are served in parallel, each one delivery at a time, oldest event first; a delivery waiting for
 * its retry does not hold up the next ones, so receivers that care about order sort by `data.seq`.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private readonly log = new Logger('Webhooks');
  /** Kicked from the outbox (itself kicked by requests): each delivery starts a trace of its own. */
  private readonly background = detachedScope('tollgate.webhooks');

  /** Checks each attempt on the addresses resolved for it: the URL passed at registration, but DNS may answer otherwise now. */
  private readonly guard: EgressGuard;

  constructor(
    private readonly store: WebhookStore,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
    @Optional() private readonly metrics?: TollgateMetrics,
  ) {
    this.guard = new EgressGuard(config.webhooks.allowPrivate);
  }

  onApplicationBootstrap(): void {
    if (this.config.outboxPollMs === 0) return; // deliveries are off on this instance, like the outbox
    this.timer = setInterval(() => this.kick(), Math.min(this.config.outboxPollMs, 1000)).unref();
    this.kick();
  }

  /** Sends what is due now, or right after the pass in progress. */
  kick(): void {
    if (this.stopped || !this.timer) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.background(() => this.pass())
      .catch((e) => this.log.warn(`webhook pass failed: ${(e as Error).message}`))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async pass(): Promise<void> {
    const { timeoutMs } = this.config.webhooks;
    while (!this.stopped) {
      const due = await this.store.takeDue(BATCH, timeoutMs + 5000);
      await Promise.all(due.map((d) => this.send(d)));
      if (due.length === 0) return;
    }
  }

  /** One attempt, in a span of its own: the POST is its child and carries its `traceparent`. */
  private send(d: DueDelivery): Promise<void> {
    const attributes = {
      'tollgate.tenant': d.tenantId,
      'tollgate.webhook.id': d.webhookId,
      'tollgate.event.id': d.eventId,
      'tollgate.event.seq': d.eventSeq,
      'tollgate.webhook.attempt': d.attempts + 1,
    };
    return inSpan('webhook deliver', attributes, (span) => this.attempt(d, span));
  }

  private async attempt(d: DueDelivery, span: Span): Promise<void> {
    const { timeoutMs, maxAttempts, retryBaseMs } = this.config.webhooks;
    const started = Date.now();
    const at = new Date(started).toISOString();
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Tollgate-Webhooks/1',
      ...signWebhook(d.secret, d.eventId, Math.floor(started / 1000), d.body),
    };
    const outcome = await sendWebhook(this.guard, d.url, headers, d.body, timeoutMs);
    const durationMs = Date.now() - started;
    const ok = 'status' in outcome && outcome.status >= 200 && outcome.status < 300;
    const attempt: WebhookAttempt =
      'status' in outcome
        ? { at, status: outcome.status, durationMs, ...(ok ? {} : { error: `HTTP ${outcome.status}` }) }
        : { at, error: outcome.error, durationMs };
    const n = d.attempts + 1;
    const retryInMs = n >= maxAttempts ? null : Math.min(MAX_RETRY_MS, retryBaseMs * 2 ** (n - 1));
    await this.store.recordAttempt(d, attempt, ok ? { delivered: true } : { delivered: false, retryInMs });
    const result: WebhookOutcome = ok ? 'delivered' : retryInMs === null ? 'gave_up' : 'failed';
    this.metrics?.webhookAttempted(result, durationMs / 1000);
    span.setAttribute('tollgate.webhook.outcome', result);
    if (!ok) failSpan(span, `webhook attempt ${result}: ${attempt.error}`);
    // The cause (the address, what the socket said) is for the operator's log, not for the tenant's attempt log.
    const cause = 'cause' in outcome ? `: ${outcome.cause}` : '';
    if (!ok)
      this.log.warn(
        `webhook ${d.webhookId} attempt ${n} for ${d.eventId} failed (${attempt.error}${cause})${retryInMs === null ? '; giving up' : ''}`,
      );
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }
}

/**
 * The outbox's way out to webhooks: each committed event is queued, exactly once per subscription that
 * wants its type, with the body that will be signed and sent (`{type, timestamp, data: <the audit event>}`).
 * Queuing is quick and local, so a slow receiver never holds up the tenant's outbox stream.
 */
@Injectable()
export class WebhookFanOut implements OutboxConsumer {
  readonly name = 'webhooks';

  constructor(
    private readonly store: WebhookStore,
    private readonly dispatcher: WebhookDispatcher,
  ) {}

  wants(): boolean {
    return true;
  }

  deliver(e: AuditEvent): Promise<void> {
    return this.deliverMany([e]);
  }

  /**
   * No subscriptions now: nothing appended so far is owed to anyone, since a subscription made later gets only
   * the events after the chain head at its making (and the relay read the head before asking).
   */
  async wantsNothingOf(tenantId: string): Promise<boolean> {
    return (await this.store.subscriptions(tenantId)).length === 0;
  }

  /** A batch of one tenant's events: one read of its subscriptions, nothing more when it has none (the usual case). */
  async deliverMany(events: AuditEvent[]): Promise<void> {
    const subscriptions = await this.store.subscriptions(events[0].tenant);
    if (subscriptions.length === 0) return;
    for (const e of events) {
      // A subscription gets the events appended after the chain head it was made at (see WebhookStore).
      const ids = subscriptions
        .filter((w) => (w.events.includes(e.type) || w.events.includes('*')) && w.afterSeq < e.seq)
        .map((w) => w.id);
      await this.queue(e, ids);
    }
  }

  private async queue(e: AuditEvent, webhookIds: string[]): Promise<void> {
    if (webhookIds.length === 0) return;
    const body = JSON.stringify({ type: e.type, timestamp: e.at, data: e });
    if ((await this.store.enqueue(e.tenant, webhookIds, e, body)) > 0) this.dispatcher.kick();
  }
}
