import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { CLOCK, Clock } from '../../application/ports';
import { AUDIT_LOG, AuditLog } from '../../application/ports/audit-log.port';
import { AuditCheckpoint, AuditCheckpointQuery } from '../../application/queries/audit/audit.queries';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';
import { anchorDecision } from './anchor-decision';
import { AnchorStore } from './anchor.store';
import { CheckpointSink } from './checkpoint-sinks';

export const CHECKPOINT_SINK = Symbol('CheckpointSink');

/** Tenants claimed at a time, and at most per run: a run is bounded whatever the number of tenants. */
const CLAIM_BATCH = 20;
const MAX_TENANTS_PER_RUN = 1000;

export interface AnchorRun {
  written: string[];
  failed: string[];
  refused: string[];
}

/**
 * Audit anchoring without a cron job (issue 28, part 8): every TOLLGATE_CHECKPOINT_INTERVAL, for each tenant
 * whose chain has new events since its last checkpoint, signs the head (as GET /v1/audit/checkpoint does) and
 * writes it to the sink outside the database. Safe on many instances: each tenant is claimed in audit_anchors
 * for the run, so one instance writes it. A failed write is logged and tried again next run; nothing here
 * blocks a request. A chain that no longer reaches the last checkpoint is not signed again (logged as an error).
 */
@Injectable()
export class CheckpointScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('AuditCheckpoints');
  private timer?: NodeJS.Timeout;
  private running?: Promise<AnchorRun>;

  constructor(
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
    @Inject(CHECKPOINT_SINK) private readonly sink: CheckpointSink | null,
    @Inject(AUDIT_LOG) private readonly audit: AuditLog,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly queries: QueryBus,
    private readonly store: AnchorStore,
  ) {}

  onApplicationBootstrap(): void {
    const sink = this.sink;
    if (!sink) return;
    this.timer = setInterval(() => void this.tick(), this.config.checkpoints.intervalMs).unref();
    // A destination the operator did not allow is refused before any checkpoint is due, and said so now.
    void sink
      .preflight?.()
      .then((refused) => {
        if (refused)
          this.log.error(
            `TOLLGATE_CHECKPOINT_SINK (${sink.description}) is refused: ${refused}. No checkpoint is sent there until it is allowed.`,
          );
      })
      .catch(() => undefined);
  }

  /** One run at a time per instance; a failure is logged, and the next run tries again. */
  async tick(): Promise<AnchorRun | undefined> {
    if (this.running) return undefined;
    this.running = this.run().finally(() => (this.running = undefined));
    return this.running.catch((e) => {
      this.log.warn(`checkpoint run failed: ${(e as Error).message}`);
      return undefined;
    });
  }

  async run(): Promise<AnchorRun> {
    const done: AnchorRun = { written: [], failed: [], refused: [] };
    if (!this.sink) return done;
    const lease = Math.ceil((CLAIM_BATCH * this.config.webhooks.timeoutMs) / 1000) + 60;
    for (let seen = 0; seen < MAX_TENANTS_PER_RUN;) {
      const claimed = await this.store.claim(CLAIM_BATCH, lease);
      if (claimed.length === 0) break;
      seen += claimed.length;
      for (const t of claimed) {
        const outcome = await this.anchor(t.tenantId, t.seq > 0 ? { seq: t.seq, hash: t.hash } : undefined).catch(
          (e: Error) => {
            this.log.warn(`checkpoint of tenant ${t.tenantId} not written to ${this.sink!.description}: ${e.message}`);
            return 'failed' as const;
          },
        );
        if (outcome !== 'written') await this.store.release(t.tenantId).catch(() => undefined);
        if (outcome !== 'skipped') done[outcome].push(t.tenantId);
      }
      if (claimed.length < CLAIM_BATCH) break;
    }
    return done;
  }

  private async anchor(
    tenantId: string,
    recorded: { seq: number; hash: string } | undefined,
  ): Promise<'written' | 'refused' | 'skipped'> {
    const sink = this.sink!;
    // The sink's own record outranks the database's: the database is what a superuser could change.
    const last = (await sink.latestClaims(tenantId)) ?? recorded;
    const head = await this.audit.head(tenantId);
    let atLast: string | 'missing' | undefined;
    if (last && last.seq > 0 && head.seq >= last.seq) {
      const [event] = await this.audit.list({ tenantId, afterSeq: last.seq - 1 }, 1);
      atLast = event?.seq === last.seq ? event.hash : 'missing';
    }
    const decision = anchorDecision(head, last, atLast);
    if (decision.kind === 'refuse') {
      this.log.error(
        `audit trail of tenant ${tenantId} no longer reaches its last checkpoint (seq ${last!.seq}): ${decision.problem}; no new checkpoint is signed over it. Run GET /v1/audit/verify.`,
      );
      return 'refused';
    }
    if (decision.kind === 'skip') {
      if (last) await this.store.anchored(tenantId, last.seq, last.hash, this.clock.now());
      return 'skipped';
    }
    const cp: AuditCheckpoint = await this.queries.execute(new AuditCheckpointQuery(tenantId));
    const where = await sink.write(cp);
    await this.store.anchored(tenantId, cp.seq, cp.hash, new Date(cp.at));
    this.log.debug(`checkpoint of tenant ${tenantId} at seq ${cp.seq} written to ${sink.description} (${where})`);
    return 'written';
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }
}
