import { Injectable } from '@nestjs/common';
import { HaltInForce } from '../../domain/conversation/conversation.aggregate';
import { HaltRepository } from '../../application/ports';
import { TypeOrmUnitOfWork } from './unit-of-work';

@Injectable()
export class TypeOrmHaltRepository implements HaltRepository {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  async covering(tenantId: string, agentId: string, conversationId: string): Promise<HaltInForce | null> {
    const rows: Array<{ scope: string; reason: string }> = await this.uow.manager().query(
      `SELECT scope, reason FROM halts
        WHERE tenant_id = $1 AND ((scope = 'tenant' AND scope_id = '') OR (scope = 'agent' AND scope_id = $2) OR (scope = 'conversation' AND scope_id = $3))
        ORDER BY CASE scope WHEN 'tenant' THEN 0 WHEN 'agent' THEN 1 ELSE 2 END LIMIT 1`,
      [tenantId, agentId, conversationId],
    );
    return rows[0] ? { scope: rows[0].scope, reason: rows[0].reason } : null;
  }
}
