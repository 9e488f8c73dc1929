import { Injectable } from '@nestjs/common';
import { AuditPurge, PurgedRange } from '../../domain/audit/retention';
import { AuditRetentionStore } from '../../application/ports/audit-log.port';
import { TypeOrmUnitOfWork } from './unit-of-work';

/**
 * Retention purges. The database allows DELETE on events only inside a transaction that set
 * `tollgate.retention_purge` and only for rows older than six months (migration 1764000000000).
 */
@Injectable()
export class TypeOrmAuditRetention implements AuditRetentionStore {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  async purgeBefore(tenantId: string, before: Date): Promise<PurgedRange | null> {
    const m = this.uow.manager();
    // Lock the chain head first: no event is appended to this tenant while its start is cut.
    await m.query(`SELECT seq FROM audit_heads WHERE tenant_id = $1 FOR UPDATE`, [tenantId]);
    // Only a prefix goes: everything before the first event at or after the cut-off.
    const [range] = await m.query(
      `WITH kept AS (SELECT min(seq) AS first_kept FROM events WHERE tenant_id = $1 AND at >= $2)
       SELECT count(*) AS n, min(e.seq) AS first_seq, max(e.seq) AS last_seq
         FROM events e, kept WHERE e.tenant_id = $1 AND (kept.first_kept IS NULL OR e.seq < kept.first_kept)`,
      [tenantId, before],
    );
    if (Number(range.n) === 0) return null;
    const [last] = await m.query(`SELECT hash FROM events WHERE tenant_id = $1 AND seq = $2`, [tenantId, range.last_seq]);
    // DELETE is revoked on events; the owner grants it to itself for this transaction only, and the
    // trigger still refuses any row younger than six months.
    await m.query(`GRANT DELETE ON events TO CURRENT_USER`);
    await m.query(`SELECT set_config('tollgate.retention_purge', 'on', true)`);
    await m.query(`DELETE FROM events WHERE tenant_id = $1 AND seq <= $2`, [tenantId, range.last_seq]);
    await m.query(`SELECT set_config('tollgate.retention_purge', 'off', true)`);
    await m.query(`REVOKE DELETE ON events FROM CURRENT_USER`);
    return { count: Number(range.n), firstSeq: Number(range.first_seq), lastSeq: Number(range.last_seq), lastHash: last.hash };
  }

  async save(purge: AuditPurge): Promise<void> {
    this.uow.collect(purge.pullEvents());
  }
}
