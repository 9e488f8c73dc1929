/* A step-up's proof as decisions carry it (rules/step-up.ts checks it). */

/**
 * What a WebAuthn assertion proved, once the application verified it (signature, user verification, the
 * credential is the decider's own, the challenge was issued to them and not used before): a present person
 * approved this call with these exact arguments. Kept on the decision, in its event and in the receipt.
 */
export interface StepUpProof {
  method: 'passkey';
  /** The passkey's credential id (base64url), registered to the decider. */
  credentialId: string;
  /** The authenticator model's AAGUID (all zeros when the authenticator does not say). */
  aaguid: string;
  /** The authenticator verified the user (PIN, biometrics); a proof without it is never made. */
  userVerified: true;
  /** The call and the digest (SHA-256 of the RFC 8785 form) of the arguments the challenge was derived from. */
  toolCallId: string;
  argumentsDigest: string;
  /** The challenge's random part: with the call id and digest it derives the challenge again (docs/AUTH.md). */
  nonce: string;
  /**
   * The passkey's public key (COSE, base64url), as registered: the proof checks on its own even after a retention
   * purge removed the PasskeyRegistered event.
   */
  publicKey: string;
  /** The assertion as the authenticator signed it (base64url), so an auditor can check it with the passkey's key. */
  assertion: { clientDataJSON: string; authenticatorData: string; signature: string };
}

/**
 * What a decision brings of a step-up: a verified proof, an assertion whose challenge was derived from another
 * call or other arguments than the ones approved (`mismatch`), or one that proves nothing (`invalid`: a bad
 * signature, an unknown or someone else's passkey, no user verification, an expired or used challenge).
 */
export type StepUpEvidence =
  | { outcome: 'verified'; proof: StepUpProof; arguments: Record<string, unknown> }
  | { outcome: 'mismatch'; reason: string }
  | { outcome: 'invalid'; reason: string };
