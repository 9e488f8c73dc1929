import { Inject, Optional } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { isAgent } from '../../../domain/shared/actor';
import { visibleCall, visibleConversation } from '../../access';
import { CLOCK, Clock, CONVERSATIONS, ConversationRepository } from '../../ports';
import { DelegatedAuthority } from '../../persons/delegated-authority';
import { Access, ConversationAccessQuery, ToolCallAccessQuery } from './access.query';

@QueryHandler(ConversationAccessQuery)
export class ConversationAccessHandler implements IQueryHandler<ConversationAccessQuery, Access> {
  constructor(@Inject(CONVERSATIONS) private readonly conversations: ConversationRepository) {}
  async execute({ principal: p, conversationId }: ConversationAccessQuery): Promise<Access> {
    const c = visibleConversation(await this.conversations.findById(p.tenant, conversationId), p, conversationId);
    return { isAgent: isAgent(p), isOwningAgent: isAgent(p) && c.agentId === p.id, mayDecide: false };
  }
}

/**
 * What a person may do with a call, for the request modules' 404-before-403 order. A delegate may read and
 * decide the held calls their delegators may decide: looked up only when their own rights would say no.
 */
@QueryHandler(ToolCallAccessQuery)
export class ToolCallAccessHandler implements IQueryHandler<ToolCallAccessQuery, Access> {
  constructor(
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Optional() @Inject(CLOCK) private readonly clock?: Clock,
    // Without it no one reads or decides on anyone's behalf (fail closed).
    @Optional() private readonly delegated?: DelegatedAuthority,
  ) {}
  async execute({ principal: p, toolCallId }: ToolCallAccessQuery): Promise<Access> {
    const loaded = await this.conversations.findByToolCallId(p.tenant, toolCallId);
    const found = loaded?.findCall(toolCallId);
    const delegators =
      this.delegated && this.clock && loaded && found && !isAgent(p) && !loaded.mayDecide(p, found)
        ? await this.delegated.of(p, this.clock.now())
        : [];
    const c = visibleCall(loaded, p, toolCallId, delegators);
    const call = c.findCall(toolCallId)!;
    return {
      isAgent: isAgent(p),
      isOwningAgent: isAgent(p) && c.agentId === p.id,
      mayDecide: c.mayDecide(p, call, delegators),
    };
  }
}
