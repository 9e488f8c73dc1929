import { ConversationBlockedError } from '../conversation.errors';
import type { ToolCall } from '../tool-call.entity';

/** One step at a time: a new step waits until no call of the last one is pending. */
export function checkNotBlocked(pending: readonly ToolCall[]): void {
  if (pending.length > 0) throw new ConversationBlockedError(pending.map((c) => c.id));
}
