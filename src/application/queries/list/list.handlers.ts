import { Inject, Optional } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { CLOCK, Clock, READ_MODEL, ReadModel } from '../../ports';
import { DelegatedAuthority } from '../../persons/delegated-authority';
import { ListApprovalsQuery, ListConversationsQuery, ListToolsQuery } from './list.queries';

@QueryHandler(ListConversationsQuery)
export class ListConversationsHandler implements IQueryHandler<ListConversationsQuery> {
  constructor(@Inject(READ_MODEL) private readonly reads: ReadModel) {}
  execute({ principal, filter }: ListConversationsQuery) {
    return this.reads.listConversations(principal, filter);
  }
}

/** The inbox: the calls the person may decide, and those a delegation to them lets them decide for someone. */
@QueryHandler(ListApprovalsQuery)
export class ListApprovalsHandler implements IQueryHandler<ListApprovalsQuery> {
  constructor(
    @Inject(READ_MODEL) private readonly reads: ReadModel,
    @Optional() @Inject(CLOCK) private readonly clock?: Clock,
    // Without it no one lists calls on anyone's behalf (fail closed).
    @Optional() private readonly delegated?: DelegatedAuthority,
  ) {}
  async execute({ principal, filter }: ListApprovalsQuery) {
    const delegators = this.delegated && this.clock ? await this.delegated.of(principal, this.clock.now()) : [];
    return this.reads.listApprovals(principal, filter, delegators);
  }
}

@QueryHandler(ListToolsQuery)
export class ListToolsHandler implements IQueryHandler<ListToolsQuery> {
  constructor(@Inject(READ_MODEL) private readonly reads: ReadModel) {}
  execute({ principal, filter }: ListToolsQuery) {
    return this.reads.listTools(principal.tenant, filter);
  }
}
