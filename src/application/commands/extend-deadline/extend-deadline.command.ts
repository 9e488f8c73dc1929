import { Decider } from '../../../domain/conversation/conversation.aggregate';
import { Command } from '@nestjs/cqrs';
import type { ToolCallView } from '../../views/views';

/** An admin gives a pending call more time: a new deadline, or seconds added to the current one. */
export class ExtendDeadlineCommand extends Command<ToolCallView> {
  constructor(
    readonly by: Decider,
    readonly toolCallId: string,
    readonly change: { expiresAt?: Date; extendBySeconds?: number; reason?: string },
  ) {
    super();
  }
}
