import { Controller, Get, Header, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { EventsHandler, IEventHandler } from '@nestjs/cqrs';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PerformanceObserver } from 'node:perf_hooks';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { EventsCommitted } from '../../application/ports/stored-event';
import { AuditTrailVerified } from '../../application/queries/audit/audit.handlers';
import { routeOf } from '../../infrastructure/observability/access-log';
import { OutboxObserver } from '../../infrastructure/outbox/outbox-relay';
import { EventFeed } from '../../infrastructure/streaming/event-feed';
import { InProcessWaiters } from '../../infrastructure/waiting/in-process-waiters';
import { Public } from '../http/auth';

/** How a webhook attempt ended: answered 2xx, failed with a retry to come, or failed for the last time. */
export type WebhookOutcome = 'delivered' | 'failed' | 'gave_up';

interface OutboxLag {
  consumer: string;
  pending: number;
  oldestSeconds: number;
  failing: number;
}

interface WebhookBacklog {
  pending: number;
  oldestSeconds: number;
}

/**
 * One registry per app instance, so several instances in one process (tests) never collide. Gauges that read
 * the database do it when scraped (`collect`), so every instance reports the same figure whichever did the
 * work; each is one bounded query, and none is labelled by tenant but the pending approvals (as before).
 */
@Injectable()
export class TollgateMetrics implements OutboxObserver, OnApplicationShutdown {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'tollgate_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'tollgate_http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  private readonly grpcCalls = new Counter({
    name: 'tollgate_grpc_requests_total',
    help: 'gRPC calls by service, method and status code (OK, NOT_FOUND, …)',
    labelNames: ['service', 'method', 'code'],
    registers: [this.registry],
  });
  private readonly grpcDuration = new Histogram({
    name: 'tollgate_grpc_request_duration_seconds',
    help: 'gRPC call duration (a WatchToolCall lasts as long as the watch)',
    labelNames: ['service', 'method'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
    registers: [this.registry],
  });
  readonly decisions = new Counter({
    name: 'tollgate_decisions_total',
    help: 'Tool-call decisions by outcome and channel',
    labelNames: ['outcome', 'via'],
    registers: [this.registry],
  });
  readonly approvalLatency = new Histogram({
    name: 'tollgate_approval_latency_seconds',
    help: "Time from a call's proposal to a person's decision",
    labelNames: ['outcome'],
    buckets: [1, 5, 15, 30, 60, 120, 300, 900, 3600],
    registers: [this.registry],
  });
  private readonly outboxFailures = new Counter({
    name: 'tollgate_outbox_failures_total',
    help: 'Outbox deliveries that failed on this instance, by consumer (the stream backs off and retries)',
    labelNames: ['consumer'],
    registers: [this.registry],
  });
  private readonly webhookAttempts = new Counter({
    name: 'tollgate_webhook_deliveries_total',
    help: 'Webhook delivery attempts made by this instance, by outcome: delivered, failed (retried later), gave_up (last attempt failed)',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  private readonly webhookDuration = new Histogram({
    name: 'tollgate_webhook_delivery_duration_seconds',
    help: 'Time one webhook attempt took, destination check included, by outcome',
    labelNames: ['outcome'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  private readonly verifications = new Counter({
    name: 'tollgate_audit_verifications_total',
    help: 'Audit trail verifications run on this instance, by result (ok, failed)',
    labelNames: ['result'],
    registers: [this.registry],
  });
  /** Registered at the first verification: before it there is no result, and a 0 would read as a failure. */
  private readonly verifyOk = new Gauge({
    name: 'tollgate_audit_verify_ok',
    help: 'Result of the last audit trail verification on this instance: 1 intact, 0 failed',
    registers: [],
  });
  private readonly verifyTime = new Gauge({
    name: 'tollgate_audit_verify_timestamp_seconds',
    help: 'When the last audit trail verification on this instance finished (Unix time)',
    registers: [],
  });

  /** Read once per scrape, shared by the gauges that show them. */
  private outboxLag?: Promise<OutboxLag[]>;
  private webhookBacklog?: Promise<WebhookBacklog>;

  /** The outbox's consumers, as the relay names them (it tells us: asking for them here would make a cycle). */
  private outboxConsumers: string[] = [];

  /** What collectDefaultMetrics started and never stops: its GC histogram's PerformanceObserver. */
  private readonly observers: PerformanceObserver[] = [];

  /**
   * prom-client's GC histogram is fed by a PerformanceObserver it never disconnects. Node keeps every observer
   * (and so its callback, this registry, the gauges' `collect` closures and the whole app) for as long as the
   * process lives: each app started and closed in one process (a test file's servers) stayed in memory.
   */
  onApplicationShutdown(): void {
    for (const o of this.observers.splice(0)) o.disconnect();
    this.registry.clear();
  }

  constructor(
    private readonly dataSource: DataSource,
    waiters: InProcessWaiters,
    feed: EventFeed,
  ) {
    // The observers made while the default metrics start are noted (synchronously, the patch undone at once) so
    // that shutdown can disconnect them: prom-client gives no handle on them.
    const observe = PerformanceObserver.prototype.observe;
    const observers = this.observers;
    PerformanceObserver.prototype.observe = function (this: PerformanceObserver, ...args) {
      observers.push(this);
      return observe.apply(this, args);
    };
    try {
      collectDefaultMetrics({ register: this.registry });
    } finally {
      PerformanceObserver.prototype.observe = observe;
    }
    const registers = [this.registry];
    const metrics = this;
    new Gauge({
      name: 'tollgate_pending_approvals',
      help: 'Tool calls waiting for a person, by tenant (read from the database at scrape time, so every instance agrees)',
      labelNames: ['tenant'],
      registers,
      async collect() {
        this.reset();
        try {
          const rows: Array<{ tenant_id: string; n: string }> = await dataSource.query(
            `SELECT tenant_id, count(*) AS n FROM tool_calls WHERE status = 'pending' GROUP BY tenant_id`,
          );
          for (const r of rows) this.set({ tenant: r.tenant_id }, Number(r.n));
        } catch {
          // No database, no figure: the scrape still answers, and readiness says why.
        }
      },
    });
    const lag = (pick: (r: OutboxLag) => number) =>
      async function collect(this: Gauge<'consumer'>) {
        for (const r of await metrics.outboxLagNow()) this.set({ consumer: r.consumer }, pick(r));
      };
    new Gauge({
      name: 'tollgate_outbox_pending_events',
      help: 'Committed events a consumer has not yet been through, all tenants together (database, at scrape time)',
      labelNames: ['consumer'],
      registers,
      collect: lag((r) => r.pending),
    });
    new Gauge({
      name: 'tollgate_outbox_oldest_pending_seconds',
      help: 'Age of the oldest event a consumer has not yet been through (0 when none; database, at scrape time)',
      labelNames: ['consumer'],
      registers,
      collect: lag((r) => r.oldestSeconds),
    });
    new Gauge({
      name: 'tollgate_outbox_failing_streams',
      help: "Tenants' streams of a consumer whose last delivery failed and that wait for their retry (database, at scrape time)",
      labelNames: ['consumer'],
      registers,
      collect: lag((r) => r.failing),
    });
    new Gauge({
      name: 'tollgate_webhook_deliveries_pending',
      help: 'Webhook deliveries queued and not yet delivered or given up (database, at scrape time)',
      registers,
      async collect() {
        this.set((await metrics.webhookBacklogNow()).pending);
      },
    });
    new Gauge({
      name: 'tollgate_webhook_oldest_pending_seconds',
      help: 'Age of the oldest webhook delivery not yet delivered or given up (0 when none; database, at scrape time)',
      registers,
      async collect() {
        this.set((await metrics.webhookBacklogNow()).oldestSeconds);
      },
    });
    new Gauge({
      name: 'tollgate_open_event_streams',
      help: 'Server-Sent Event streams open on this instance',
      registers,
      collect() {
        this.set(feed.openStreams);
      },
    });
    new Gauge({
      name: 'tollgate_open_long_polls',
      help: 'Long-polls (GET /v1/tool-calls/{id}?wait=N) and gRPC WatchToolCall streams waiting on this instance',
      registers,
      collect() {
        this.set(waiters.size);
      },
    });
  }

  /** The Prometheus text of one scrape; the database is read afresh for it. */
  async render(): Promise<string> {
    this.outboxLag = this.webhookBacklog = undefined;
    return this.registry.metrics();
  }

  /** A gRPC call ended; `path` is `/package.Service/Method`. */
  grpcCall(path: string, code: string, seconds: number): void {
    const [, service = 'unknown', method = 'unknown'] = path.split('/');
    this.grpcCalls.inc({ service, method, code });
    this.grpcDuration.observe({ service, method }, seconds);
  }

  consumers(names: string[]): void {
    this.outboxConsumers = names;
  }

  failed(consumer: string): void {
    this.outboxFailures.inc({ consumer });
  }

  webhookAttempted(outcome: WebhookOutcome, seconds: number): void {
    this.webhookAttempts.inc({ outcome });
    this.webhookDuration.observe({ outcome }, seconds);
  }

  auditVerified(ok: boolean, at: Date): void {
    this.verifications.inc({ result: ok ? 'ok' : 'failed' });
    if (!this.registry.getSingleMetric('tollgate_audit_verify_ok')) {
      this.registry.registerMetric(this.verifyOk);
      this.registry.registerMetric(this.verifyTime);
    }
    this.verifyOk.set(ok ? 1 : 0);
    this.verifyTime.set(at.getTime() / 1000);
  }

  /**
   * Per consumer, over every tenant's stream: events after its cursor, the age of the first of them, and the
   * streams in backoff. One pass over the tenants' heads, an index probe for each tenant that lags.
   */
  private outboxLagNow(): Promise<OutboxLag[]> {
    return (this.outboxLag ??= this.dataSource
      .query(
        `SELECT c.consumer,
                coalesce(sum(greatest(h.seq - coalesce(oc.last_seq, 0), 0)), 0) AS pending,
                coalesce(extract(epoch FROM now() - min(first.recorded_at)), 0) AS oldest,
                count(*) FILTER (WHERE oc.attempts > 0) AS failing
           FROM unnest($1::text[]) AS c(consumer)
           LEFT JOIN audit_heads h ON true
           LEFT JOIN outbox_cursors oc ON oc.tenant_id = h.tenant_id AND oc.consumer = c.consumer
           LEFT JOIN LATERAL (
             SELECT e.recorded_at FROM events e WHERE e.tenant_id = h.tenant_id AND e.seq > coalesce(oc.last_seq, 0) ORDER BY e.seq LIMIT 1
           ) first ON h.seq > coalesce(oc.last_seq, 0)
          GROUP BY c.consumer`,
        [this.outboxConsumers],
      )
      .then((rs: Array<{ consumer: string; pending: string; oldest: string; failing: string }>) =>
        rs.map((r) => ({
          consumer: r.consumer,
          pending: Number(r.pending),
          oldestSeconds: Math.max(0, Number(r.oldest)),
          failing: Number(r.failing),
        })),
      )
      .catch(() => [] as OutboxLag[])); // no database, no figure: the scrape still answers
  }

  private webhookBacklogNow(): Promise<WebhookBacklog> {
    return (this.webhookBacklog ??= this.dataSource
      .query(
        `SELECT count(*) AS n, coalesce(extract(epoch FROM now() - min(created_at)), 0) AS oldest FROM webhook_deliveries WHERE status = 'pending'`,
      )
      .then(([r]: Array<{ n: string; oldest: string }>) => ({
        pending: Number(r.n),
        oldestSeconds: Math.max(0, Number(r.oldest)),
      }))
      .catch(() => ({ pending: 0, oldestSeconds: 0 })));
  }
}

const DECISIONS: Record<string, string> = {
  ToolCallAutoApproved: 'approved',
  ToolCallApproved: 'approved',
  ToolCallRejected: 'rejected',
  ToolCallExpired: 'expired',
  ToolCallCancelled: 'cancelled',
};

/** Counts decisions from committed events: what is counted is what was recorded. */
@EventsHandler(EventsCommitted)
export class DecisionMetricsHandler implements IEventHandler<EventsCommitted> {
  constructor(private readonly metrics: TollgateMetrics) {}

  handle({ events }: EventsCommitted): void {
    for (const e of events) {
      const outcome = DECISIONS[e.type];
      if (!outcome) continue;
      const data = e.data as { via?: string; latencyMs?: number };
      const via = data.via ?? e.actor.via;
      this.metrics.decisions.inc({ outcome, via });
      if (
        via !== 'policy' &&
        typeof data.latencyMs === 'number' &&
        (e.type === 'ToolCallApproved' || e.type === 'ToolCallRejected')
      ) {
        this.metrics.approvalLatency.observe({ outcome }, data.latencyMs / 1000);
      }
    }
  }
}

/** Every verification run through this instance (REST, and the CLI's `audit verify`, which calls it) sets the verify gauges. */
@EventsHandler(AuditTrailVerified)
export class AuditVerifyMetricsHandler implements IEventHandler<AuditTrailVerified> {
  constructor(private readonly metrics: TollgateMetrics) {}

  handle({ ok, at }: AuditTrailVerified): void {
    this.metrics.auditVerified(ok, at);
  }
}

/** Counts and times every answered request by route pattern: a Fastify `onRequest` hook. */
export function httpMetrics(
  metrics: TollgateMetrics,
): (req: FastifyRequest, reply: FastifyReply, done: () => void) => void {
  return (req, reply, done) => {
    const end = metrics.httpDuration.startTimer();
    reply.raw.once('finish', () => {
      // The route pattern, never the raw path: ids would explode the label set.
      const route = routeOf(req) ?? 'unmatched';
      end({ method: req.method, route });
      metrics.httpRequests.inc({ method: req.method, route, status: String(reply.raw.statusCode) });
    });
    done();
  };
}

@ApiTags('health')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: TollgateMetrics) {}

  /** Prometheus text format; no token: expose it on an internal network only. */
  @Get()
  @Public()
  @ApiOperation({
    summary: 'Prometheus metrics',
    description:
      'Prometheus text exposition format 0.0.4. Needs no token: expose it on an internal network only. docs/OPERATIONS.md lists every metric.',
    operationId: 'getMetrics',
    security: [],
  })
  @ApiProduces('text/plain')
  @ApiOkResponse({
    description: 'The metrics, in Prometheus text format',
    content: { 'text/plain': { schema: { type: 'string' } } },
  })
  @Header('Cache-Control', 'no-store')
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  async scrape(): Promise<string> {
    return this.metrics.render();
  }
}
