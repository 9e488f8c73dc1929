import { Query } from '@nestjs/cqrs';
import type { ApprovalView, ConversationView, Page, toolView } from '../../views/views';
import { Principal } from '../../../domain/shared/actor';

export class ListConversationsQuery extends Query<Page<ConversationView>> {
  constructor(
    readonly principal: Principal,
    readonly filter: { status?: 'active' | 'blocked' | 'halted'; cursor?: string; limit: number },
  ) {
    super();
  }
}

export class ListApprovalsQuery extends Query<Page<ApprovalView>> {
  constructor(
    readonly principal: Principal,
    readonly filter: { status: string; cursor?: string; limit: number },
  ) {
    super();
  }
}

export class ListToolsQuery extends Query<Page<ReturnType<typeof toolView>>> {
  constructor(
    readonly principal: Principal,
    readonly filter: { cursor?: string; limit: number },
  ) {
    super();
  }
}
