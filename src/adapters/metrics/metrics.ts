import { Controller, Get, Header, Injectable, NestMiddleware } from '@nestjs/common';
import { EventsHandler, IEventHandler } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { EventsCommitted } from '../../application/ports/stored-event';
import { Public } from '../http/auth';

/** One registry per app instance, so several instances in one process (tests) never collide. */
@Injectable()
export class TollgateMetrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({ name: 'tollgate_http_requests_total', help: 'HTTP requests by method, route and status', labelNames: ['method', 'route', 'status'], registers: [this.registry] });
  readonly httpDuration = new Histogram({
    name: 'tollgate_http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly decisions = new Counter({ name: 'tollgate_decisions_total', help: 'Tool-call decisions by outcome and channel', labelNames: ['outcome', 'via'], registers: [this.registry] });
  readonly approvalLatency = new Histogram({
    name: 'tollgate_approval_latency_seconds',
    help: "Time from a call's proposal to a person's decision",
    labelNames: ['outcome'],
    buckets: [1, 5, 15, 30, 60, 120, 300, 900, 3600],
    registers: [this.registry],
  });

  constructor(dataSource: DataSource) {
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: 'tollgate_pending_approvals',
      help: 'Tool calls waiting for a person, by tenant (read from the database at scrape time, so every instance agrees)',
      labelNames: ['tenant'],
      registers: [this.registry],
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
      if (via !== 'policy' && typeof data.latencyMs === 'number' && (e.type === 'ToolCallApproved' || e.type === 'ToolCallRejected')) {
        this.metrics.approvalLatency.observe({ outcome }, data.latencyMs / 1000);
      }
    }
  }
}

@Injectable()
export class HttpMetricsMiddleware implements NestMiddleware {
  constructor(private readonly metrics: TollgateMetrics) {}

  use(req: Request, res: Response, next: NextFunction): void {
    const end = this.metrics.httpDuration.startTimer();
    res.once('finish', () => {
      // The route pattern, never the raw path: ids would explode the label set.
      const route = (req.route?.path as string | undefined) ? `${req.baseUrl}${req.route.path}` : 'unmatched';
      end({ method: req.method, route });
      this.metrics.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  }
}

@ApiExcludeController()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: TollgateMetrics) {}

  /** Prometheus text format; no token (CONTRACT §11): expose it on an internal network only. */
  @Get()
  @Public()
  @Header('Cache-Control', 'no-store')
  @Header('Content-Type', Registry.PROMETHEUS_CONTENT_TYPE)
  async scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
