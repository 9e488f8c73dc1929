import { Injectable } from '@nestjs/common';
import { HaltInForce } from '../../domain/conversation/conversation.aggregate';
import { Halt, HaltScope, HaltState, HaltTarget } from '../../domain/halt/halt.aggregate';
import { haltThatApplies } from '../../domain/halt/rules/halt-that-applies';
import { HaltRepository, LoadOptions } from '../../application/ports';
import { HaltRow, JsonObject } from './orm-entities';
import { TypeOrmUnitOfWork } from './unit-of-work';

function toDomain(r: HaltRow): Halt {
  return Halt.rehydrate({
    tenantId: r.tenantId,
    scope: r.scope,
    id: r.scopeId,
    reason: r.reason,
    by: r.createdBy as HaltState['by'],
    at: r.createdAt,
  });
}

@Injectable()
export class TypeOrmHaltRepository implements HaltRepository {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  async covering(tenantId: string, agentId: string, conversationId: string): Promise<HaltInForce | null> {
    // The SQL only narrows to the halts that may cover the call; the domain picks the one that applies.
    const rows: Array<{ scope: HaltScope; id: string; reason: string }> = await this.uow.manager().query(
      `SELECT scope, scope_id AS id, reason FROM halts
        WHERE tenant_id = $1 AND ((scope = 'tenant' AND scope_id = '') OR (scope = 'agent' AND scope_id = $2) OR (scope = 'conversation' AND scope_id = $3))`,
      [tenantId, agentId, conversationId],
    );
    const halt = haltThatApplies(rows, { agentId, conversationId });
    return halt ? { scope: halt.scope, reason: halt.reason } : null;
  }

  async find(tenantId: string, target: HaltTarget, opts: LoadOptions = {}): Promise<Halt | null> {
    const qb = this.uow
      .manager()
      .getRepository(HaltRow)
      .createQueryBuilder('h')
      .where('h.tenant_id = :tenantId AND h.scope = :scope AND h.scope_id = :id', {
        tenantId,
        scope: target.scope,
        id: target.id,
      });
    if (opts.lock && this.uow.inTransaction) qb.setLock('pessimistic_write');
    const row = await qb.getOne();
    return row ? toDomain(row) : null;
  }

  async list(tenantId: string): Promise<Halt[]> {
    const rows = await this.uow
      .manager()
      .getRepository(HaltRow)
      .find({ where: { tenantId }, order: { createdAt: 'ASC' } });
    return rows.map(toDomain);
  }

  async save(halt: Halt): Promise<void> {
    const events = halt.pullEvents();
    if (events.length === 0) return;
    const s = halt.snapshot();
    const repo = this.uow.manager().getRepository(HaltRow);
    if (halt.isResumed) {
      await repo.delete({ tenantId: s.tenantId, scope: s.scope, scopeId: s.id });
    } else if (halt.version === 0) {
      // The primary key makes a concurrent second halt of the same scope fail and retry into "already halted".
      await repo.insert({
        tenantId: s.tenantId,
        scope: s.scope,
        scopeId: s.id,
        reason: s.reason,
        createdBy: { ...s.by } as JsonObject,
        createdAt: s.at,
      });
      halt.version = 1;
    }
    this.uow.collect(events);
  }
}
