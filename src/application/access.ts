import { Conversation, mayReadCall } from '../domain/conversation/conversation.aggregate';
import { ConversationNotFoundError, ToolCallNotFoundError } from '../domain/conversation/conversation.errors';
import { Principal, isAgent } from '../domain/shared/actor';
import { DomainError } from '../domain/shared/domain-error';
import { PENDING, type ConversationRepository } from './ports';

/** Tenants are walls and ownership hides: what a caller may not see answers 404, never 403. */
export function visibleConversation(c: Conversation | null, p: Principal, id: string): Conversation {
  if (!c || !c.isVisibleTo(p)) throw new ConversationNotFoundError(id);
  return c;
}

/**
 * A call its conversation's readers see, and so does a person its approvers name (that call alone), and a
 * delegate one of whose `delegators` may decide it (that call alone).
 */
export function visibleCall(
  c: Conversation | null,
  p: Principal,
  toolCallId: string,
  delegators: readonly Principal[] = [],
): Conversation {
  const call = c?.findCall(toolCallId);
  const parties = c && { agentId: c.agentId, userId: c.user?.id ?? null };
  if (!c || !call || !mayReadCall(p, parties!, call.approval?.approvers, delegators))
    throw new ToolCallNotFoundError(toolCallId);
  return c;
}

/**
 * The delegators `p` may read or decide this call through: looked up (`lookUp`) only when `p`'s own rights do not
 * let them read it, so the common case costs nothing more. Empty when there is no such call.
 */
export async function delegatorsToRead(
  c: Conversation | null,
  p: Principal,
  toolCallId: string,
  lookUp: (() => Promise<Principal[]>) | undefined,
): Promise<Principal[]> {
  const call = c?.findCall(toolCallId);
  if (!c || !call || !lookUp || isAgent(p)) return [];
  if (mayReadCall(p, { agentId: c.agentId, userId: c.user?.id ?? null }, call.approval?.approvers)) return [];
  return lookUp();
}

/**
 * The conversation of a call its own agent runs or reports (claim, result), with its open calls and this one,
 * locked when the unit of work takes locks: 404 for a call the caller cannot see, 403 for another agent's.
 */
export async function ownCallToRun(
  conversations: ConversationRepository,
  p: Principal,
  toolCallId: string,
): Promise<Conversation> {
  const conv = visibleCall(
    await conversations.findByToolCallId(p.tenant, toolCallId, {
      lock: true,
      calls: { statuses: PENDING, ids: [toolCallId] },
    }),
    p,
    toolCallId,
  );
  mustBeOwningAgent(conv, p);
  return conv;
}

/** Only the agent that started the conversation proposes, claims and reports in it. */
export function mustBeOwningAgent(c: Conversation, p: Principal): void {
  if (!isAgent(p) || c.agentId !== p.id) {
    throw new DomainError('forbidden', 'forbidden', 'Only the agent that started this conversation may do this');
  }
}
