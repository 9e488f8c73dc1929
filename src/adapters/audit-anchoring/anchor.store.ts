import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** A tenant claimed for this run: its last anchor as the database recorded it (seq 0: never). */
export interface ClaimedTenant {
  tenantId: string;
  seq: number;
  hash: string;
}

/**
 * audit_anchors (issue 28, part 8): per tenant, the last checkpoint written to the sink, and a short claim so
 * that one instance writes each tenant's checkpoint per run, without holding a transaction while it writes.
 */
@Injectable()
export class AnchorStore {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Claims up to `limit` tenants whose chain head moved since their last anchor (or never anchored), the longest
   * unanchored first, for `leaseSeconds`; a tenant another instance holds is left to it.
   */
  async claim(limit: number, leaseSeconds: number): Promise<ClaimedTenant[]> {
    const rows: Array<{ tenant_id: string; seq: string; hash: string }> = await this.dataSource.query(
      `INSERT INTO audit_anchors AS a (tenant_id, seq, hash, anchored_at, claimed_until)
       SELECT h.tenant_id, 0, repeat('0', 64), '-infinity', now() + $2 * interval '1 second'
         FROM audit_heads h LEFT JOIN audit_anchors x ON x.tenant_id = h.tenant_id
        WHERE h.seq <> COALESCE(x.seq, 0) AND (x.claimed_until IS NULL OR x.claimed_until < now())
        ORDER BY x.anchored_at NULLS FIRST, h.tenant_id
        LIMIT $1
       ON CONFLICT (tenant_id) DO UPDATE SET claimed_until = EXCLUDED.claimed_until
        WHERE a.claimed_until IS NULL OR a.claimed_until < now()
       RETURNING a.tenant_id, a.seq, a.hash`,
      [limit, leaseSeconds],
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, seq: Number(r.seq), hash: r.hash }));
  }

  /** The checkpoint was written: remember it, and let the claim go. */
  async anchored(tenantId: string, seq: number, hash: string, at: Date): Promise<void> {
    await this.dataSource.query(
      `UPDATE audit_anchors SET seq = $2, hash = $3, anchored_at = $4, claimed_until = NULL WHERE tenant_id = $1`,
      [tenantId, seq, hash, at],
    );
  }

  /** Nothing written (skipped, refused or failed): the next run tries again. */
  async release(tenantId: string): Promise<void> {
    await this.dataSource.query(`UPDATE audit_anchors SET claimed_until = NULL WHERE tenant_id = $1`, [tenantId]);
  }
}
