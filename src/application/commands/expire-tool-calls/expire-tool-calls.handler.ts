import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CLOCK, Clock, CONVERSATIONS, ConversationRepository, PENDING, UNIT_OF_WORK, UnitOfWork } from '../../ports';
import { ExpireToolCallsCommand } from './expire-tool-calls.command';

const BATCH = 100;

@CommandHandler(ExpireToolCallsCommand)
export class ExpireToolCallsHandler implements ICommandHandler<ExpireToolCallsCommand, number> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Returns how many calls expired. Safe with many instances: each conversation is locked while it is expired. */
  async execute({ target }: ExpireToolCallsCommand): Promise<number> {
    const due = target ? [target] : await this.conversations.findWithDueExpiries(this.clock.now(), BATCH);
    let expired = 0;
    for (const { tenantId, conversationId } of due) {
      expired += await this.uow.run(async () => {
        // Several instances sweep at once: one takes a conversation, the others skip it rather than queue.
        const conv = await this.conversations.findById(tenantId, conversationId, {
          lock: target ? true : 'skip-locked',
          calls: { statuses: PENDING },
        });
        const now = this.clock.now();
        const calls = conv ? conv.expireDue(now) : [];
        // Escalations and reminders due ride the same sweep, under the same lock: never taken twice.
        const followed = conv ? conv.followUpDue(now) : [];
        if (conv && calls.length + followed.length > 0) await this.conversations.save(conv);
        return calls.length;
      });
    }
    return expired;
  }
}
