import { Principal } from '../../../domain/shared/actor';

/** What the caller may do with a conversation or tool call; 404 when they may not even see it. */
export class ConversationAccessQuery {
  constructor(
    readonly principal: Principal,
    readonly conversationId: string,
  ) {}
}

export class ToolCallAccessQuery {
  constructor(
    readonly principal: Principal,
    readonly toolCallId: string,
  ) {}
}

export interface Access {
  isAgent: boolean;
  isOwningAgent: boolean;
  mayDecide: boolean;
}
