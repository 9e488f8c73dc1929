import { Decider } from '../../../domain/conversation/conversation.aggregate';
import { Command } from '@nestjs/cqrs';

import type { ToolCallView } from '../../views/views';

/** What a step decision did: the calls it decided (as they now stand) and those it could not, with why. */
export interface StepDecisionView {
  toolCalls: ToolCallView[];
  refused: Array<{ id: string; code: string; detail: string }>;
}

/**
 * One person's decision on every pending call of a conversation's step at once (or on the named ones among them):
 * approve or reject only. Each call is still decided, and recorded, on its own.
 */
export class DecideStepCommand extends Command<StepDecisionView> {
  constructor(
    readonly decider: Decider,
    readonly conversationId: string,
    readonly input: { decision: 'approve' | 'reject'; reason?: string },
    /** Only these pending calls; all of the step's when absent. */
    readonly toolCallIds?: string[],
  ) {
    super();
  }
}
