import { DomainError } from '../../domain/shared/domain-error';

export const USER_TOKENS = Symbol('UserTokens');

/** The longest `user.token` taken: more than any identity provider's token (Entra ID's with many groups are a few KiB). */
export const MAX_USER_TOKEN_LENGTH = 8192;

/** The end user a token proved, through the same claims mapping as a person's token. */
export interface VerifiedUser {
  /** The token's `sub`. */
  id: string;
  roles: string[];
  name?: string;
}

/**
 * Verifies an end user's own identity provider token (start conversation's `user.token`), so the conversation's user
 * is known rather than the agent's word. Refusals are DomainErrors with their problem codes: `invalid_user_token`
 * (bad signature, expired, wrong audience, another tenant, an agent's token), `user_token_is_credential` (Tollgate
 * would take it as a bearer token: the agent would hold the person's access) and `user_token_not_configured`.
 * Implementations never log, store or echo the token.
 */
export interface UserTokens {
  /** `tenant`: the agent's; a token of any other tenant is refused. */
  verify(token: string, tenant: string): Promise<VerifiedUser>;
}

/** The refusal when the operator has not set TOLLGATE_USER_TOKEN_AUDIENCE. */
export function userTokensNotConfigured(): DomainError {
  return new DomainError(
    'user_token_not_configured',
    'invalid',
    "This Tollgate takes no user tokens: its operator has not set TOLLGATE_USER_TOKEN_AUDIENCE (the agent application's client id at the identity provider). Name the user with user.id instead (recorded as asserted)",
  );
}

/** Where no verifier is wired (handlers built by hand): every user token is refused. */
export const NO_USER_TOKENS: UserTokens = {
  verify: () => Promise.reject(userTokensNotConfigured()),
};
