import { createRemoteJWKSet, decodeJwt, jwtVerify, JWTPayload, SignJWT } from 'jose';
import { Principal } from '../../domain/shared/actor';
import { DomainError } from '../../domain/shared/domain-error';
import { AuthConfig } from '../config/config';
import { mapClaims, verifiedEmail } from './claims-mapping';

export class InvalidTokenError extends Error {}

const ASYMMETRIC = ['RS256', 'ES256', 'EdDSA'];
/** What identity providers sign with (Entra ID and Okta RS256, Google RS256, Keycloak RS256 or PS256/ES384 on request). */
const PROVIDER_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'EdDSA'];
/** How long the provider's discovery document may take (its jwks_uri is read from it once). */
const DISCOVERY_TIMEOUT_MS = 10_000;
export const CLOCK_TOLERANCE_S = 30;
/** The longest lifetime a token may claim when TOLLGATE_JWT_MAX_TTL is not set. */
export const DEFAULT_MAX_TTL_S = 24 * 3600;

/** Verified tokens remembered at once, and for how long at most (a key removed from a JWKS stops working after it). */
const CACHE_ENTRIES = 10_000;
const CACHE_MAX_AGE_S = 300;

/**
 * Verifies bearer tokens with jose. Algorithms are pinned per mode, so an HS256 token can never
 * pass as an asymmetric one (no key confusion) and `none` is never accepted; `exp` is required, and
 * issuer and audience are enforced whenever configured, whatever the mode.
 */
export class JwtVerifier {
  private readonly key?: Uint8Array;
  private readonly jwks?: ReturnType<typeof createRemoteJWKSet>;
  private readonly maxTtl: number;
  /** The single sign-on provider's keys, from its discovery document's jwks_uri (read on first use). */
  private providerKeys?: Promise<ReturnType<typeof createRemoteJWKSet>>;
  /**
   * Tokens already verified, by their exact text: an agent sends the same token on every call, and verifying
   * it again each time cost CPU on the hot path. An entry lives until the token's `exp` (or CACHE_MAX_AGE_S);
   * the oldest entries go first when the cache is full.
   */
  private readonly verified = new Map<string, { principal: Principal; until: number }>();

  constructor(private readonly cfg: AuthConfig) {
    if (cfg.secret) this.key = new TextEncoder().encode(cfg.secret);
    else if (cfg.jwksUrl) this.jwks = createRemoteJWKSet(new URL(cfg.jwksUrl));
    this.maxTtl = cfg.maxTtlSeconds ?? DEFAULT_MAX_TTL_S;
  }

  /** Tokens remembered as verified (for tests). */
  get cachedTokens(): number {
    return this.verified.size;
  }

  /**
   * The principal of a token verified before and still good, with no crypto; undefined otherwise. The failed-auth
   * limiter lets these through: a flood of forged tokens from a shared address (a gateway, a NAT) must not lock
   * out the people whose tokens are already known good.
   */
  remembered(token: string): Principal | undefined {
    const hit = this.verified.get(token);
    if (!hit || Math.floor(Date.now() / 1000) >= hit.until) return undefined;
    return { ...hit.principal, roles: [...hit.principal.roles] }; // callers may not share one object
  }

  async verify(token: string): Promise<Principal> {
    const now = Math.floor(Date.now() / 1000);
    const hit = this.verified.get(token);
    if (hit && now < hit.until) return { ...hit.principal, roles: [...hit.principal.roles] }; // callers may not share one object
    if (hit) this.verified.delete(token);
    const { principal, exp } = await this.verifyAfresh(token);
    // jose accepts exp up to CLOCK_TOLERANCE_S late; the cache keeps nothing past exp itself.
    if (exp > now) {
      if (this.verified.size >= CACHE_ENTRIES) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, { principal, until: Math.min(exp, now + CACHE_MAX_AGE_S) });
    }
    return principal;
  }

  private async verifyAfresh(token: string): Promise<{ principal: Principal; exp: number }> {
    const provider = this.cfg.provider;
    if (provider && issuerOf(token) === provider.issuer) return this.verifyProviderToken(token, provider);
    let payload: JWTPayload;
    try {
      const opts = {
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['exp', 'sub'],
        issuer: this.cfg.issuer,
        audience: this.cfg.audience,
      };
      payload = this.key
        ? (await jwtVerify(token, this.key, { ...opts, algorithms: ['HS256'] })).payload
        : (await jwtVerify(token, this.jwks!, { ...opts, algorithms: ASYMMETRIC })).payload;
    } catch (e) {
      throw new InvalidTokenError(e instanceof Error ? e.message : 'invalid token');
    }
    checkLifetime(payload, this.maxTtl, Math.floor(Date.now() / 1000));
    return { principal: toPrincipal(payload), exp: payload.exp! };
  }

  /**
   * A token the single sign-on provider issued: its keys, its issuer, one of our client ids as audience, then the
   * same claims mapping as web sign-in. It is a person's token: `agent` in it means nothing (never mapped), and a
   * person with no mapped role is known but holds no role (sees and decides nothing).
   */
  private async verifyProviderToken(
    token: string,
    provider: NonNullable<AuthConfig['provider']>,
  ): Promise<{ principal: Principal; exp: number }> {
    const keys = await this.providerJwks(provider.issuer);
    let payload: JWTPayload;
    try {
      payload = (
        await jwtVerify(token, keys, {
          clockTolerance: CLOCK_TOLERANCE_S,
          requiredClaims: ['exp', 'sub'],
          issuer: provider.issuer,
          audience: provider.audiences,
          algorithms: PROVIDER_ALGORITHMS,
        })
      ).payload;
    } catch (e) {
      throw new InvalidTokenError(e instanceof Error ? e.message : 'invalid token');
    }
    // An ID token with a nonce was made for a browser sign-in (the web inbox always sends one): it was handed to the
    // page's sign-out as id_token_hint and kept with the session, so it must not work as a bearer token as well.
    if (payload.nonce !== undefined)
      throw new InvalidTokenError('a web sign-in ID token (it carries a nonce) is not a bearer token');
    checkLifetime(payload, this.maxTtl, Math.floor(Date.now() / 1000));
    const mapped = mapClaims(payload as Record<string, unknown>, provider.mapping);
    if (mapped.ok) return { principal: mapped.principal, exp: payload.exp! };
    if (mapped.code === 'bad_claims') throw new InvalidTokenError(mapped.detail);
    return { principal: mapped.person, exp: payload.exp! };
  }

  /**
   * Who a token made for one of `audiences` names: an end user's own token (start conversation's `user.token`), which
   * must never be one of Tollgate's bearer audiences (JwtUserTokens checks that too). Checked as a bearer token is —
   * the same keys, issuer, pinned algorithms, `exp` and `sub` required, the same longest lifetime — and mapped by the
   * same claims mapping. Unlike a bearer token, an ID token carrying a nonce is fine: the agent's application got it
   * at its own sign-in. A Tollgate-style token with `agent` comes back as an agent (roles `['agent']`), for the caller
   * to refuse. Nothing is cached.
   */
  async verifyForAudience(token: string, audiences: string[]): Promise<Principal> {
    const provider = this.cfg.provider;
    const fromProvider = provider !== undefined && issuerOf(token) === provider.issuer;
    const keys = fromProvider ? await this.providerJwks(provider.issuer) : undefined; // unreachable: 503, as a bearer's
    let payload: JWTPayload;
    try {
      const opts = { clockTolerance: CLOCK_TOLERANCE_S, requiredClaims: ['exp', 'sub'], audience: audiences };
      payload = keys
        ? (await jwtVerify(token, keys, { ...opts, issuer: provider!.issuer, algorithms: PROVIDER_ALGORITHMS })).payload
        : this.key
          ? (await jwtVerify(token, this.key, { ...opts, issuer: this.cfg.issuer, algorithms: ['HS256'] })).payload
          : (await jwtVerify(token, this.jwks!, { ...opts, issuer: this.cfg.issuer, algorithms: ASYMMETRIC })).payload;
    } catch (e) {
      throw new InvalidTokenError(e instanceof Error ? e.message : 'invalid token');
    }
    checkLifetime(payload, this.maxTtl, Math.floor(Date.now() / 1000));
    if (!fromProvider) return toPrincipal(payload);
    const mapped = mapClaims(payload as Record<string, unknown>, provider.mapping);
    if (mapped.ok) return mapped.principal;
    if (mapped.code === 'bad_claims') throw new InvalidTokenError(mapped.detail);
    return mapped.person; // known, with no mapped role: a user who holds none
  }

  /** TOLLGATE_JWKS_URL when it serves the same issuer, else the provider's own jwks_uri (discovered once). */
  private providerJwks(issuer: string): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (this.jwks && this.cfg.issuer === issuer) return Promise.resolve(this.jwks);
    this.providerKeys ??= discoverJwksUri(issuer).then(
      (uri) => createRemoteJWKSet(new URL(uri)),
      (e: unknown) => {
        this.providerKeys = undefined; // the next request tries again
        throw e;
      },
    );
    return this.providerKeys;
  }
}

/** The provider's jwks_uri from `<issuer>/.well-known/openid-configuration`; unreachable: 503, never a 401. */
async function discoverJwksUri(issuer: string): Promise<string> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS), redirect: 'error' });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const doc = (await res.json()) as { issuer?: unknown; jwks_uri?: unknown };
    if (doc.issuer !== issuer) throw new Error(`its issuer is ${String(doc.issuer)}, not ${issuer}`);
    if (typeof doc.jwks_uri !== 'string') throw new Error('it names no jwks_uri');
    const jwks = new URL(doc.jwks_uri);
    if (jwks.protocol !== 'https:' && new URL(issuer).protocol === 'https:')
      throw new Error('its jwks_uri is not https');
    return jwks.href;
  } catch (e) {
    throw new DomainError(
      'identity_provider_unavailable',
      'unavailable',
      `Cannot read the identity provider's keys (${url}): ${(e as Error).message}`,
    );
  }
}

/** The unverified `iss`, only to choose which keys verify the token; undefined when it is not a JWT. */
function issuerOf(token: string): string | undefined {
  try {
    const iss = decodeJwt(token).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A stolen token is worth what it has left to live: refuse lifetimes beyond the maximum, counted from `iat`
 * when present (the issuer's own clock on both ends), else from now (with the skew, as the issuer's clock may
 * run ahead). An `iat` in the future is a forged or broken clock.
 */
function checkLifetime(p: JWTPayload, maxTtl: number, now: number): void {
  const exp = p.exp!; // required and checked as a number by jose
  if (p.iat !== undefined) {
    if (p.iat > now + CLOCK_TOLERANCE_S) throw new InvalidTokenError('"iat" is in the future');
    if (exp - p.iat > maxTtl)
      throw new InvalidTokenError(`the token lives longer than the ${maxTtl} s allowed (exp − iat)`);
  } else if (exp - now > maxTtl + CLOCK_TOLERANCE_S) {
    throw new InvalidTokenError(`the token expires more than ${maxTtl} s from now`);
  }
}

/**
 * The principal a token's claims establish. A token that carries `agent` is an agent and nothing else, on every
 * route and channel: its other roles are dropped here, once, so no check downstream can read them as a person's
 * (an agent that is also admin would otherwise approve itself, e.g. by setting the policy to automatic).
 */
function toPrincipal(p: JWTPayload): Principal {
  if (typeof p.sub !== 'string' || p.sub.length === 0 || p.sub.length > 256)
    throw new InvalidTokenError('sub must be a non-empty string');
  const roles = p.roles ?? [];
  if (!Array.isArray(roles) || !roles.every((r) => typeof r === 'string'))
    throw new InvalidTokenError('roles must be an array of strings');
  const tenant = p.tenant ?? 'default';
  if (typeof tenant !== 'string' || !/^[A-Za-z0-9_.:-]{1,128}$/.test(tenant))
    throw new InvalidTokenError('tenant must match ^[A-Za-z0-9_.:-]{1,128}$');
  const name = typeof p.name === 'string' ? p.name : undefined;
  const email = verifiedEmail(p); // left out rather than refusing the token
  const held = roles.includes('agent') ? ['agent'] : [...new Set(roles as string[])];
  // An agent's `owner` is the person answerable for it: separation of duties keeps them from approving its calls.
  const owner = held[0] === 'agent' && p.owner !== undefined ? p.owner : undefined;
  if (owner !== undefined && (typeof owner !== 'string' || owner.length === 0 || owner.length > 256))
    throw new InvalidTokenError('owner must be a non-empty string');
  return {
    id: p.sub,
    tenant,
    roles: held,
    ...(name ? { name } : {}),
    ...(email ? { email } : {}),
    ...(owner ? { owner } : {}),
  };
}

/** Mints an HS256 token (the `tollgate token` command, the web dev sign-in and tests). */
export async function mintToken(
  secret: string,
  claims: { sub: string; roles: string[]; tenant?: string; name?: string; email?: string; owner?: string },
  ttl = '8h',
  opts: { issuer?: string; audience?: string } = {},
): Promise<string> {
  let jwt = new SignJWT({
    roles: claims.roles,
    tenant: claims.tenant ?? 'default',
    ...(claims.name ? { name: claims.name } : {}),
    ...(claims.email ? { email: claims.email } : {}),
    ...(claims.owner ? { owner: claims.owner } : {}),
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(ttl);
  // A server configured with an issuer and audience refuses tokens without them, whatever the mode.
  if (opts.issuer) jwt = jwt.setIssuer(opts.issuer);
  if (opts.audience) jwt = jwt.setAudience(opts.audience);
  return jwt.sign(new TextEncoder().encode(secret));
}
