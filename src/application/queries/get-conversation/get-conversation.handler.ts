import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { visibleConversation } from '../../access';
import { CONVERSATIONS, ConversationRepository, HALTS, HaltRepository } from '../../ports';
import { ConversationView, conversationView } from '../../views/views';
import { GetConversationQuery } from './get-conversation.query';

@QueryHandler(GetConversationQuery)
export class GetConversationHandler implements IQueryHandler<GetConversationQuery, ConversationView> {
  constructor(
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(HALTS) private readonly halts: HaltRepository,
  ) {}

  async execute({ principal: p, conversationId, externalIds }: GetConversationQuery): Promise<ConversationView> {
    const read = await this.conversations.findWithCalls(p.tenant, conversationId, externalIds && { externalIds });
    const conv = visibleConversation(read?.conversation ?? null, p, conversationId);
    const halt = await this.halts.covering(p.tenant, conv.agentId, conv.id);
    return conversationView(conv, !!halt, read!.toolCalls);
  }
}
