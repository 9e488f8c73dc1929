import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Conversation } from '../../../domain/conversation/conversation.aggregate';
import { IdempotencyMismatchError } from '../../../domain/conversation/conversation.errors';
import {
  CLOCK,
  Clock,
  CONVERSATIONS,
  ConversationRepository,
  IDS,
  IdGenerator,
  UNIT_OF_WORK,
  UnitOfWork,
} from '../../ports';
import { conversationView } from '../../views/views';
import { StartConversationCommand } from './start-conversation.command';

@CommandHandler(StartConversationCommand)
export class StartConversationHandler implements ICommandHandler<StartConversationCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(IDS) private readonly ids: IdGenerator,
  ) {}

  execute({ principal: p, input }: StartConversationCommand) {
    return this.uow.run(async () => {
      const existing = input.id ? await this.conversations.findWithCalls(p.tenant, input.id) : null;
      if (existing) {
        const { conversation, toolCalls } = existing;
        if (!conversation.isSameStart(p.id)) throw new IdempotencyMismatchError(`Conversation id ${input.id} is taken`);
        return { conversation: conversationView(conversation, false, toolCalls), created: false };
      }
      const conversation = Conversation.start({
        id: input.id ?? this.ids.next('conv'),
        tenantId: p.tenant,
        agentId: p.id,
        agentName: p.name,
        ...(p.owner ? { agentOwner: p.owner } : {}),
        agentVia: p.via,
        user: input.user
          ? { id: input.user.id, roles: input.user.roles ?? [], ...(input.user.name ? { name: input.user.name } : {}) }
          : null,
        title: input.title,
        metadata: input.metadata,
        at: this.clock.now(),
      });
      await this.conversations.save(conversation);
      return { conversation: conversationView(conversation, false, []), created: true };
    });
  }
}
