import { DomainError } from '../../shared/domain-error';
import type { GrantScope } from '../../policy/grant-limit';

/** Revoking a standing deny loosens the tenant: only its maker (conversation scope) or an admin may. */
export class DenyRevokeForbiddenError extends DomainError {
  constructor(scope: GrantScope) {
    super(
      'forbidden',
      'forbidden',
      `Revoking a standing deny lets through what someone decided must not run: only the person who made it (in a conversation) or an admin may revoke a deny in scope ${scope}`,
    );
  }
}

/**
 * Under `governance: {quorum}` a tenant-wide standing deny is not lifted by one admin alone (revoking it loosens
 * the whole tenant, as a policy change would). Not yet a pending change of its own: refused, with the way.
 */
export class DenyRevokeGovernedError extends DomainError {
  constructor(grantId: string, quorum: number) {
    super(
      'deny_revoke_governed',
      'conflict',
      `Governance (quorum ${quorum}) is on: one admin may not lift the tenant-wide standing deny ${grantId}. Propose a policy change that turns governance off (another admin approves it as a pending change), revoke the deny, then propose governance again`,
      { grantId, quorum },
    );
  }
}
