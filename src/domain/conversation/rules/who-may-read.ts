import { namesPerson } from '../../policy/assignee';
import { hasAnyRole, isAgent, Principal } from '../../shared/actor';

/** Who started a conversation and for whom: all that decides who may read it. */
export interface ConversationParties {
  agentId: string;
  userId: string | null;
}

/**
 * Who may read a conversation and its calls: its agent (an agent token reads nothing else), its requester,
 * and the tenant's approvers, admins and auditors. REST reads and the event stream both ask this.
 */
export function mayReadConversation(p: Principal, parties: ConversationParties): boolean {
  if (isAgent(p)) return p.id === parties.agentId;
  if (parties.userId !== null && parties.userId === p.id) return true;
  return hasAnyRole(p, ['approver', 'admin', 'auditor']);
}

/**
 * Who may read one call: whoever may read its conversation, and a person its approvers name (`person:…`), who
 * must see what they are asked to decide, but that call only: not the rest of the conversation.
 */
export function mayReadCall(
  p: Principal,
  parties: ConversationParties,
  approvers: readonly string[] | undefined,
): boolean {
  if (mayReadConversation(p, parties)) return true;
  return !isAgent(p) && approvers !== undefined && namesPerson(approvers, p);
}
