/* The conversation's end user, and how far Tollgate knows who they are. */

/**
 * How Tollgate knows the end user: `verified` from their own identity provider token (user.token), `asserted` when
 * the agent named them (its word only). A rule with `requireVerifiedUser` acts only for a verified one.
 */
export type UserAssurance = 'verified' | 'asserted';

export interface ConversationUser {
  id: string;
  roles: string[];
  name?: string;
  /** Always set on conversations started or loaded (absent only in hand-made state, which counts as asserted). */
  assurance?: UserAssurance;
}

/**
 * The user as the policy weighs them (ApprovalPolicy's `conversation.user`). Only a user verified from their own
 * token counts as verified: anything else is the agent's word (fail closed).
 */
export function policyUser(
  user: ConversationUser | null | undefined,
): { id: string; roles: string[]; verified: boolean } | undefined {
  return user ? { id: user.id, roles: user.roles, verified: user.assurance === 'verified' } : undefined;
}
