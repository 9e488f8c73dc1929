import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AuditPurge, PurgedRange } from '../../domain/audit/audit-purge.aggregate';
import { AuditRetentionStore } from '../../application/ports/audit-log.port';
import { TypeOrmUnitOfWork } from './unit-of-work';

/** How long a purge waits for the table lock that dropping a partition takes, before it deletes rows instead. */
const DROP_LOCK_TIMEOUT = '2s';

/**
 * Retention purges. The database allows DELETE on events only inside a transaction that set
 * `tollgate.retention_purge` and only for rows older than six months (migration 1764000000000); a monthly
 * partition may be dropped whole under the same two conditions (migration 1764700000000).
 *
 * A purge removes a prefix of one tenant's chain. A month entirely before the cut-off that holds nothing else
 * (no other tenant's events, none of this tenant's kept ones) is dropped as a table: no row-by-row DELETE, no
 * dead tuples to vacuum. Whatever else is purged is deleted row by row, as before. With one tenant, or once
 * every tenant has purged a month, whole months go.
 */
@Injectable()
export class SqlAuditRetention implements AuditRetentionStore {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  async purgeBefore(tenantId: string, before: Date): Promise<PurgedRange | null> {
    const m = this.uow.manager();
    // Lock the chain head first: no event is appended to this tenant while its start is cut.
    await m.query(`SELECT seq FROM audit_heads WHERE tenant_id = $1 FOR UPDATE`, [tenantId]);
    // Only a prefix goes: everything before the first event at or after the cut-off (so all of it is older).
    const [range] = await m.query(
      `WITH kept AS (SELECT min(seq) AS first_kept FROM events WHERE tenant_id = $1 AND at >= $2)
       SELECT count(*) AS n, min(e.seq) AS first_seq, max(e.seq) AS last_seq
         FROM events e, kept WHERE e.tenant_id = $1 AND e.at < $2 AND (kept.first_kept IS NULL OR e.seq < kept.first_kept)`,
      [tenantId, before],
    );
    if (Number(range.n) === 0) return null;
    const [last] = await m.query(`SELECT hash FROM events WHERE tenant_id = $1 AND seq = $2`, [
      tenantId,
      range.last_seq,
    ]);
    // DELETE is revoked on events; the owner grants it to itself for this transaction only, and the
    // trigger still refuses any row younger than six months.
    await m.query(`GRANT DELETE ON events TO CURRENT_USER`);
    await m.query(`SELECT set_config('tollgate.retention_purge', 'on', true)`);
    await this.dropWholeMonths(m, tenantId, before, range.last_seq);
    // Every purged event is older than the cut-off: `at < $3` lets PostgreSQL skip the younger partitions.
    await m.query(`DELETE FROM events WHERE tenant_id = $1 AND seq <= $2 AND at < $3`, [
      tenantId,
      range.last_seq,
      before,
    ]);
    await m.query(`SELECT set_config('tollgate.retention_purge', 'off', true)`);
    await m.query(`REVOKE DELETE ON events FROM CURRENT_USER`);
    return {
      count: Number(range.n),
      firstSeq: Number(range.first_seq),
      lastSeq: Number(range.last_seq),
      lastHash: last.hash,
    };
  }

  /**
   * Drops each month that ends before the cut-off and six months ago and holds only events this purge removes.
   * Dropping takes an exclusive lock on `events` until commit; if it is not had within DROP_LOCK_TIMEOUT (a long
   * export holds the table), that month's rows are deleted instead, so a purge never waits long or fails for it.
   */
  private async dropWholeMonths(m: EntityManager, tenantId: string, before: Date, lastSeq: string): Promise<void> {
    const months: Array<{ name: string; from_at: Date; to_at: Date }> = await m.query(
      `SELECT name, from_at, to_at FROM tollgate_events_partitions() WHERE to_at <= $1 AND to_at <= now() - interval '6 months' ORDER BY from_at`,
      [before],
    );
    for (const month of months) {
      const [{ whole }] = await m.query(
        `SELECT NOT EXISTS (SELECT 1 FROM events WHERE at >= $1 AND at < $2 AND (tenant_id <> $3 OR seq > $4)) AS whole`,
        [month.from_at, month.to_at, tenantId, lastSeq],
      );
      if (!whole) continue;
      const [{ timeout }] = await m.query(`SELECT current_setting('lock_timeout') AS timeout`);
      await m.query(`SAVEPOINT tollgate_drop_month`);
      try {
        await m.query(`SELECT set_config('lock_timeout', $1, true)`, [DROP_LOCK_TIMEOUT]);
        await m.query(`SELECT tollgate_events_drop_partition($1)`, [month.name]);
        await m.query(`RELEASE SAVEPOINT tollgate_drop_month`);
      } catch {
        await m.query(`ROLLBACK TO SAVEPOINT tollgate_drop_month`);
      }
      await m.query(`SELECT set_config('lock_timeout', $1, true)`, [timeout]);
    }
  }

  async save(purge: AuditPurge): Promise<void> {
    this.uow.collect(purge.pullEvents());
  }
}
