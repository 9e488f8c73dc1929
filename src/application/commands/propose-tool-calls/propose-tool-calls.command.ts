import { Principal } from '../../../domain/shared/actor';
import { ProposedCall } from '../../../domain/conversation/conversation.aggregate';
import { Command } from '@nestjs/cqrs';
import type { ConversationView, ToolCallView } from '../../views/views';

/** `replay`: the same proposal again (by its ids), answered as first recorded. */
export interface ProposalResult {
  replay: boolean;
  conversation: ConversationView;
  toolCalls: ToolCallView[];
}

export class ProposeToolCallsCommand extends Command<ProposalResult> {
  constructor(
    readonly principal: Principal,
    readonly conversationId: string,
    readonly calls: ProposedCall[],
  ) {
    super();
  }
}
