/** Where a standing grant applies, and how far a policy lets one reach. */
export type GrantScope = 'conversation' | 'agent' | 'tenant';

/**
 * The widest scope an `always_allow` may grant (policy `grants`), narrowest first: `none` lets no
 * standing grant be made. Who decides narrows it further (see `widestGrantFor`).
 */
export const GRANT_LIMITS = ['none', 'conversation', 'agent', 'tenant'] as const;
export type GrantLimit = (typeof GRANT_LIMITS)[number];

/** The narrower of two limits. */
export function narrowerGrantLimit(a: GrantLimit, b: GrantLimit): GrantLimit {
  return GRANT_LIMITS.indexOf(a) <= GRANT_LIMITS.indexOf(b) ? a : b;
}

/** Whether a grant in `scope` stays within `limit`. */
export function grantWithin(scope: GrantScope, limit: GrantLimit): boolean {
  return GRANT_LIMITS.indexOf(scope) <= GRANT_LIMITS.indexOf(limit);
}
