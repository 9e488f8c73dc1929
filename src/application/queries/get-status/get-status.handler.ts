import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { HALTS, HaltRepository } from '../../ports';
import { haltView } from '../../views/views';
import { GetStatusQuery } from './get-status.query';

/** The halts in force in a tenant. */
@QueryHandler(GetStatusQuery)
export class GetStatusHandler implements IQueryHandler<GetStatusQuery> {
  constructor(@Inject(HALTS) private readonly halts: HaltRepository) {}

  async execute({ tenantId }: GetStatusQuery) {
    const halts = await this.halts.list(tenantId);
    return { tenant: tenantId, halted: halts.some((h) => h.snapshot().scope === 'tenant'), halts: halts.map(haltView) };
  }
}
