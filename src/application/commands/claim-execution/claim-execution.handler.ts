import { Inject, Optional } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ownCallToRun } from '../../access';
import {
  CLOCK,
  Clock,
  CONVERSATIONS,
  ConversationRepository,
  HALTS,
  HaltRepository,
  RECEIPTS,
  ReceiptSigner,
  UNIT_OF_WORK,
  UnitOfWork,
} from '../../ports';
import { CallQueues } from '../call-queues';
import { ClaimExecutionCommand } from './claim-execution.command';
import { executionClaim } from './execution-receipt';
import { SecretArguments } from '../../redaction/secret-arguments';

@CommandHandler(ClaimExecutionCommand)
export class ClaimExecutionHandler implements ICommandHandler<ClaimExecutionCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(HALTS) private readonly halts: HaltRepository,
    @Inject(RECEIPTS) private readonly receipts: ReceiptSigner,
    @Inject(CLOCK) private readonly clock: Clock,
    @Optional() private readonly queues: CallQueues = new CallQueues(),
    @Optional() private readonly secrets?: SecretArguments,
  ) {}

  async execute({ principal: p, toolCallId }: ClaimExecutionCommand) {
    const result = await this.uow.run(
      async () => {
        const conv = await ownCallToRun(this.conversations, p, toolCallId);
        const halt = await this.halts.covering(p.tenant, conv.agentId, conv.id);
        const outcome = conv.claim(toolCallId, p, this.clock.now(), halt);
        await this.conversations.save(conv);
        return outcome;
      },
      { optimistic: true, exclusive: this.queues.ofCall(p.tenant, toolCallId) },
    );
    if (result.kind === 'refused') throw result.error;
    return executionClaim(this.receipts, p.tenant, result.call, undefined, this.secrets);
  }
}
