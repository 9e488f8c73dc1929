import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { UnlinkedDecisionRefused } from '../../domain/person/person.events';
import type { Channel } from '../../domain/shared/actor';
import { CLOCK, Clock, CONVERSATIONS, ConversationRepository, PENDING, UNIT_OF_WORK, UnitOfWork } from '../ports';
import { PERSONS, PersonRepository } from '../ports/person.port';

/**
 * A channel user who does not act as a person clicked a decision: recorded as `DecisionRefused` with the code
 * `unlinked_channel_user` (linked to no person, or to one never seen) or `stale_person` (linked to a person whose
 * sign-in is too old), so who tried to decide from where stays on record. Answers whether the call was found (a
 * click on a call not in the tenant records nothing).
 */
export class RefuseUnlinkedDecisionCommand extends Command<boolean> {
  constructor(
    readonly tenant: string,
    readonly toolCallId: string,
    readonly decision: 'approve' | 'reject' | 'always_allow',
    readonly via: Channel,
    readonly channelUser: string,
    /** Why; `personId` is the person the channel user's link names, when it names one. */
    readonly refusal: { code: 'unlinked_channel_user' | 'stale_person'; reason: string; personId?: string },
    readonly name?: string,
  ) {
    super();
  }
}

@CommandHandler(RefuseUnlinkedDecisionCommand)
export class RefuseUnlinkedDecisionHandler implements ICommandHandler<RefuseUnlinkedDecisionCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(PERSONS) private readonly persons: PersonRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute(c: RefuseUnlinkedDecisionCommand): Promise<boolean> {
    return this.uow.run(async () => {
      const conv = await this.conversations.findByToolCallId(c.tenant, c.toolCallId, {
        calls: { statuses: PENDING, ids: [c.toolCallId] },
      });
      const call = conv?.findCall(c.toolCallId);
      if (!conv || !call) return false;
      // Not acting as a person of the tenant: the channel's own id is who they are on record.
      const refusedBy = `${c.via}:${c.channelUser}`;
      const actor = {
        id: refusedBy,
        kind: 'person' as const,
        via: c.via,
        channelUser: c.channelUser,
        ...(c.name ? { name: c.name } : {}),
      };
      await this.persons.record([
        new UnlinkedDecisionRefused(
          {
            tenantId: c.tenant,
            at: this.clock.now(),
            actor,
            conversationId: conv.id,
            toolCallId: call.id,
            toolName: call.toolName,
          },
          {
            decision: c.decision,
            code: c.refusal.code,
            refusedBy,
            via: c.via,
            channelUser: c.channelUser,
            ...(c.refusal.personId !== undefined ? { personId: c.refusal.personId } : {}),
            reason: c.refusal.reason,
            level: call.policy.level,
            rule: call.policy.rule,
            policyVersion: call.policy.policyVersion,
          },
        ),
      ]);
      return true;
    });
  }
}
