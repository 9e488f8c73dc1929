/**
 * Single-use action tokens (push notification actions, email links): each lets one named person make one
 * decision on one held call, for the exact arguments they were shown, until it expires. Signed by the instance
 * (the receipt key, with a type of its own), spent once (table `action_token_uses`).
 */
export const ACTION_TOKENS = Symbol('ActionTokens');

export type ActionDecision = 'approve' | 'reject';
/** The channels that carry action tokens. */
export type ActionChannel = 'push' | 'email';

export interface ActionGrant {
  tenant: string;
  /** The person who may use it (persons.id). */
  person: string;
  toolCallId: string;
  /** digestJson of the arguments the person was shown, which an approval would approve. */
  argumentsDigest: string;
  decision: ActionDecision;
  via: ActionChannel;
  expiresAt: Date;
}

export interface ActionTokens {
  /** A compact JWS carrying the grant and a fresh `jti`. */
  issue(grant: ActionGrant): Promise<string>;
}
