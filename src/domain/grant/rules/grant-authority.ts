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
 * Who may revoke a grant: whoever may make one like it. Admins may revoke any grant; an approver a
 * conversation grant only. Revoking only ever narrows what runs unattended, but an approver revoking a
 * tenant-wide grant would overrule an admin's decision, so that stays with admins.
 */
export function mayRevokeGrant(p: Pick<Principal, 'roles'>, scope: GrantScope): boolean {
  if (p.roles.includes('agent')) return false;
  if (p.roles.includes('admin')) return true;
  return scope === 'conversation' && p.roles.includes('approver');
}

/** Who may list the tenant's grants: the people who decide or audit. Agents and plain requesters may not. */
export function mayListGrants(p: Pick<Principal, 'roles'>): boolean {
  return !p.roles.includes('agent') && ['approver', 'admin', 'auditor'].some((r) => p.roles.includes(r));
}
