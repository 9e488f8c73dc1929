import { Query } from '@nestjs/cqrs';
import { Principal } from '../../../domain/shared/actor';

/** What the caller may do with a conversation or tool call; 404 when they may not even see it. */
export class ConversationAccessQuery extends Query<Access> {
  constructor(
    readonly principal: Principal,
    readonly conversationId: string,
  ) {
    super();
  }
}

export class ToolCallAccessQuery extends Query<Access> {
  constructor(
    readonly principal: Principal,
    readonly toolCallId: string,
  ) {
    super();
  }
}

export interface Access {
  isAgent: boolean;
  isOwningAgent: boolean;
  mayDecide: boolean;
}
