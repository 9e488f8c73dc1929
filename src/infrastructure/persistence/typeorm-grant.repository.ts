import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import { Grant } from '../../domain/grant/grant.aggregate';
import { GrantRepository } from '../../application/ports';
import { GrantRow } from './orm-entities';
import { TypeOrmUnitOfWork } from './unit-of-work';

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
  });
}

@Injectable()
export class TypeOrmGrantRepository implements GrantRepository {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  async forTools(tenantId: string, toolNames: string[]): Promise<Grant[]> {
    if (toolNames.length === 0) return [];
    const rows = await this.uow.manager().getRepository(GrantRow).find({ where: { tenantId, toolName: In(toolNames) } });
    return rows.map(grantFromRow);
  }

  async save(grant: Grant): Promise<void> {
    const events = grant.pullEvents();
    if (events.length === 0) return;
    const s = grant.snapshot();
    await this.uow.manager().getRepository(GrantRow).insert({
      tenantId: s.tenantId,
      id: s.id,
      toolName: s.toolName,
      scope: s.scope,
      conversationId: s.conversationId ?? null,
      agentId: s.agentId ?? null,
      createdBy: s.createdBy,
      sourceToolCallId: s.sourceToolCallId,
      createdAt: s.createdAt,
    });
    this.uow.collect(events);
  }
}
