import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Grant } from '../../../domain/grant/grant.aggregate';
import { personActor } from '../../../domain/shared/actor';
import { visibleCall } from '../../access';
import {
  CLOCK,
  Clock,
  CONVERSATIONS,
  ConversationRepository,
  GRANTS,
  GrantRepository,
  PENDING,
  IDS,
  IdGenerator,
  UNIT_OF_WORK,
  UnitOfWork,
} from '../../ports';
import { toolCallView } from '../../views/views';
import { DecideToolCallCommand } from './decide-tool-call.command';

@CommandHandler(DecideToolCallCommand)
export class DecideToolCallHandler implements ICommandHandler<DecideToolCallCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(GRANTS) private readonly grants: GrantRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(IDS) private readonly ids: IdGenerator,
  ) {}

  async execute({ decider, toolCallId, input, grant: options }: DecideToolCallCommand) {
    DecideToolCallCommand.mustFit(input, options);
    const result = await this.uow.run(
      async () => {
        const conv = visibleCall(
          await this.conversations.findByToolCallId(decider.tenant, toolCallId, {
            lock: true,
            calls: { statuses: PENDING, ids: [toolCallId] },
          }),
          decider,
          toolCallId,
        );
        const at = this.clock.now();
        const outcome = conv.decide(toolCallId, input, decider, at);
        // The approval is recorded before the grant it gives rise to; a refused grant request is recorded too.
        await this.conversations.save(conv);
        if (outcome.kind === 'decided' && outcome.grant) {
          const by = personActor(decider, decider.via);
          const grant = Grant.create({
            id: this.ids.next('grant'),
            tenantId: decider.tenant,
            toolName: outcome.grant.toolName,
            scope: outcome.grant.scope,
            conversationId: conv.id,
            agentId: conv.agentId,
            by,
            toolCallId,
            at,
            ...options,
          });
          await this.grants.save(grant);
        }
        return outcome;
        // An always_allow also writes a grant: that needs a transaction. Any other decision changes one conversation.
      },
      {
        optimistic: input.decision !== 'always_allow',
        exclusive: `tool-call\u0000${decider.tenant}\u0000${toolCallId}`,
      },
    );
    // A refusal may still have changed state (the call expired on the way): it is saved, then reported.
    if (result.kind === 'refused') throw result.error;
    return toolCallView(result.call.snapshot());
  }
}
