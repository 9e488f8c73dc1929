/** Single sign-on settings (TOLLGATE_OIDC_*), read by loadConfig. Unset issuer: no single sign-on. */
import { readFileSync } from 'node:fs';
import { ConfigError } from './config-error';
import { isLoopbackHost } from './loopback';
import { spanSeconds } from './duration';

export interface OidcConfig {
  /** The provider's issuer URL; its discovery document is read from `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  /** What the sign-in page calls the provider: "Sign in with <providerName>" (TOLLGATE_OIDC_NAME; default: its host). */
  providerName: string;
  /** The web inbox's confidential client (authorization code flow with PKCE). */
  clientId: string;
  clientSecret: string;
  /** The CLI's public client for the device authorization grant (TOLLGATE_OIDC_CLI_CLIENT_ID; default: clientId). */
  cliClientId: string;
  /** Scopes asked for (TOLLGATE_OIDC_SCOPES; default `openid profile email`). */
  scopes: string[];
  /** The claim that holds the person's groups or roles (TOLLGATE_OIDC_ROLES_CLAIM; default `roles`). */
  rolesClaim: string;
  /**
   * Provider group → Tollgate roles (TOLLGATE_OIDC_ROLE_MAP="payments-leads=approver,secops=admin"). Empty: the
   * claim's values are taken as Tollgate roles as they are.
   */
  roleMap: Record<string, string[]>;
  /** Where the tenant comes from: one claim (TOLLGATE_OIDC_TENANT_CLAIM) or one fixed tenant (TOLLGATE_OIDC_TENANT). */
  tenant: { claim: string } | { fixed: string };
  /** A session's whole lifetime (TOLLGATE_SESSION_TTL, seconds; default 12 h). */
  sessionTtlSeconds: number;
  /** A session unused this long ends (TOLLGATE_SESSION_IDLE_TIMEOUT, seconds; default 1 h). */
  sessionIdleSeconds: number;
}

/** A person's roles (as claims-mapping's PERSON_ROLES; not imported: claims-mapping reads this file's type). */
const ROLES = ['approver', 'admin', 'auditor'];
const TENANT = /^[A-Za-z0-9_.:-]{1,128}$/;

export function oidcConfig(env: NodeJS.ProcessEnv): OidcConfig | undefined {
  const issuer = env.TOLLGATE_OIDC_ISSUER?.trim();
  if (!issuer) {
    const stray = Object.keys(env).filter((k) => k.startsWith('TOLLGATE_OIDC_') && env[k]);
    if (stray.length > 0) throw new ConfigError(`${stray.join(', ')} set without TOLLGATE_OIDC_ISSUER`);
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new ConfigError(`TOLLGATE_OIDC_ISSUER must be a URL, got "${issuer}"`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname)))
    throw new ConfigError('TOLLGATE_OIDC_ISSUER must be https (http only on loopback, for development)');
  const clientId = env.TOLLGATE_OIDC_CLIENT_ID?.trim();
  if (!clientId) throw new ConfigError('TOLLGATE_OIDC_ISSUER needs TOLLGATE_OIDC_CLIENT_ID');
  const clientSecret = secret(env);
  const claim = env.TOLLGATE_OIDC_TENANT_CLAIM?.trim();
  const fixed = env.TOLLGATE_OIDC_TENANT?.trim();
  if (claim && fixed) throw new ConfigError('Set TOLLGATE_OIDC_TENANT_CLAIM or TOLLGATE_OIDC_TENANT, not both');
  if (fixed && !TENANT.test(fixed)) throw new ConfigError(`TOLLGATE_OIDC_TENANT must match ${TENANT.source}`);
  const scopes = (env.TOLLGATE_OIDC_SCOPES?.trim() || 'openid profile email').split(/[\s,]+/).filter(Boolean);
  if (!scopes.includes('openid')) throw new ConfigError('TOLLGATE_OIDC_SCOPES must include openid');
  const providerName = (env.TOLLGATE_OIDC_NAME?.trim() || url.hostname).slice(0, 64);
  return {
    issuer,
    providerName,
    clientId,
    clientSecret,
    cliClientId: env.TOLLGATE_OIDC_CLI_CLIENT_ID?.trim() || clientId,
    scopes,
    rolesClaim: env.TOLLGATE_OIDC_ROLES_CLAIM?.trim() || 'roles',
    roleMap: parseRoleMap(env.TOLLGATE_OIDC_ROLE_MAP ?? ''),
    tenant: claim ? { claim } : { fixed: fixed || 'default' },
    sessionTtlSeconds: seconds(env.TOLLGATE_SESSION_TTL, 12 * 3600, 'TOLLGATE_SESSION_TTL'),
    sessionIdleSeconds: seconds(env.TOLLGATE_SESSION_IDLE_TIMEOUT, 3600, 'TOLLGATE_SESSION_IDLE_TIMEOUT'),
  };
}

/** `payments-leads=approver,secops=admin+approver,audit=auditor`: a group named twice gets both. */
export function parseRoleMap(raw: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const entry of raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const at = entry.lastIndexOf('=');
    const group = at > 0 ? entry.slice(0, at).trim() : '';
    const roles =
      at > 0
        ? entry
            .slice(at + 1)
            .split('+')
            .map((r) => r.trim())
        : [];
    if (!group || roles.length === 0)
      throw new ConfigError(`TOLLGATE_OIDC_ROLE_MAP: "${entry}" is not <group>=<role>, e.g. secops=admin`);
    const bad = roles.find((r) => !ROLES.includes(r));
    if (bad !== undefined)
      throw new ConfigError(
        `TOLLGATE_OIDC_ROLE_MAP: "${entry}": "${bad}" is not one of ${ROLES.join(', ')} (people never sign in as agents)`,
      );
    out[group] = [...new Set([...(out[group] ?? []), ...roles])];
  }
  return out;
}

function secret(env: NodeJS.ProcessEnv): string {
  const direct = env.TOLLGATE_OIDC_CLIENT_SECRET;
  const file = env.TOLLGATE_OIDC_CLIENT_SECRET_FILE;
  if (direct && file) throw new ConfigError('Set TOLLGATE_OIDC_CLIENT_SECRET or its _FILE, not both');
  if (file) {
    try {
      const s = readFileSync(file, 'utf8').trim();
      if (s) return s;
    } catch (e) {
      throw new ConfigError(`TOLLGATE_OIDC_CLIENT_SECRET_FILE: cannot read ${file}: ${(e as Error).message}`);
    }
    throw new ConfigError(`TOLLGATE_OIDC_CLIENT_SECRET_FILE: ${file} is empty`);
  }
  if (!direct) throw new ConfigError('TOLLGATE_OIDC_ISSUER needs TOLLGATE_OIDC_CLIENT_SECRET (or _FILE)');
  return direct;
}

/** Seconds, or a span like `12h` or `30m` (the same reading as every duration setting). */
function seconds(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = spanSeconds(raw.trim(), { bare: true });
  if (n === undefined || !Number.isInteger(n) || n < 60 || n > 30 * 86400)
    throw new ConfigError(
      `${name} must be seconds or a span like 12h, from 60 (1 minute) to 2592000 (30 days), got "${raw}"`,
    );
  return n;
}
