import { Decider } from '../../../domain/conversation/conversation.aggregate';

/**
 * One person's decision on every pending call of a conversation's step at once (or on the named ones among them):
 * approve or reject only. Each call is still decided, and recorded, on its own.
 */
export class DecideStepCommand {
  constructor(
    readonly decider: Decider,
    readonly conversationId: string,
    readonly input: { decision: 'approve' | 'reject'; reason?: string },
    /** Only these pending calls; all of the step's when absent. */
    readonly toolCallIds?: string[],
  ) {}
}
