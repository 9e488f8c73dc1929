import { Decider, DecisionInput } from '../../../domain/conversation/conversation.aggregate';

export class DecideToolCallCommand {
  constructor(readonly decider: Decider, readonly toolCallId: string, readonly input: DecisionInput) {}
}
