/**
 * The identity provider's claims → a Tollgate person: roles through TOLLGATE_OIDC_ROLE_MAP, the tenant from a claim or
 * the fixed one. Used for web sign-in (the ID token) and for the provider's bearer tokens alike, so a person is the
 * same person whichever way they come in. A provider token never yields `agent`: agents keep their own tokens.
 */
import type { Principal } from '../../domain/shared/actor';
import type { OidcConfig } from '../config/config';

/** The roles a person may hold; `agent` is never one of them. */
export const PERSON_ROLES = ['approver', 'admin', 'auditor'] as const;
const TENANT = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * The `email` claim: shown back, matched for linking a Slack user, and for a policy's `person:<email>` (so it grants
 * access where a policy names people by email). A malformed one is left out, and so is one the issuer says it has not
 * verified, or anyone could pass for its owner by typing the address. Providers that send no `email_verified` are
 * trusted to send only addresses they own (docs/API.md: name people by id where that is in doubt).
 */
export function verifiedEmail(claims: Record<string, unknown>): string | undefined {
  const e = claims.email;
  return typeof e === 'string' && claims.email_verified !== false && e.length <= 320 && /^[^\s@]+@[^\s@]+$/.test(e)
    ? e
    : undefined;
}
/** Bounds on what a provider may hand us: more groups than this is a misconfigured claim, not a person. */
const MAX_GROUPS = 1000;
const MAX_GROUP_LENGTH = 512;

export type ClaimMapping = Pick<OidcConfig, 'rolesClaim' | 'roleMap' | 'tenant'>;

export type MappedPerson =
  | { ok: true; principal: Principal }
  /**
   * No group maps to a Tollgate role: who they are (no roles), for a bearer token that is known but may do nothing.
   * `groups` are the claim's values as received (bounded), for the operator's log; `claimMissing` says the claim
   * itself was absent (a provider or scope misconfiguration, not a person outside the mapped groups).
   */
  | { ok: false; code: 'no_role'; detail: string; person: Principal; groups: string[]; claimMissing: boolean }
  /** The claims cannot name a person (sub, tenant). */
  | { ok: false; code: 'bad_claims'; detail: string };

/**
 * Reads a claim by name, or by a dotted path when no claim has the whole name (Keycloak's `realm_access.roles`).
 */
export function claimAt(claims: Record<string, unknown>, name: string): unknown {
  if (name in claims) return claims[name];
  let at: unknown = claims;
  for (const part of name.split('.')) {
    if (at === null || typeof at !== 'object' || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** The provider's groups or roles: a JSON array of strings, or one string separated by spaces or commas. */
export function groupsOf(value: unknown): string[] {
  const raw = typeof value === 'string' ? value.split(/[\s,]+/) : Array.isArray(value) ? value : [];
  return raw
    .filter((g): g is string => typeof g === 'string' && g.length > 0 && g.length <= MAX_GROUP_LENGTH)
    .slice(0, MAX_GROUPS);
}

/** Groups → Tollgate roles. An empty map takes the values as roles, but only the person roles. */
export function rolesFor(groups: readonly string[], roleMap: Record<string, string[]>): string[] {
  const mapped = Object.keys(roleMap).length === 0 ? [...groups] : groups.flatMap((g) => roleMap[g] ?? []);
  return PERSON_ROLES.filter((r) => mapped.includes(r));
}

export function mapClaims(claims: Record<string, unknown>, mapping: ClaimMapping): MappedPerson {
  const sub = claims.sub;
  if (typeof sub !== 'string' || sub.length === 0 || sub.length > 256)
    return { ok: false, code: 'bad_claims', detail: 'The provider sent no usable sub (1 to 256 characters)' };
  let tenant: string;
  if ('fixed' in mapping.tenant) tenant = mapping.tenant.fixed;
  else {
    const t = claimAt(claims, mapping.tenant.claim);
    if (typeof t !== 'string' || !TENANT.test(t))
      return {
        ok: false,
        code: 'bad_claims',
        detail: `The claim ${mapping.tenant.claim} must name a tenant matching ${TENANT.source}`,
      };
    tenant = t;
  }
  const claim = claimAt(claims, mapping.rolesClaim);
  const groups = groupsOf(claim);
  const roles = rolesFor(groups, mapping.roleMap);
  const name = typeof claims.name === 'string' && claims.name.length <= 256 ? claims.name : undefined;
  const email = verifiedEmail(claims);
  const principal: Principal = { id: sub, tenant, roles, ...(name ? { name } : {}), ...(email ? { email } : {}) };
  if (roles.length === 0)
    return {
      ok: false,
      code: 'no_role',
      detail:
        claim === undefined || claim === null
          ? `The ID token and userinfo had no "${mapping.rolesClaim}" claim: make the provider put it in the ID token, and request its scope in TOLLGATE_OIDC_SCOPES`
          : `None of the groups in the claim "${mapping.rolesClaim}" maps to a Tollgate role`,
      person: principal,
      groups,
      claimMissing: claim === undefined || claim === null,
    };
  return { ok: true, principal };
}
