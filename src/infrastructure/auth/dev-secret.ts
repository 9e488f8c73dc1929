import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, TollgateConfig } from '../config/config';
import { checkUserTokenAudiences } from './user-tokens';

const FILE = 'dev-jwt-secret';
/** HS256 wants at least 256 bits of key; a shorter shared secret can be brute-forced from one token. */
export const MIN_SECRET_BYTES = 32;

export function devSecretPath(dataDir: string): string {
  return join(dataDir, FILE);
}

export function readDevSecret(dataDir: string): string | undefined {
  const p = devSecretPath(dataDir);
  return existsSync(p) ? readFileSync(p, 'utf8').trim() : undefined;
}

/** A configured TOLLGATE_JWT_SECRET must be long enough to resist guessing; refused at start otherwise. */
export function checkSecretStrength(secret: string): void {
  const bytes = Buffer.byteLength(secret);
  if (bytes < MIN_SECRET_BYTES) {
    throw new ConfigError(
      `TOLLGATE_JWT_SECRET is ${bytes} byte${bytes === 1 ? '' : 's'}: HS256 needs at least ${MIN_SECRET_BYTES} bytes of secret (e.g. openssl rand -base64 32)`,
    );
  }
}

/**
 * Settles how tokens are checked. Embedded mode with no auth configured gets a generated
 * dev secret (kept in the data dir, mode 0600); a real database with no auth refuses to start,
 * and so does a configured secret too short to resist guessing.
 */
export function resolveAuth(config: TollgateConfig): TollgateConfig {
  const resolved = withProvider(resolveTokens(config));
  checkUserTokenAudiences(resolved);
  return resolved;
}

/** With single sign-on, the provider's bearer tokens are people's tokens, mapped as web sign-in maps them. */
function withProvider(config: TollgateConfig): TollgateConfig {
  const o = config.oidc;
  if (!o) return config;
  // The web client's tokens stay with its sessions: only the CLI's client (and TOLLGATE_JWT_AUDIENCE) may send them
  // as bearer tokens. When both are one client, the nonce check in JwtVerifier keeps web ID tokens out.
  const audiences = [...new Set([o.cliClientId, ...(config.auth.audience ? [config.auth.audience] : [])])];
  return {
    ...config,
    auth: {
      ...config.auth,
      provider: {
        issuer: o.issuer,
        audiences,
        mapping: { rolesClaim: o.rolesClaim, roleMap: o.roleMap, tenant: o.tenant },
      },
    },
  };
}

function resolveTokens(config: TollgateConfig): TollgateConfig {
  const a = config.auth;
  if (a.secret && a.jwksUrl) throw new ConfigError('Set either TOLLGATE_JWT_SECRET or TOLLGATE_JWKS_URL, not both');
  if (a.secret !== undefined && !a.devSecret) checkSecretStrength(a.secret);
  if (a.jwksUrl && (!a.issuer || !a.audience))
    throw new ConfigError('TOLLGATE_JWKS_URL needs TOLLGATE_JWT_ISSUER and TOLLGATE_JWT_AUDIENCE');
  if (a.secret || a.jwksUrl) return config;
  if (config.databaseUrl) {
    throw new ConfigError(
      'DATABASE_URL is set but no authentication is configured: set TOLLGATE_JWT_SECRET (HS256) or TOLLGATE_JWKS_URL with TOLLGATE_JWT_ISSUER and TOLLGATE_JWT_AUDIENCE',
    );
  }
  let secret = readDevSecret(config.dataDir);
  if (!secret) {
    mkdirSync(config.dataDir, { recursive: true });
    secret = randomBytes(32).toString('base64url');
    writeFileSync(devSecretPath(config.dataDir), secret + '\n', { mode: 0o600 });
    chmodSync(devSecretPath(config.dataDir), 0o600);
  }
  return { ...config, auth: { ...a, secret, devSecret: true } };
}
