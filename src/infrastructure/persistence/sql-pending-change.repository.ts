import { Injectable } from '@nestjs/common';
import type { ListFilter } from '../../application/ports';
import type { PendingChangeRepository } from '../../application/ports/pending-change.port';
import {
  ChangeKind,
  ChangeStatus,
  PendingChange,
  PendingChangeState,
  PersonRef,
} from '../../domain/governance/pending-change.aggregate';
import type { Actor } from '../../domain/shared/actor';
import { decodeCursor, encodeCursor } from './keyset-cursor';
import { returnedRows } from './returned-rows';
import { StaleAggregateError, TypeOrmUnitOfWork } from './unit-of-work';

interface Row {
  tenant_id: string;
  id: string;
  kind: ChangeKind;
  summary: string;
  payload: Record<string, unknown>;
  payload_digest: string;
  base_version: number | null;
  proposed_by: Actor;
  approvals: Array<{ by: PersonRef; at: string }>;
  needed: number;
  status: ChangeStatus;
  created_at: Date;
  expires_at: Date;
  closed_at: Date | null;
  rejected_by: PersonRef | null;
  reason: string | null;
  version: number;
}

const COLUMNS = `tenant_id, id, kind, summary, payload, payload_digest, base_version, proposed_by, approvals, needed, status,
  created_at, expires_at, closed_at, rejected_by, reason, version`;

function toDomain(r: Row): PendingChange {
  const state: PendingChangeState = {
    tenantId: r.tenant_id,
    id: r.id,
    kind: r.kind,
    summary: r.summary,
    payload: r.payload,
    payloadDigest: r.payload_digest,
    baseVersion: r.base_version,
    proposedBy: r.proposed_by,
    approvals: r.approvals.map((a) => ({ by: a.by, at: new Date(a.at) })),
    needed: r.needed,
    status: r.status,
    createdAt: new Date(r.created_at),
    expiresAt: new Date(r.expires_at),
    closedAt: r.closed_at ? new Date(r.closed_at) : null,
    rejectedBy: r.rejected_by,
    reason: r.reason,
  };
  return PendingChange.rehydrate(state, r.version);
}

/** Pending changes of the control plane; every statement names the tenant. */
@Injectable()
export class SqlPendingChangeRepository implements PendingChangeRepository {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  async find(tenantId: string, id: string, opts: { lock?: boolean } = {}): Promise<PendingChange | null> {
    const lock = opts.lock && this.uow.inTransaction ? ' FOR UPDATE' : '';
    const [r]: Row[] = await this.uow
      .manager()
      .query(`SELECT ${COLUMNS} FROM pending_changes WHERE tenant_id = $1 AND id = $2${lock}`, [tenantId, id]);
    return r ? toDomain(r) : null;
  }

  async secretOf(tenantId: string, id: string): Promise<string | null> {
    const [r]: Array<{ secret: string | null }> = await this.uow
      .manager()
      .query(`SELECT secret FROM pending_changes WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
    return r?.secret ?? null;
  }

  async save(change: PendingChange, secret?: string): Promise<void> {
    const events = change.pullEvents();
    if (events.length === 0) return;
    const s = change.snapshot();
    const m = this.uow.manager();
    const approvals = JSON.stringify(s.approvals.map((a) => ({ by: a.by, at: a.at.toISOString() })));
    if (change.version === 0) {
      await m.query(
        `INSERT INTO pending_changes (tenant_id, id, kind, summary, payload, payload_digest, base_version, proposed_by,
           approvals, needed, status, created_at, expires_at, secret, version)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8::jsonb, $9::jsonb, $10, $11, $12, $13, $14, 1)`,
        [
          s.tenantId,
          s.id,
          s.kind,
          s.summary,
          JSON.stringify(s.payload),
          s.payloadDigest,
          s.baseVersion,
          JSON.stringify(s.proposedBy),
          approvals,
          s.needed,
          s.status,
          s.createdAt,
          s.expiresAt,
          secret ?? null,
        ],
      );
      change.version = 1;
    } else {
      // Conditional on the version loaded: of two saves from the same read, the second changes nothing and retries.
      const rows = returnedRows<{ version: number }>(
        await m.query(
          `UPDATE pending_changes
              SET approvals = $4::jsonb, status = $5, closed_at = $6, rejected_by = $7::jsonb, reason = $8,
                  secret = CASE WHEN $5 = 'pending' THEN secret ELSE NULL END, version = version + 1
            WHERE tenant_id = $1 AND id = $2 AND version = $3
        RETURNING version`,
          [
            s.tenantId,
            s.id,
            change.version,
            approvals,
            s.status,
            s.closedAt,
            s.rejectedBy ? JSON.stringify(s.rejectedBy) : null,
            s.reason,
          ],
        ),
      );
      if (rows.length !== 1) throw new StaleAggregateError(`pending change ${s.id} changed since it was read`);
      change.version = rows[0].version;
    }
    this.uow.collect(events);
  }

  async list(
    tenantId: string,
    filter: ListFilter & { status?: ChangeStatus },
    now: Date,
  ): Promise<{ items: PendingChange[]; nextCursor: string | null }> {
    const after = decodeCursor(filter.cursor, { dated: true });
    const params: unknown[] = [tenantId];
    const where = ['tenant_id = $1'];
    if (filter.status === 'pending') {
      params.push(now);
      where.push(`status = 'pending' AND expires_at > $${params.length}`);
    } else if (filter.status === 'expired') {
      params.push(now);
      where.push(`(status = 'expired' OR (status = 'pending' AND expires_at <= $${params.length}))`);
    } else if (filter.status) {
      params.push(filter.status);
      where.push(`status = $${params.length}`);
    }
    if (after) {
      params.push(after[0], after[1]);
      where.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(filter.limit + 1);
    const rows: Row[] = await this.uow
      .manager()
      .query(
        `SELECT ${COLUMNS} FROM pending_changes WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
        params,
      );
    const page = rows.slice(0, filter.limit);
    const last = page[page.length - 1];
    return {
      items: page.map(toDomain),
      nextCursor:
        rows.length > filter.limit && last ? encodeCursor([new Date(last.created_at).toISOString(), last.id]) : null,
    };
  }

  async due(now: Date, limit: number): Promise<Array<{ tenantId: string; id: string }>> {
    const rows: Array<{ tenant_id: string; id: string }> = await this.uow
      .manager()
      .query(
        `SELECT tenant_id, id FROM pending_changes WHERE status = 'pending' AND expires_at <= $1 ORDER BY expires_at LIMIT $2`,
        [now, limit],
      );
    return rows.map((r) => ({ tenantId: r.tenant_id, id: r.id }));
  }
}
