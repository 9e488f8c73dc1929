/* Who may make, revoke and list standing grants. */
import type { Principal } from '../../shared/actor';
import type { GrantLimit, GrantScope } from '../../policy/grant-limit';

/**
 * The widest standing grant a person's roles allow: a grant beyond one conversation lets calls of other
 * agents and other users through, so only an admin may make one. An approver or the requester may make
 * a grant for the conversation they decide in. (Agents never decide at all.)
 */
export function widestGrantFor(p: Pick<Principal, 'roles'>): GrantLimit {
  return p.roles.includes('admin') ? 'tenant' : 'conversation';
}

/**
 * Who may revoke an allowing grant: whoever may make one like it. Admins may revoke any; an approver a
 * conversation grant only. Revoking an allow narrows what runs unattended, but an approver revoking a
 * tenant-wide grant would overrule an admin's decision, so that stays with admins. A standing deny is
 * different (revoking it loosens): see `mayRevokeDeny`.
 */
export function mayRevokeGrant(p: Pick<Principal, 'roles'>, scope: GrantScope): boolean {
  if (p.roles.includes('agent')) return false;
  if (p.roles.includes('admin')) return true;
  return scope === 'conversation' && p.roles.includes('approver');
}

/**
 * Who may revoke a standing deny. Revoking a deny lets through what someone decided must never run, so it
 * widens what runs: only the person who made it (in the conversation scope they decided in) or an admin may.
 * An approver may not lift another person's deny, not even in a conversation scope. Agents never may.
 */
export function mayRevokeDeny(p: Pick<Principal, 'id' | 'roles'>, scope: GrantScope, madeBy: string): boolean {
  if (p.roles.includes('agent')) return false;
  if (p.roles.includes('admin')) return true;
  return scope === 'conversation' && p.id === madeBy;
}

/** Who may list the tenant's grants: the people who decide or audit. Agents and plain requesters may not. */
export function mayListGrants(p: Pick<Principal, 'roles'>): boolean {
  return !p.roles.includes('agent') && ['approver', 'admin', 'auditor'].some((r) => p.roles.includes(r));
}
