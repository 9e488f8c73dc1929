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
