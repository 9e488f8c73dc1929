import { Inject, Optional } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import {
  AlreadyDecidedError,
  NotAllowedToDecideError,
  SelfApprovalError,
} from '../../../domain/conversation/conversation.errors';
import { approvingArguments } from '../../../domain/conversation/rules/step-up';
import { standingDecision } from '../../../domain/conversation/rules/first-decision-wins';
import { NoPasskeyError, StepUpNotRequiredError } from '../../../domain/person/passkey.errors';
import { isAgent } from '../../../domain/shared/actor';
import { visibleCall } from '../../access';
import { DelegatedAuthority } from '../../persons/delegated-authority';
import { CLOCK, Clock, CONVERSATIONS, ConversationRepository, PENDING, UNIT_OF_WORK, UnitOfWork } from '../../ports';
import { PASSKEYS, Passkeys } from '../../ports/passkey.port';
import { RequestStepUpCommand, StepUpOptions } from './request-step-up.command';

/**
 * Issues a step-up challenge, with the decision's checks in the decision's order: 404 for a call the person
 * cannot see, 403 unless they may decide it, 409 when it is no longer pending, asks no passkey, or they hold none.
 */
@CommandHandler(RequestStepUpCommand)
export class RequestStepUpHandler implements ICommandHandler<RequestStepUpCommand> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(PASSKEYS) private readonly passkeys: Passkeys,
    @Inject(CLOCK) private readonly clock: Clock,
    // Without it no one asks for a challenge on anyone's behalf (fail closed).
    @Optional() private readonly delegated?: DelegatedAuthority,
  ) {}

  execute({ person: p, toolCallId, args }: RequestStepUpCommand): Promise<StepUpOptions> {
    return this.uow.run(async () => {
      const loaded = await this.conversations.findByToolCallId(p.tenant, toolCallId, {
        calls: { statuses: PENDING, ids: [toolCallId] },
      });
      // A delegate approving for someone signs with their own passkey: the challenge is theirs, as the decision.
      const found = loaded?.findCall(toolCallId);
      const delegators =
        this.delegated && loaded && found && !loaded.decidesByOwnRight(p, found, { decision: 'approve' })
          ? await this.delegated.of(p, this.clock.now())
          : [];
      const conv = visibleCall(loaded, p, toolCallId, delegators);
      const call = conv.findCall(toolCallId)!;
      if (isAgent(p))
        throw new NotAllowedToDecideError('Agent tokens cannot decide tool calls: approval comes from people');
      if (!conv.mayDecide(p, call, delegators))
        throw new NotAllowedToDecideError('Your roles may not decide this tool call');
      const at = this.clock.now();
      if (call.status !== 'pending' || call.isExpiredAt(at))
        throw new AlreadyDecidedError(
          call.id,
          standingDecision(call.decision),
          call.status === 'pending' ? 'expired' : call.status,
        );
      if (call.policy.stepUp !== 'passkey') throw new StepUpNotRequiredError(toolCallId);
      const refused = conv.approvalRefusal(p, call, delegators);
      if (refused) throw new SelfApprovalError(refused);
      if ((await this.passkeys.count(p)) === 0) throw new NoPasskeyError(toolCallId);
      const { publicKey, argumentsDigest } = await this.passkeys.stepUpOptions(
        p,
        toolCallId,
        approvingArguments(call, { arguments: args }),
        at,
      );
      return { publicKey, toolCallId, argumentsDigest };
    });
  }
}
