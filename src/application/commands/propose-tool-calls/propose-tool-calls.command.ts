import { Principal } from '../../../domain/shared/actor';
import { ProposedCall } from '../../../domain/conversation/conversation.aggregate';

export class ProposeToolCallsCommand {
  constructor(
    readonly principal: Principal,
    readonly conversationId: string,
    readonly calls: ProposedCall[],
  ) {}
}
