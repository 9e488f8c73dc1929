import type { Configuration, DeviceAuthorizationResponse, TokenEndpointResponse } from 'openid-client';
import type { StoredLoginEntry } from './credentials';
import { printable } from '../safe-text';
import { isLoopbackHost } from '../../../infrastructure/config/loopback';

/**
 * The CLI's side of the organisation's identity provider, through openid-client: discovery, the device
 * authorization grant (RFC 8628), refresh and revocation. The CLI is a public client (no secret: a secret shipped
 * to every laptop is no secret), so it authenticates with its client id only.
 */

/** Loaded on use: only login, logout and a refresh need it (it is an ES module, so `import()`). */
function oidc(): Promise<typeof import('openid-client')> {
  return import('openid-client');
}

export class ProviderError extends Error {
  constructor(
    message: string,
    /** The OAuth error code when the provider answered with one (`access_denied`, `invalid_grant`, …). */
    readonly code?: string,
  ) {
    super(message);
  }
}

/** http only on loopback (a provider run for development or tests), as the server allows for TOLLGATE_OIDC_ISSUER. */
export function checkIssuer(issuer: string): URL {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new ProviderError(`the issuer "${issuer}" is not a URL`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname)))
    throw new ProviderError(`the issuer ${issuer} is not https (http only on loopback)`);
  return url;
}

export async function discover(issuer: string, clientId: string): Promise<Configuration> {
  const client = await oidc();
  const url = checkIssuer(issuer);
  try {
    return await client.discovery(url, clientId, undefined, client.None(), {
      execute: url.protocol === 'http:' ? [client.allowInsecureRequests] : [],
      timeout: 15,
    });
  } catch (e) {
    throw new ProviderError(`cannot read the identity provider's discovery document at ${issuer}: ${describe(e)}`);
  }
}

export function supportsDeviceFlow(config: Configuration): boolean {
  return typeof config.serverMetadata().device_authorization_endpoint === 'string';
}

/**
 * The scopes to ask for: the server's, plus `offline_access` where the provider knows it, since many providers
 * (Okta, Entra ID, Keycloak's offline sessions) issue a refresh token only for it, and without one a login lasts
 * one access token.
 */
export function scopesFor(config: Configuration, scopes: string[]): string {
  const supported = config.serverMetadata().scopes_supported;
  const all = new Set(scopes);
  if (Array.isArray(supported) && supported.includes('offline_access')) all.add('offline_access');
  return [...all].join(' ');
}

export async function startDeviceFlow(config: Configuration, scope: string): Promise<DeviceAuthorizationResponse> {
  const client = await oidc();
  try {
    return await client.initiateDeviceAuthorization(config, { scope });
  } catch (e) {
    throw providerError('the provider refused to start the device sign-in', e);
  }
}

/** Polls until the person confirms or refuses, the code expires, or `signal` aborts; interval and slow_down honoured by openid-client. */
export async function awaitDeviceTokens(
  config: Configuration,
  started: DeviceAuthorizationResponse,
  signal: AbortSignal,
): Promise<TokenEndpointResponse> {
  const client = await oidc();
  const expiry = AbortSignal.timeout(started.expires_in * 1000);
  try {
    return await client.pollDeviceAuthorizationGrant(config, started, undefined, {
      signal: AbortSignal.any([signal, expiry]),
    });
  } catch (e) {
    if (signal.aborted) throw new ProviderError('cancelled', 'cancelled');
    if (expiry.aborted) throw new ProviderError('the code expired before it was confirmed', 'expired_token');
    throw providerError('the sign-in did not complete', e);
  }
}

export async function refresh(config: Configuration, refreshToken: string): Promise<TokenEndpointResponse> {
  const client = await oidc();
  try {
    return await client.refreshTokenGrant(config, refreshToken);
  } catch (e) {
    throw providerError('the provider refused to refresh the login', e);
  }
}

/**
 * Revokes at the provider's revocation endpoint; false when it has none. The refresh token first: revoking it
 * ends the grant at most providers, and it is the long-lived one. A JWT access token cannot be revoked at many
 * providers (RFC 7009's `unsupported_token_type`): it lapses at its expiry, minutes away, and that is not a failure.
 */
export async function revoke(config: Configuration, entry: StoredLoginEntry): Promise<boolean> {
  if (typeof config.serverMetadata().revocation_endpoint !== 'string') return false;
  const client = await oidc();
  try {
    if (entry.refresh_token)
      await client.tokenRevocation(config, entry.refresh_token, { token_type_hint: 'refresh_token' });
  } catch (e) {
    throw providerError('the provider refused to revoke the refresh token', e);
  }
  try {
    await client.tokenRevocation(config, entry.access_token, { token_type_hint: 'access_token' });
  } catch (e) {
    if ((e as { error?: unknown }).error !== 'unsupported_token_type' || !entry.refresh_token)
      throw providerError('the provider refused to revoke the access token', e);
  }
  return true;
}

/** The stored form of a token response; a refresh that returns no new refresh or ID token keeps the old one. */
export function toEntry(
  base: Pick<StoredLoginEntry, 'url' | 'issuer' | 'clientId'> & Partial<StoredLoginEntry>,
  tokens: TokenEndpointResponse,
  now = Math.floor(Date.now() / 1000),
): StoredLoginEntry {
  return {
    url: base.url,
    issuer: base.issuer,
    clientId: base.clientId,
    access_token: tokens.access_token,
    ...((tokens.refresh_token ?? base.refresh_token)
      ? { refresh_token: tokens.refresh_token ?? base.refresh_token }
      : {}),
    ...(typeof tokens.expires_in === 'number' ? { expires_at: now + tokens.expires_in } : {}),
    ...((tokens.id_token ?? base.id_token) ? { id_token: tokens.id_token ?? base.id_token } : {}),
    obtained_at: now,
  };
}

function providerError(what: string, e: unknown): ProviderError {
  const body = e as { error?: unknown; error_description?: unknown };
  if (typeof body?.error === 'string') {
    const detail = typeof body.error_description === 'string' ? `: ${printable(body.error_description, 500)}` : '';
    return new ProviderError(`${what} (${printable(body.error, 100)}${detail})`, body.error);
  }
  return new ProviderError(`${what}: ${printable(describe(e), 500)}`);
}

function describe(e: unknown): string {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  const cause = err?.cause?.code ?? err?.cause?.message;
  return `${err?.message ?? String(e)}${cause ? ` (${cause})` : ''}`;
}
