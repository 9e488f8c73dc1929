import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { isAgent } from '../../../domain/shared/actor';
import { visibleCall, visibleConversation } from '../../access';
import { CONVERSATIONS, ConversationRepository } from '../../ports';
import { Access, ConversationAccessQuery, ToolCallAccessQuery } from './access.query';

@QueryHandler(ConversationAccessQuery)
export class ConversationAccessHandler implements IQueryHandler<ConversationAccessQuery, Access> {
  constructor(@Inject(CONVERSATIONS) private readonly conversations: ConversationRepository) {}
  async execute({ principal: p, conversationId }: ConversationAccessQuery): Promise<Access> {
    const c = visibleConversation(await this.conversations.findById(p.tenant, conversationId), p, conversationId);
    return { isAgent: isAgent(p), isOwningAgent: isAgent(p) && c.agentId === p.id, mayDecide: false };
  }
}

@QueryHandler(ToolCallAccessQuery)
export class ToolCallAccessHandler implements IQueryHandler<ToolCallAccessQuery, Access> {
  constructor(@Inject(CONVERSATIONS) private readonly conversations: ConversationRepository) {}
  async execute({ principal: p, toolCallId }: ToolCallAccessQuery): Promise<Access> {
    const c = visibleCall(await this.conversations.findByToolCallId(p.tenant, toolCallId), p, toolCallId);
    const call = c.findCall(toolCallId)!;
    return { isAgent: isAgent(p), isOwningAgent: isAgent(p) && c.agentId === p.id, mayDecide: c.mayDecide(p, call) };
  }
}
