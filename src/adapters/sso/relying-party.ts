import { claimAt } from '../../infrastructure/auth/claims-mapping';
import type { OidcConfig } from '../../infrastructure/config/config';
import { openIdClient, OpenIdClient } from './openid-client';
import { printable } from './cookies';

/** What one sign-in must find again at the callback, and nowhere else (sealed in the login cookie). */
export interface LoginTransaction {
  state: string;
  nonce: string;
  codeVerifier: string;
  returnTo: string;
}

/** Why a callback was refused: a stable code shown on the error page and logged. */
export type CallbackFailure =
  'provider_refused' | 'state_mismatch' | 'nonce_mismatch' | 'code_refused' | 'login_failed' | 'provider_unavailable';

export class CallbackError extends Error {
  constructor(
    readonly code: CallbackFailure,
    message: string,
  ) {
    super(message);
  }
}

export interface SignedIn {
  claims: Record<string, unknown>;
  idToken?: string;
}

/**
 * The web inbox as an OpenID Connect relying party (openid-client): the authorization code flow with PKCE (S256),
 * state and nonce, the code exchanged with the client secret. The provider's discovery document is read on first
 * use and again after a failure, so a provider down at start does not keep Tollgate from starting.
 */
export class RelyingParty {
  private discovered?: Promise<OpenIdClient.Configuration>;

  constructor(private readonly oidc: OidcConfig) {}

  /** `prompt: 'login'` makes the provider ask who signs in even when its own session would answer for them. */
  async loginUrl(
    redirectUri: string,
    returnTo: string,
    prompt?: 'login',
  ): Promise<{ url: string; transaction: LoginTransaction }> {
    const client = await openIdClient();
    const config = await this.configuration();
    const transaction: LoginTransaction = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      codeVerifier: client.randomPKCECodeVerifier(),
      returnTo,
    };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: this.oidc.scopes.join(' '),
      response_type: 'code',
      state: transaction.state,
      nonce: transaction.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(transaction.codeVerifier),
      code_challenge_method: 'S256',
      ...(prompt ? { prompt } : {}),
    });
    return { url: url.href, transaction };
  }

  /**
   * Checks the callback against its transaction (state, then the code with PKCE, then the ID token's nonce). The
   * claims are the ID token's; when it lacks one of `needed` (the groups, the tenant) and the provider has a
   * userinfo endpoint, what userinfo says for the same `sub` fills the gaps (Okta and Google put groups there unless
   * told otherwise).
   */
  async finish(callbackUrl: URL, t: LoginTransaction, needed: string[] = []): Promise<SignedIn> {
    const client = await openIdClient();
    const config = await this.configuration();
    const error = callbackUrl.searchParams.get('error');
    if (error !== null) {
      const described = callbackUrl.searchParams.get('error_description');
      throw new CallbackError(
        'provider_refused',
        `The identity provider refused the sign-in: ${bounded(error)}${described ? ` (${bounded(described)})` : ''}`,
      );
    }
    // Compared here first, so a forged or crossed callback never reaches the token endpoint.
    if (callbackUrl.searchParams.get('state') !== t.state)
      throw new CallbackError(
        'state_mismatch',
        'This sign-in answer does not belong to the sign-in this browser began',
      );
    let tokens: OpenIdClient.TokenEndpointResponse & OpenIdClient.TokenEndpointResponseHelpers;
    try {
      tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: t.codeVerifier,
        expectedState: t.state,
        expectedNonce: t.nonce,
        idTokenExpected: true,
      });
    } catch (e) {
      throw classify(e, client);
    }
    const idClaims = tokens.claims();
    if (!idClaims) throw new CallbackError('login_failed', 'The identity provider sent no ID token');
    const claims: Record<string, unknown> = { ...idClaims };
    const missing = needed.filter((name) => claimAt(claims, name) === undefined);
    if (missing.length > 0 && config.serverMetadata().userinfo_endpoint && tokens.access_token) {
      let info: Record<string, unknown>;
      try {
        info = { ...(await client.fetchUserInfo(config, tokens.access_token, idClaims.sub)) };
      } catch (e) {
        throw new CallbackError(
          'login_failed',
          `The identity provider's userinfo (for ${missing.join(', ')}) could not be read: ${bounded((e as Error).message)}`,
        );
      }
      for (const [k, v] of Object.entries(info)) if (!(k in claims)) claims[k] = v; // the signed ID token wins
    }
    return { claims, idToken: tokens.id_token };
  }

  /** RP-initiated logout: the provider's end_session_endpoint, or undefined when it offers none. */
  async logoutUrl(idToken: string | undefined, postLogoutRedirectUri: string): Promise<string | undefined> {
    const client = await openIdClient();
    let config: OpenIdClient.Configuration;
    try {
      config = await this.configuration();
    } catch {
      return undefined; // the session is gone already; the provider's own session outlives it
    }
    if (!config.serverMetadata().end_session_endpoint) return undefined;
    return client.buildEndSessionUrl(config, {
      post_logout_redirect_uri: postLogoutRedirectUri,
      ...(idToken ? { id_token_hint: idToken } : { client_id: this.oidc.clientId }),
    }).href;
  }

  private configuration(): Promise<OpenIdClient.Configuration> {
    this.discovered ??= (async () => {
      const client = await openIdClient();
      const issuer = new URL(this.oidc.issuer);
      try {
        return await client.discovery(
          issuer,
          this.oidc.clientId,
          this.oidc.clientSecret,
          undefined,
          // oidc-config admits http only for a provider on loopback (development and tests).
          issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : undefined,
        );
      } catch (e) {
        this.discovered = undefined;
        throw new CallbackError(
          'provider_unavailable',
          `Cannot read the identity provider's discovery document at ${issuer.href}: ${(e as Error).message}`,
        );
      }
    })();
    return this.discovered;
  }
}

function classify(e: unknown, client: typeof OpenIdClient): CallbackError {
  if (e instanceof CallbackError) return e;
  if (e instanceof client.AuthorizationResponseError)
    return new CallbackError('provider_refused', `The identity provider refused the sign-in: ${bounded(e.error)}`);
  if (e instanceof client.ResponseBodyError)
    return new CallbackError(
      'code_refused',
      `The identity provider refused the code (${bounded(e.error)}): a used, expired or PKCE-mismatched code`,
    );
  const claim = ((e as { cause?: { cause?: { claim?: unknown } } }).cause?.cause as { claim?: unknown } | undefined)
    ?.claim;
  if (claim === 'nonce')
    return new CallbackError('nonce_mismatch', 'The ID token was not made for the sign-in this browser began (nonce)');
  const code = (e as { code?: unknown }).code;
  if (code === 'OAUTH_TIMEOUT' || e instanceof TypeError)
    return new CallbackError(
      'provider_unavailable',
      `The identity provider could not be reached: ${(e as Error).message}`,
    );
  return new CallbackError('login_failed', `The sign-in answer did not check out: ${bounded((e as Error).message)}`);
}

/** A provider's words shown back, bounded (they come from the callback URL, which anyone can write). */
function bounded(s: string): string {
  return printable(s, 200);
}
