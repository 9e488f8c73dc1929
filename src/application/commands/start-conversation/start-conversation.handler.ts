import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Conversation, ConversationUser } from '../../../domain/conversation/conversation.aggregate';
import { IdempotencyMismatchError } from '../../../domain/conversation/conversation.errors';
import { DomainError, ValidationError } from '../../../domain/shared/domain-error';
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
import { NO_USER_TOKENS, USER_TOKENS, UserTokens } from '../../ports/user-token.port';
import { conversationView } from '../../views/views';
import { StartConversationCommand } from './start-conversation.command';

@CommandHandler(StartConversationCommand)
export class StartConversationHandler implements ICommandHandler<StartConversationCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(IDS) private readonly ids: IdGenerator,
    // A handler built by hand (tests) takes no user tokens; the app always wires JwtUserTokens.
    @Inject(USER_TOKENS) private readonly userTokens: UserTokens = NO_USER_TOKENS,
  ) {}

  async execute({ principal: p, input }: StartConversationCommand) {
    // Before the transaction: verifying may read the provider's keys over the network.
    const user = await this.user(p.tenant, p.id, input.user);
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
        user,
        title: input.title,
        metadata: input.metadata,
        at: this.clock.now(),
      });
      await this.conversations.save(conversation);
      return { conversation: conversationView(conversation, false, []), created: true };
    });
  }

  /** The user from their own token (verified), else as the agent named them (asserted); the token goes no further. */
  private async user(
    tenant: string,
    agentId: string,
    u: StartConversationCommand['input']['user'],
  ): Promise<ConversationUser | null> {
    if (!u) return null;
    if (u.token === undefined) {
      if (u.id === undefined)
        throw new ValidationError([{ path: 'user.id', message: 'is required unless user.token is given' }]);
      return { id: u.id, roles: u.roles ?? [], ...(u.name ? { name: u.name } : {}), assurance: 'asserted' };
    }
    const verified = await this.userTokens.verify(u.token, tenant);
    // An agent is never its own verified end user: a token about it says nothing about a person.
    if (verified.id === agentId)
      throw new DomainError(
        'invalid_user_token',
        'invalid',
        "user.token's subject is the agent itself: pass the end user's own token from the identity provider",
      );
    if (u.id !== undefined && u.id !== verified.id)
      throw new ValidationError([
        { path: 'user.id', message: "is not user.token's subject (sub): leave it out, or give the token's own" },
      ]);
    return { ...verified, assurance: 'verified' };
  }
}
