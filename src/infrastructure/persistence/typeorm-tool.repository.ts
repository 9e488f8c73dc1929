import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import { Tool } from '../../domain/tool/tool.aggregate';
import { LoadOptions, ToolRepository } from '../../application/ports';
import { JsonObject, ToolRow } from './orm-entities';
import { StaleAggregateError, TypeOrmUnitOfWork } from './unit-of-work';

export function toolFromRow(r: ToolRow): Tool {
  return Tool.rehydrate({
    tenantId: r.tenantId,
    name: r.name,
    description: r.description ?? undefined,
    isReadOnly: r.isReadOnly,
    requiresApproval: r.requiresApproval,
    destructive: r.destructive,
    ...(r.inputSchema ? { inputSchema: r.inputSchema } : {}),
    ...(r.redact?.length ? { redact: r.redact } : {}),
    registeredBy: { id: r.registeredBy, kind: r.registeredByKind },
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    version: r.version,
  });
}

@Injectable()
export class TypeOrmToolRepository implements ToolRepository {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  async find(tenantId: string, name: string, opts: LoadOptions = {}): Promise<Tool | null> {
    const qb = this.uow
      .manager()
      .getRepository(ToolRow)
      .createQueryBuilder('t')
      .where('t.tenant_id = :tenantId AND t.name = :name', { tenantId, name });
    if (opts.lock && this.uow.inTransaction) qb.setLock('pessimistic_write');
    const row = await qb.getOne();
    return row ? toolFromRow(row) : null;
  }

  async findMany(tenantId: string, names: string[]): Promise<Tool[]> {
    if (names.length === 0) return [];
    const rows = await this.uow
      .manager()
      .getRepository(ToolRow)
      .find({ where: { tenantId, name: In(names) } });
    return rows.map(toolFromRow);
  }

  async findAll(tenantId: string): Promise<Tool[]> {
    const rows = await this.uow
      .manager()
      .getRepository(ToolRow)
      .find({ where: { tenantId }, order: { name: 'ASC' } });
    return rows.map(toolFromRow);
  }

  async save(tool: Tool): Promise<void> {
    const events = tool.pullEvents();
    if (events.length === 0) return;
    const s = tool.snapshot();
    const row = {
      description: s.description ?? null,
      isReadOnly: s.isReadOnly,
      requiresApproval: s.requiresApproval,
      destructive: s.destructive,
      inputSchema: (s.inputSchema as JsonObject | undefined) ?? null,
      redact: s.redact?.length ? s.redact : null,
      registeredBy: s.registeredBy.id,
      registeredByKind: s.registeredBy.kind,
      updatedAt: s.updatedAt,
    };
    const repo = this.uow.manager().getRepository(ToolRow);
    if (tool.version === 0) {
      await repo.insert({ tenantId: s.tenantId, name: s.name, createdAt: s.createdAt, version: 1, ...row });
    } else {
      const res = await repo.update(
        { tenantId: s.tenantId, name: s.name, version: tool.version },
        { ...row, version: tool.version + 1 },
      );
      if (res.affected !== 1) throw new StaleAggregateError(`tool ${s.name} changed since it was loaded`);
    }
    tool.version += 1;
    this.uow.collect(events);
  }
}
