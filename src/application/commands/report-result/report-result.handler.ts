import { Inject, Optional } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ownCallToRun } from '../../access';
import { CLOCK, Clock, CONVERSATIONS, ConversationRepository, UNIT_OF_WORK, UnitOfWork } from '../../ports';
import { toolCallView } from '../../views/views';
import { CallQueues } from '../call-queues';
import { ReportResultCommand } from './report-result.command';

@CommandHandler(ReportResultCommand)
export class ReportResultHandler implements ICommandHandler<ReportResultCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() private readonly queues: CallQueues = new CallQueues(),
  ) {}

  execute({ principal: p, toolCallId, result }: ReportResultCommand) {
    return this.uow.run(
      async () => {
        const conv = await ownCallToRun(this.conversations, p, toolCallId);
        // Accepted during a halt too: the run happened and must be recorded.
        const call = conv.complete(toolCallId, result, p, this.clock.now());
        await this.conversations.save(conv);
        return toolCallView(call.snapshot());
      },
      { optimistic: true, exclusive: this.queues.ofCall(p.tenant, toolCallId) },
    );
  }
}
