import type { Principal } from '../../shared/actor';
import { widestGrantFor } from '../../grant/rules/grant-authority';
import { GrantScope, grantWithin, narrowerGrantLimit } from '../../policy/grant-limit';
import type { PolicyRecord } from '../tool-call.entity';

/** Why an always_allow may not make its standing grant: recorded as GrantRefused, reported as grant_forbidden. */
export interface GrantRefusal {
  requestedScope: string;
  allowedScope: string;
  reason: string;
}

/**
 * An always_allow makes a standing grant no wider than both the decider's roles and the deciding rule's
 * `grants` allow. Returns why `by` may not make one in `scope` for a call decided by `policy`, or undefined.
 */
export function standingGrantRefusal(
  policy: Pick<PolicyRecord, 'grants' | 'rule'>,
  scope: GrantScope,
  by: Pick<Principal, 'roles'>,
): GrantRefusal | undefined {
  const byRoles = widestGrantFor(by);
  const byPolicy = policy.grants ?? 'tenant';
  const allowed = narrowerGrantLimit(byRoles, byPolicy);
  if (grantWithin(scope, allowed)) return undefined;
  const rule = policy.rule === null ? 'the policy defaults' : `policy rule ${policy.rule}`;
  // Name the bound that even an admin would meet first: the policy's, then the roles'.
  const reason =
    byPolicy === 'none'
      ? `No standing grant may be made for this call (${rule}: grants none); approve it instead`
      : !grantWithin(scope, byPolicy)
        ? `A standing grant for this call may cover at most scope ${byPolicy} (${rule}), not ${scope}`
        : `Only an admin may make a standing grant in scope ${scope}; you may grant at most scope ${allowed}`;
  return { requestedScope: scope, allowedScope: allowed, reason };
}
