import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CLOCK, Clock } from '../../application/ports';

/** Months made ahead of the clock: this one and the next three. */
export const MONTHS_AHEAD = 3;
const EVERY_MS = 60 * 60_000;
/** ATTACH waits at most this long for its locks (it takes SHARE UPDATE EXCLUSIVE on events), then tries next hour. */
const LOCK_TIMEOUT = '2s';

/**
 * Keeps the monthly partitions of `events` ahead of time (migration 1764700000000): at start-up and every hour,
 * this month and the next three exist, by the service's clock, which dates the events. The default partition
 * catches an event whose month is missing anyway, so a failure here costs pruning, never an append; it is logged.
 * Safe on many instances: the database function takes an advisory lock and only adds missing months. Each new
 * month gets its guards and ANALYZE settings from `tollgate_events_guard_partition`, whose live definition is in
 * migration 1764900000001.
 */
@Injectable()
export class EventPartitionMaintenance implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private warnedDefault = false;
  private readonly log = new Logger('EventPartitions');

  constructor(
    private readonly dataSource: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    void this.tick();
    this.timer = setInterval(() => void this.tick(), EVERY_MS).unref();
  }

  async tick(): Promise<void> {
    if (this.running) return;
    this.running = this.ensure(this.clock.now())
      .catch((e) =>
        this.log.warn(`making the next partitions of events failed (retried within the hour): ${(e as Error).message}`),
      )
      .finally(() => (this.running = undefined));
    await this.running;
  }

  /** Makes the missing months from `now`'s to MONTHS_AHEAD after it; returns how many were made. */
  async ensure(now: Date): Promise<number> {
    const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + MONTHS_AHEAD + 1, 1));
    const made = await this.dataSource.transaction(async (m) => {
      await m.query(`SELECT set_config('lock_timeout', $1, true)`, [LOCK_TIMEOUT]);
      const [r] = await m.query(`SELECT tollgate_events_ensure_partitions($1, $2) AS made`, [now, to]);
      return Number(r.made);
    });
    if (made > 0)
      this.log.log(`made ${made} monthly partition(s) of events, up to ${to.toISOString().slice(0, 7)} (exclusive)`);
    // From the statistics views, which every role may read: a service role that does not own events has no
    // privilege on its partitions (it reads and writes through events). They lag by a second or so; this is a hint.
    const [{ stray }] = await this.dataSource.query(
      `SELECT coalesce((SELECT n_live_tup + n_dead_tup > 0 FROM pg_stat_user_tables WHERE relid = to_regclass('events_default')), false) AS stray`,
    );
    if (stray && !this.warnedDefault) {
      this.warnedDefault = true;
      this.log.warn(
        'events_default holds events whose month had no partition: queries cannot skip them and retention deletes them row by row (docs/OPERATIONS.md)',
      );
    }
    return made;
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
