import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { expiresInFault, Grant, grantArgsFaults } from '../../../domain/grant/grant.aggregate';
import { ValidationError, ValidationFault } from '../../../domain/shared/domain-error';
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
    mustBeValidGrantOptions(input.decision, options);
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

/** Every way in (REST, gRPC, Slack, CLI) gets the same checks of an always_allow's grant options. */
function mustBeValidGrantOptions(decision: string, o: DecideToolCallCommand['grant']): void {
  const faults: ValidationFault[] = [];
  for (const k of ['expiresIn', 'args'] as const) {
    if (o[k] !== undefined && decision !== 'always_allow')
      faults.push({ path: k, message: 'is allowed with decision "always_allow" only' });
  }
  if (faults.length === 0 && o.expiresIn !== undefined) {
    const fault = expiresInFault(o.expiresIn);
    if (fault) faults.push({ path: 'expiresIn', message: fault });
  }
  if (faults.length === 0 && o.args !== undefined) faults.push(...grantArgsFaults(o.args));
  if (faults.length > 0) throw new ValidationError(faults);
}
