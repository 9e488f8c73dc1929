import { Inject } from '@nestjs/common';
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
  ReceiptStepUp,
  UNIT_OF_WORK,
  UnitOfWork,
} from '../../ports';
import type { ToolCall } from '../../../domain/conversation/tool-call.entity';
import { toolCallView } from '../../views/views';
import { ClaimExecutionCommand } from './claim-execution.command';

@CommandHandler(ClaimExecutionCommand)
export class ClaimExecutionHandler implements ICommandHandler<ClaimExecutionCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(HALTS) private readonly halts: HaltRepository,
    @Inject(RECEIPTS) private readonly receipts: ReceiptSigner,
    @Inject(CLOCK) private readonly clock: Clock,
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
      { optimistic: true, exclusive: `tool-call\u0000${p.tenant}\u0000${toolCallId}` },
    );
    if (result.kind === 'refused') throw result.error;
    const call = result.call;
    const args = call.argumentsToRun;
    const stepUp = receiptStepUps(call);
    // Signed after commit: a receipt never exists for a claim that rolled back.
    const receipt = await this.receipts.sign({
      tcid: call.id,
      conv: call.snapshot().conversationId,
      tool: call.toolName,
      args: this.receipts.digest(args),
      approvedBy: call.decision?.by.id ?? 'policy',
      tenant: p.tenant,
      ...(stepUp.length > 0 ? { stepUp } : {}),
    });
    return { toolCall: toolCallView(call.snapshot()), arguments: args, receipt };
  }
}

/** The passkeys the call's approvals were made with: each quorum member's, or the one approval's. */
function receiptStepUps(call: ToolCall): ReceiptStepUp[] {
  const made = call.approvals.length > 0 ? call.approvals : call.decision ? [call.decision] : [];
  return made.flatMap((a) =>
    a.stepUp
      ? [
          {
            by: a.by.id,
            method: 'passkey' as const,
            credentialId: a.stepUp.credentialId,
            aaguid: a.stepUp.aaguid,
            uv: true as const,
          },
        ]
      : [],
  );
}
