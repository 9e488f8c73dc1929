import { decodeJwt } from 'jose';
import {
  MAX_USER_TOKEN_LENGTH,
  UserTokens,
  userTokensNotConfigured,
  VerifiedUser,
} from '../../application/ports/user-token.port';
import { DomainError } from '../../domain/shared/domain-error';
import { AuthConfig, ConfigError, TollgateConfig } from '../config/config';
import { InvalidTokenError, JwtVerifier } from './jwt-verifier';

/** The bounds a user the agent names keeps (ConversationUserDto): a token may not carry more. */
const MAX_ROLES = 64;
const MAX_ROLE_LENGTH = 128;
const MAX_NAME_LENGTH = 256;

const CREDENTIAL_DETAIL =
  "user.token would also be accepted by Tollgate as a bearer token, so the agent would hold the person's access to Tollgate: pass a token the identity provider issued to the agent's application (an audience listed in TOLLGATE_USER_TOKEN_AUDIENCE), not one for Tollgate";

function invalid(detail: string): DomainError {
  return new DomainError('invalid_user_token', 'invalid', detail);
}

/**
 * The audiences Tollgate takes bearer tokens for: TOLLGATE_JWT_AUDIENCE, the CLI's client id (the provider's bearer
 * audiences), and the web client's id (its ID tokens stay with sessions, but an agent has no business holding one).
 */
function tollgateAudiences(auth: AuthConfig, oidc: TollgateConfig['oidc']): string[] {
  return [
    ...(auth.audience ? [auth.audience] : []),
    ...(auth.provider?.audiences ?? []),
    ...(oidc ? [oidc.clientId, oidc.cliClientId] : []),
  ];
}

/**
 * At start: TOLLGATE_USER_TOKEN_AUDIENCE may name none of Tollgate's own audiences, or every token for it would be
 * a bearer credential the agent holds (and each would be refused as one).
 */
export function checkUserTokenAudiences(config: TollgateConfig): void {
  const own = new Set(tollgateAudiences(config.auth, config.oidc));
  const clash = (config.auth.userTokenAudiences ?? []).filter((a) => own.has(a));
  if (clash.length > 0)
    throw new ConfigError(
      `TOLLGATE_USER_TOKEN_AUDIENCE lists ${clash.join(', ')}, an audience Tollgate itself accepts (TOLLGATE_JWT_AUDIENCE or an OIDC client id): name the agent application's own client id instead`,
    );
}

/**
 * End users' own tokens (start conversation's `user.token`), verified with the keys of people's tokens. The agent
 * must never hold a token that lets it act as the person in Tollgate: a token for one of Tollgate's own audiences,
 * or one the bearer verifier accepts as it is (an HS256 token when no TOLLGATE_JWT_AUDIENCE narrows them), is
 * refused as `user_token_is_credential`. Problem details never carry the token, and nothing here logs it.
 */
export class JwtUserTokens implements UserTokens {
  private readonly bearerAudiences: ReadonlySet<string>;

  constructor(
    private readonly cfg: AuthConfig,
    private readonly verifier: JwtVerifier,
    oidc?: TollgateConfig['oidc'],
  ) {
    this.bearerAudiences = new Set(tollgateAudiences(cfg, oidc));
  }

  async verify(token: string, tenant: string): Promise<VerifiedUser> {
    const audiences = this.cfg.userTokenAudiences ?? [];
    if (audiences.length === 0) throw userTokensNotConfigured();
    if (token.length > MAX_USER_TOKEN_LENGTH)
      throw invalid(`user.token is longer than ${MAX_USER_TOKEN_LENGTH} characters`);
    let aud: unknown;
    try {
      aud = decodeJwt(token).aud;
    } catch {
      throw invalid('user.token is not a JWT');
    }
    // Before any signature work: what it is for says enough, and a forged one is refused either way.
    const claimed = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
    if (claimed.some((a) => typeof a === 'string' && this.bearerAudiences.has(a)))
      throw new DomainError('user_token_is_credential', 'invalid', CREDENTIAL_DETAIL);
    if (await this.acceptedAsBearer(token))
      throw new DomainError(
        'user_token_is_credential',
        'invalid',
        this.cfg.secret && !this.cfg.audience
          ? `${CREDENTIAL_DETAIL}. With TOLLGATE_JWT_SECRET and no TOLLGATE_JWT_AUDIENCE every token signed with the secret is a bearer token: set TOLLGATE_JWT_AUDIENCE (and mint bearer tokens with it) to take HS256 user tokens`
          : CREDENTIAL_DETAIL,
      );
    let user;
    try {
      user = await this.verifier.verifyForAudience(token, audiences);
    } catch (e) {
      if (e instanceof InvalidTokenError) throw invalid(`user.token does not verify: ${e.message}`);
      throw e; // the provider's keys out of reach: 503, as for a bearer token
    }
    if (user.roles.includes('agent'))
      throw invalid("user.token is an agent's token: pass the end user's own token from the identity provider");
    if (user.tenant !== tenant) throw invalid("user.token is of another tenant than the agent's");
    if (user.roles.length > MAX_ROLES || user.roles.some((r) => r.length > MAX_ROLE_LENGTH))
      throw invalid(
        `user.token carries more than ${MAX_ROLES} roles, or one longer than ${MAX_ROLE_LENGTH} characters`,
      );
    const name = user.name !== undefined && user.name.length <= MAX_NAME_LENGTH ? user.name : undefined;
    return { id: user.id, roles: [...user.roles], ...(name ? { name } : {}) };
  }

  /** Whether Tollgate would take the token as a bearer credential, exactly as its guard does. */
  private async acceptedAsBearer(token: string): Promise<boolean> {
    try {
      await this.verifier.verify(token);
      return true;
    } catch (e) {
      if (e instanceof InvalidTokenError) return false;
      throw e;
    }
  }
}
