import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { mayListGrants } from '../../../domain/grant/rules/grant-authority';
import { DomainError } from '../../../domain/shared/domain-error';
import { CLOCK, Clock, GRANTS, GrantRepository } from '../../ports';
import { Page } from '../../views/views';
import { GrantView, grantView } from './grant.view';
import { ListGrantsQuery } from './list-grants.query';

/** The tenant's grants, newest first, for the people who decide or audit (the controller checks roles too). */
@QueryHandler(ListGrantsQuery)
export class ListGrantsHandler implements IQueryHandler<ListGrantsQuery> {
  constructor(
    @Inject(GRANTS) private readonly grants: GrantRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ principal: p, filter }: ListGrantsQuery): Promise<Page<GrantView>> {
    if (!mayListGrants(p))
      throw new DomainError('forbidden', 'forbidden', 'Listing grants needs one of the roles approver, admin, auditor');
    const now = this.clock.now();
    const { grants, nextCursor } = await this.grants.list(p.tenant, { ...filter, now });
    return { items: grants.map((g) => grantView(g, now)), nextCursor };
  }
}
