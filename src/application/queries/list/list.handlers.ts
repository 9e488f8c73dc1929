import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_MODEL, ReadModel } from '../../ports';
import { ListApprovalsQuery, ListConversationsQuery, ListToolsQuery } from './list.queries';

@QueryHandler(ListConversationsQuery)
export class ListConversationsHandler implements IQueryHandler<ListConversationsQuery> {
  constructor(@Inject(READ_MODEL) private readonly reads: ReadModel) {}
  execute({ principal, filter }: ListConversationsQuery) {
    return this.reads.listConversations(principal, filter);
  }
}

@QueryHandler(ListApprovalsQuery)
export class ListApprovalsHandler implements IQueryHandler<ListApprovalsQuery> {
  constructor(@Inject(READ_MODEL) private readonly reads: ReadModel) {}
  execute({ principal, filter }: ListApprovalsQuery) {
    return this.reads.listApprovals(principal, filter);
  }
}

@QueryHandler(ListToolsQuery)
export class ListToolsHandler implements IQueryHandler<ListToolsQuery> {
  constructor(@Inject(READ_MODEL) private readonly reads: ReadModel) {}
  execute({ principal, filter }: ListToolsQuery) {
    return this.reads.listTools(principal.tenant, filter);
  }
}
