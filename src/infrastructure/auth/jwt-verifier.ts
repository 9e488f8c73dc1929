import { createRemoteJWKSet, jwtVerify, JWTPayload, SignJWT } from 'jose';
import { Principal } from '../../domain/shared/actor';
import { AuthConfig } from '../config/config';

export class InvalidTokenError extends Error {}

const ASYMMETRIC = ['RS256', 'ES256', 'EdDSA'];
const CLOCK_TOLERANCE_S = 30;

/**
 * Verifies bearer tokens with jose. Algorithms are pinned per mode, so an HS256 token can never
 * pass as an asymmetric one (no key confusion) and `none` is never accepted; `exp` is required.
 */
export class JwtVerifier {
  private readonly key?: Uint8Array;
  private readonly jwks?: ReturnType<typeof createRemoteJWKSet>;

  constructor(private readonly cfg: AuthConfig) {
    if (cfg.secret) this.key = new TextEncoder().encode(cfg.secret);
    else if (cfg.jwksUrl) this.jwks = createRemoteJWKSet(new URL(cfg.jwksUrl));
  }

  async verify(token: string): Promise<Principal> {
    let payload: JWTPayload;
    try {
      const opts = { clockTolerance: CLOCK_TOLERANCE_S, requiredClaims: ['exp', 'sub'] };
      payload = this.key
        ? (await jwtVerify(token, this.key, { ...opts, algorithms: ['HS256'] })).payload
        : (await jwtVerify(token, this.jwks!, { ...opts, algorithms: ASYMMETRIC, issuer: this.cfg.issuer, audience: this.cfg.audience })).payload;
    } catch (e) {
      throw new InvalidTokenError(e instanceof Error ? e.message : 'invalid token');
    }
    return toPrincipal(payload);
  }
}

function toPrincipal(p: JWTPayload): Principal {
  if (typeof p.sub !== 'string' || p.sub.length === 0 || p.sub.length > 256) throw new InvalidTokenError('sub must be a non-empty string');
  const roles = p.roles ?? [];
  if (!Array.isArray(roles) || !roles.every((r) => typeof r === 'string')) throw new InvalidTokenError('roles must be an array of strings');
  const tenant = p.tenant ?? 'default';
  if (typeof tenant !== 'string' || !/^[A-Za-z0-9_.:-]{1,128}$/.test(tenant)) throw new InvalidTokenError('tenant must match ^[A-Za-z0-9_.:-]{1,128}$');
  const name = typeof p.name === 'string' ? p.name : undefined;
  return { id: p.sub, tenant, roles: [...new Set(roles as string[])], ...(name ? { name } : {}) };
}

/** Mints an HS256 token (the `tollgate token` command and tests). */
export async function mintToken(secret: string, claims: { sub: string; roles: string[]; tenant?: string; name?: string }, ttl = '8h'): Promise<string> {
  return new SignJWT({ roles: claims.roles, tenant: claims.tenant ?? 'default', ...(claims.name ? { name: claims.name } : {}) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(ttl)
    .sign(new TextEncoder().encode(secret));
}
