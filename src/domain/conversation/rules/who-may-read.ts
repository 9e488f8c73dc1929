import { namesPerson } from '../../policy/assignee';
import { hasAnyRole, isAgent, Principal } from '../../shared/actor';
import { mayDecideAmong } from './who-may-decide';

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
 * must see what they are asked to decide, but that call only: not the rest of the conversation. So does a
 * delegate, for the held calls one of their `delegators` (whose delegation holds now) may decide: what they are
 * to decide on that person's behalf, no more (never what the delegator may merely read).
 */
export function mayReadCall(
  p: Principal,
  parties: ConversationParties,
  approvers: readonly string[] | undefined,
  delegators: readonly Principal[] = [],
): boolean {
  if (mayReadConversation(p, parties)) return true;
  if (isAgent(p) || approvers === undefined) return false;
  return namesPerson(approvers, p) || delegators.some((d) => mayDecideAmong(d, approvers, parties.userId));
}
