import { Conversation } from '../domain/conversation/conversation.aggregate';
import { ConversationNotFoundError, ToolCallNotFoundError } from '../domain/conversation/conversation.errors';
import { Principal, isAgent } from '../domain/shared/actor';
import { DomainError } from '../domain/shared/domain-error';

/** Tenants are walls and ownership hides: what a caller may not see answers 404, never 403. */
export function visibleConversation(c: Conversation | null, p: Principal, id: string): Conversation {
  if (!c || !c.isVisibleTo(p)) throw new ConversationNotFoundError(id);
  return c;
}

export function visibleCall(c: Conversation | null, p: Principal, toolCallId: string): Conversation {
  if (!c || !c.isVisibleTo(p) || !c.findCall(toolCallId)) throw new ToolCallNotFoundError(toolCallId);
  return c;
}

/** Only the agent that started the conversation proposes, claims and reports in it. */
export function mustBeOwningAgent(c: Conversation, p: Principal): void {
  if (!isAgent(p) || c.agentId !== p.id) {
    throw new DomainError('forbidden', 'forbidden', 'Only the agent that started this conversation may do this');
  }
}
