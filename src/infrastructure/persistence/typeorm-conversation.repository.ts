import { Injectable } from '@nestjs/common';
import { Conversation } from '../../domain/conversation/conversation.aggregate';
import { HaltTarget } from '../../domain/halt/halt.aggregate';
import { ConversationRepository, LoadOptions } from '../../application/ports';
import { ConversationMapper } from './conversation.mapper';
import { ConversationRow, ToolCallRow } from './orm-entities';
import { StaleAggregateError, TypeOrmUnitOfWork } from './unit-of-work';

@Injectable()
export class TypeOrmConversationRepository implements ConversationRepository {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  async findById(tenantId: string, id: string, opts: LoadOptions = {}): Promise<Conversation | null> {
    const m = this.uow.manager();
    const qb = m.getRepository(ConversationRow).createQueryBuilder('c').where('c.tenant_id = :tenantId AND c.id = :id', { tenantId, id });
    // Commands lock the root row: concurrent decisions and claims on one conversation queue here.
    if (opts.lock && this.uow.inTransaction) {
      qb.setLock('pessimistic_write');
      if (opts.lock === 'skip-locked') qb.setOnLocked('skip_locked');
    }
    const row = await qb.getOne();
    if (!row) return null;
    const calls = await m.getRepository(ToolCallRow).find({ where: { tenantId, conversationId: id }, order: { createdAt: 'ASC', id: 'ASC' } });
    return ConversationMapper.toDomain(row, calls);
  }

  /** Plain reads of the same call in flight share one load: a decision wakes every long-poll on it at once. */
  private readonly inFlight = new Map<string, Promise<Conversation | null>>();

  findByToolCallId(tenantId: string, toolCallId: string, opts: LoadOptions = {}): Promise<Conversation | null> {
    if (opts.lock || this.uow.inTransaction) return this.loadByToolCallId(tenantId, toolCallId, opts);
    const key = `${tenantId}\u0000${toolCallId}`;
    let read = this.inFlight.get(key);
    if (!read) {
      read = this.loadByToolCallId(tenantId, toolCallId, opts).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, read);
    }
    return read;
  }

  private async loadByToolCallId(tenantId: string, toolCallId: string, opts: LoadOptions): Promise<Conversation | null> {
    const call = await this.uow.manager().getRepository(ToolCallRow).findOne({ where: { tenantId, id: toolCallId }, select: { conversationId: true } });
    return call ? this.findById(tenantId, call.conversationId, opts) : null;
  }

  async save(c: Conversation): Promise<void> {
    const m = this.uow.manager();
    const { added, changed } = c.pullChangedCalls();
    const events = c.pullEvents();
    const row = ConversationMapper.toRow(c);
    if (c.version === 0) {
      row.version = 1;
      await m.getRepository(ConversationRow).insert(row);
    } else {
      // TypeORM's save() would not check the version: update WHERE version = loaded version ourselves.
      const { tenantId, id, version, createdAt: _c, agentId: _a, ...changes } = row;
      const res = await m
        .createQueryBuilder()
        .update(ConversationRow)
        .set({ ...changes, version: version + 1 })
        .where('tenant_id = :tenantId AND id = :id AND version = :version', { tenantId, id, version })
        .execute();
      if (res.affected !== 1) throw new StaleAggregateError(`conversation ${id} changed since it was loaded`);
    }
    if (added.length > 0) await m.getRepository(ToolCallRow).insert(added.map((t) => ConversationMapper.toCallRow(c.tenantId, t.snapshot())));
    for (const t of changed) {
      const { tenantId, id, ...changes } = ConversationMapper.toCallRow(c.tenantId, t.snapshot());
      await m.getRepository(ToolCallRow).update({ tenantId, id }, changes);
    }
    c.version += 1;
    this.uow.collect(events);
  }

  async findWithOpenCalls(tenantId: string, target: HaltTarget): Promise<string[]> {
    const params: unknown[] = [tenantId];
    const scope =
      target.scope === 'agent' ? `AND c.agent_id = $${params.push(target.id)}` : target.scope === 'conversation' ? `AND c.id = $${params.push(target.id)}` : '';
    const rows: Array<{ id: string }> = await this.uow.manager().query(
      `SELECT c.id FROM conversations c
        WHERE c.tenant_id = $1 ${scope}
          AND EXISTS (SELECT 1 FROM tool_calls t WHERE t.tenant_id = c.tenant_id AND t.conversation_id = c.id AND t.status IN ('pending', 'approved'))
        ORDER BY c.id`,
      params,
    );
    return rows.map((r) => r.id);
  }

  async findWithDueExpiries(now: Date, limit: number) {
    const rows: Array<{ tenant_id: string; conversation_id: string }> = await this.uow
      .manager()
      .query(`SELECT DISTINCT tenant_id, conversation_id FROM tool_calls WHERE status = 'pending' AND expires_at <= $1 LIMIT $2`, [now, limit]);
    return rows.map((r) => ({ tenantId: r.tenant_id, conversationId: r.conversation_id }));
  }
}
