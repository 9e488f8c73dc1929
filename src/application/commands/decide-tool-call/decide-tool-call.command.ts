import { Decider, DecisionInput } from '../../../domain/conversation/conversation.aggregate';
import { GrantScope } from '../../../domain/policy/approval-policy';

export class DecideToolCallCommand {
  constructor(readonly decider: Decider, readonly toolCallId: string, readonly input: DecisionInput & { scope?: GrantScope }) {}
}
