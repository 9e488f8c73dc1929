import { Injectable } from '@nestjs/common';
import { Grant } from '../../domain/grant/grant.aggregate';
import { GrantListFilter, GrantRepository } from '../../application/ports';
import { GrantRow } from './orm-entities';
import { decodeCursor, encodeCursor } from './keyset-cursor';
import { StaleAggregateError, TypeOrmUnitOfWork } from './unit-of-work';
import { returnedRows } from './returned-rows';

export function grantFromRow(r: GrantRow): Grant {
  return Grant.rehydrate({
    id: r.id,
    tenantId: r.tenantId,
    toolName: r.toolName,
    scope: r.scope,
    conversationId: r.conversationId ?? undefined,
    agentId: r.agentId ?? undefined,
    createdBy: r.createdBy,
    sourceToolCallId: r.sourceToolCallId,
    createdAt: r.createdAt,
    ...(r.args ? { args: r.args } : {}),
    ...(r.expiresAt ? { expiresAt: r.expiresAt } : {}),
    ...(r.effect === 'deny' ? { effect: 'deny' as const } : {}),
    ...(r.uses != null ? { uses: r.uses, usesLeft: r.usesLeft ?? 0 } : {}),
    ...(r.revokedAt && r.revokedBy
      ? { revocation: { at: r.revokedAt, by: r.revokedBy, ...(r.revokeReason ? { reason: r.revokeReason } : {}) } }
      : {}),
  });
}

/** The SQL condition for "applies at $n": not revoked, and no lifetime or one not yet over. */
export const GRANT_APPLIES = (alias: string, now: string) =>
  `${alias}revoked_at IS NULL AND (${alias}expires_at IS NULL OR ${alias}expires_at > ${now}) AND (${alias}uses_left IS NULL OR ${alias}uses_left > 0)`;

const STATUS: Record<Exclude<GrantListFilter['status'], 'all'>, (now: string) => string> = {
  active: (now) => GRANT_APPLIES('g.', now),
  revoked: () => 'g.revoked_at IS NOT NULL',
  expired: (now) => `g.revoked_at IS NULL AND g.expires_at <= ${now}`,
  spent: (now) => `g.revoked_at IS NULL AND (g.expires_at IS NULL OR g.expires_at > ${now}) AND g.uses_left <= 0`,
};

/** Keyset cursors on (created_at, id): stable under inserts. */
const cursorOf = (r: GrantRow) => encodeCursor([r.createdAt.toISOString(), r.id]);

@Injectable()
export class TypeOrmGrantRepository implements GrantRepository {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  async forTools(tenantId: string, toolNames: string[], now: Date): Promise<Grant[]> {
    if (toolNames.length === 0) return [];
    const rows = await this.uow
      .manager()
      .getRepository(GrantRow)
      .createQueryBuilder('g')
      .where(`g.tenant_id = :tenantId AND g.tool_name IN (:...toolNames) AND ${GRANT_APPLIES('g.', ':now')}`, {
        tenantId,
        toolNames,
        now,
      })
      .getMany();
    return rows.map(grantFromRow);
  }

  async findById(tenantId: string, id: string, opts: { lock?: boolean } = {}): Promise<Grant | null> {
    const qb = this.uow
      .manager()
      .getRepository(GrantRow)
      .createQueryBuilder('g')
      .where('g.tenant_id = :tenantId AND g.id = :id', { tenantId, id });
    if (opts.lock) qb.setLock('pessimistic_write');
    const row = await qb.getOne();
    return row && grantFromRow(row);
  }

  async list(tenantId: string, f: GrantListFilter): Promise<{ grants: Grant[]; nextCursor: string | null }> {
    const qb = this.uow
      .manager()
      .getRepository(GrantRow)
      .createQueryBuilder('g')
      .where('g.tenant_id = :tenantId', { tenantId });
    if (f.toolName !== undefined) qb.andWhere('g.tool_name = :toolName', { toolName: f.toolName });
    if (f.scope !== undefined) qb.andWhere('g.scope = :scope', { scope: f.scope });
    if (f.effect !== undefined) qb.andWhere('g.effect = :effect', { effect: f.effect });
    if (f.status !== 'all') qb.andWhere(STATUS[f.status](':now'), { now: f.now });
    const after = decodeCursor(f.cursor, { dated: true });
    if (after)
      qb.andWhere('(g.created_at, g.id) < (:afterAt::timestamptz, :afterId)', { afterAt: after[0], afterId: after[1] });
    const rows = await qb
      .orderBy('g.created_at', 'DESC')
      .addOrderBy('g.id', 'DESC')
      .limit(f.limit + 1)
      .getMany();
    const more = rows.length > f.limit;
    const items = rows.slice(0, f.limit);
    return { grants: items.map(grantFromRow), nextCursor: more ? cursorOf(items[items.length - 1]) : null };
  }

  /**
   * Counts `n` uses off a limited grant, atomically across instances: one UPDATE … WHERE uses_left >= n RETURNING in
   * the caller's transaction (a concurrent proposal waits for this row's lock, then finds it spent). Answers the uses
   * left, or null when fewer than `n` were (the grant is spent: judge the calls again without it).
   */
  async use(tenantId: string, id: string, n: number): Promise<number | null> {
    if (!this.uow.inTransaction) throw new StaleAggregateError('A limited grant is used in a transaction only');
    const rows = returnedRows<{ uses_left: number }>(
      await this.uow
        .manager()
        .query(
          `UPDATE grants SET uses_left = uses_left - $3 WHERE tenant_id = $1 AND id = $2 AND uses_left >= $3 RETURNING uses_left`,
          [tenantId, id, n],
        ),
    );
    return rows.length === 0 ? null : Number(rows[0].uses_left);
  }

  async save(grant: Grant): Promise<void> {
    const events = grant.pullEvents();
    if (events.length === 0) return;
    const s = grant.snapshot();
    const repo = this.uow.manager().getRepository(GrantRow);
    if (events.some((e) => e.type === 'GrantCreated')) {
      await repo.insert({
        tenantId: s.tenantId,
        id: s.id,
        toolName: s.toolName,
        scope: s.scope,
        conversationId: s.conversationId ?? null,
        agentId: s.agentId ?? null,
        createdBy: s.createdBy,
        sourceToolCallId: s.sourceToolCallId,
        createdAt: s.createdAt,
        expiresAt: s.expiresAt ?? null,
        args: s.args ?? null,
        effect: s.effect ?? 'allow',
        uses: s.uses ?? null,
        usesLeft: s.usesLeft ?? null,
        revokedAt: s.revocation?.at ?? null,
        revokedBy: s.revocation?.by ?? null,
        revokeReason: s.revocation?.reason ?? null,
      });
    } else if (events.every((e) => e.type === 'GrantUsed')) {
      // Counted down already, atomically, by `use`: only the events remain to append.
    } else if (s.revocation) {
      // Only a grant not yet revoked: the command read it locked, so this always changes the one row.
      await repo.update(
        { tenantId: s.tenantId, id: s.id },
        { revokedAt: s.revocation.at, revokedBy: s.revocation.by, revokeReason: s.revocation.reason ?? null },
      );
    }
    this.uow.collect(events);
  }
}
