import { Inject, Optional } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ValidationError } from '../../../domain/shared/domain-error';
import { DomainError } from '../../../domain/shared/domain-error';
import { visibleConversation } from '../../access';
import { CLOCK, Clock, CONVERSATIONS, ConversationRepository, PENDING, UNIT_OF_WORK, UnitOfWork } from '../../ports';
import { toolCallView } from '../../views/views';
import { DelegatedAuthority } from '../../persons/delegated-authority';
import { DecideStepCommand, StepDecisionView } from './decide-step.command';

export type { StepDecisionView } from './decide-step.command';

/**
 * Decides the pending calls of one conversation in one unit of work, each through `Conversation.decide`, so each
 * gets its own event and its own checks (who may decide it, separation of duties, a quorum's count). A call the
 * person may not decide is reported in `refused` and left as it was; the others are decided. A conversation holds
 * pending calls of one step only (a new proposal waits for them), so "its pending calls" are one step's.
 */
@CommandHandler(DecideStepCommand)
export class DecideStepHandler implements ICommandHandler<DecideStepCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    // Without it no one decides on anyone's behalf (fail closed).
    @Optional() private readonly delegated?: DelegatedAuthority,
  ) {}

  async execute({ decider, conversationId, input, toolCallIds }: DecideStepCommand): Promise<StepDecisionView> {
    return this.uow.run(
      async () => {
        const conv = visibleConversation(
          await this.conversations.findById(decider.tenant, conversationId, {
            lock: true,
            calls: { statuses: PENDING, ids: toolCallIds ?? [] },
          }),
          decider,
          conversationId,
        );
        const at = this.clock.now();
        // Each call is decided with the person's own rights or, where those do not suffice, a delegator's.
        const delegators = (await this.delegated?.of(decider, at)) ?? [];
        const pending = conv.pendingCalls();
        // Oldest first, then by id: the order the conversation's calls are listed in.
        const named =
          toolCallIds ??
          pending
            .sort((x, y) => x.createdAt.getTime() - y.createdAt.getTime() || (x.id < y.id ? -1 : 1))
            .map((c) => c.id);
        const unknown = named.filter((id) => !conv.findCall(id));
        if (unknown.length > 0)
          throw new ValidationError(
            unknown.map((id) => ({ path: 'toolCallIds', message: `${id} is not a call of this conversation` })),
          );
        const out: StepDecisionView = { toolCalls: [], refused: [] };
        for (const id of named) {
          try {
            const r = conv.decide(id, input, decider, at, delegators);
            if (r.kind === 'refused') out.refused.push({ id, code: r.error.code, detail: r.error.message });
            else out.toolCalls.push(toolCallView(r.call.snapshot()));
          } catch (e) {
            if (!(e instanceof DomainError)) throw e;
            out.refused.push({ id, code: e.code, detail: e.message });
          }
        }
        await this.conversations.save(conv);
        return out;
      },
      { exclusive: `conversation\u0000${decider.tenant}\u0000${conversationId}` },
    );
  }
}
