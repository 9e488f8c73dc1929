import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { visibleCall } from '../../access';
import { CLOCK, Clock, CONVERSATIONS, ConversationRepository, PENDING, UNIT_OF_WORK, UnitOfWork } from '../../ports';
import { toolCallView } from '../../views/views';
import { ExtendDeadlineCommand } from './extend-deadline.command';

@CommandHandler(ExtendDeadlineCommand)
export class ExtendDeadlineHandler implements ICommandHandler<ExtendDeadlineCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ by, toolCallId, change }: ExtendDeadlineCommand) {
    const result = await this.uow.run(
      async () => {
        const conv = visibleCall(
          await this.conversations.findByToolCallId(by.tenant, toolCallId, {
            lock: true,
            calls: { statuses: PENDING, ids: [toolCallId] },
          }),
          by,
          toolCallId,
        );
        const at = this.clock.now();
        const current = conv.findCall(toolCallId)!.approval?.expiresAt ?? at;
        const to = change.expiresAt ?? new Date(current.getTime() + (change.extendBySeconds ?? 0) * 1000);
        const outcome = conv.extendDeadline(toolCallId, to, change.reason, by, at);
        await this.conversations.save(conv);
        return outcome;
      },
      { exclusive: `tool-call\u0000${by.tenant}\u0000${toolCallId}` },
    );
    if (result.kind === 'refused') throw result.error;
    return toolCallView(result.call.snapshot());
  }
}
