import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { TOLLGATE_CONFIG, TollgateConfig } from '../config/config';
import { InProcessWaiters } from './in-process-waiters';

const CHUNK = 1000;

/**
 * The fallback for a lost wake-up: every `longPollRecheckMs`, one query per tenant (per thousand waiters)
 * finds the waited-on calls that left `pending` or fell due, and wakes their waiters. Ten thousand idle
 * long-polls cost a handful of queries per interval, not one read each.
 */
@Injectable()
export class WaiterRecheck implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private readonly log = new Logger('WaiterRecheck');

  constructor(
    private readonly waiters: InProcessWaiters,
    private readonly dataSource: DataSource,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.tick()
        .catch((e) => this.log.warn(`re-check failed: ${(e as Error).message}`))
        .finally(() => (this.running = undefined));
    }, this.config.longPollRecheckMs).unref();
  }

  async tick(): Promise<void> {
    const byTenant = new Map<string, string[]>();
    for (const { tenantId, toolCallId } of this.waiters.waitedOn())
      byTenant.set(tenantId, [...(byTenant.get(tenantId) ?? []), toolCallId]);
    for (const [tenantId, ids] of byTenant) {
      for (let i = 0; i < ids.length; i += CHUNK) {
        const rows: Array<{ id: string }> = await this.dataSource.query(
          `SELECT id FROM tool_calls WHERE tenant_id = $1 AND id = ANY($2::text[]) AND (status <> 'pending' OR expires_at <= now())`,
          [tenantId, ids.slice(i, i + CHUNK)],
        );
        for (const r of rows) this.waiters.wake(tenantId, r.id);
      }
    }
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
