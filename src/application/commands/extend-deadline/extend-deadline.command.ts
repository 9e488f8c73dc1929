import { Decider } from '../../../domain/conversation/conversation.aggregate';

/** An admin gives a pending call more time: a new deadline, or seconds added to the current one. */
export class ExtendDeadlineCommand {
  constructor(
    readonly by: Decider,
    readonly toolCallId: string,
    readonly change: { expiresAt?: Date; extendBySeconds?: number; reason?: string },
  ) {}
}
