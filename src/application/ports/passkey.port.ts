import type { StepUpEvidence } from '../../domain/conversation/rules/step-up';
import type { Principal } from '../../domain/shared/actor';
import type { DomainError } from '../../domain/shared/domain-error';

export const PASSKEYS = Symbol('Passkeys');

/**
 * WebAuthn's JSON shapes (PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON, …) pass through the
 * application unread: the adapter checks their size and the infrastructure, with @simplewebauthn/server, their
 * content. Typed loosely here so the application does not depend on that library.
 */
export type WebAuthnJson = Record<string, unknown>;

/** The changes to one's passkeys an assertion may authorise, each with challenges of its own. */
export const PASSKEY_CHANGES = ['add', 'remove', 'revoke'] as const;
export type PasskeyChange = (typeof PASSKEY_CHANGES)[number];

/** A registered passkey as its owner sees it (never its public key). */
export interface PasskeySummary {
  id: string;
  name: string;
  aaguid: string;
  /** Synced between devices by its provider (a multi-device credential), as the authenticator said at registration. */
  backedUp: boolean;
  createdAt: Date;
  lastUsedAt?: Date;
}

/** A passkey as registered, with what the audit trail keeps of it (PasskeyRegistered). */
export interface RegisteredPasskey extends PasskeySummary {
  /** `singleDevice` or `multiDevice`, as the authenticator said. */
  deviceType: string;
  /** The COSE public key (base64url): what checks its assertions. */
  publicKey: string;
}

/** Options for `navigator.credentials.get()` that answer a challenge Tollgate issued and will check once. */
export interface AssertionOptions {
  publicKey: WebAuthnJson;
}

/**
 * People's passkeys (tables `passkeys`, `passkey_challenges`): registering them, and the assertions that prove a
 * present person approved one call with its exact arguments (`stepUp: passkey`). Every challenge is single-use,
 * issued to one person and short-lived; the relying party is TOLLGATE_PUBLIC_URL (or localhost on loopback).
 */
export interface Passkeys {
  /**
   * Options to register a new passkey. When the person has passkeys already, also options for an assertion with
   * one of them: adding another needs it (a stolen session must not add the thief's passkey).
   */
  registrationOptions(p: Principal, at: Date): Promise<{ publicKey: WebAuthnJson; assertion?: AssertionOptions }>;
  /**
   * Checks a registration (and, for a person who holds passkeys, the assertion with one of them), uses up their
   * challenges and stores the passkey. Inside the caller's unit of work. A refusal is answered, not thrown, so
   * the unit still commits the challenges it checked: none answers twice. (A registration refused before its own
   * challenge was looked at, for want of an assertion, leaves that challenge to expire.)
   */
  register(
    p: Principal,
    input: { response: WebAuthnJson; name?: string; assertion?: WebAuthnJson },
    at: Date,
  ): Promise<{ ok: true; passkey: RegisteredPasskey } | { ok: false; error: DomainError }>;
  list(p: Principal): Promise<PasskeySummary[]>;
  /**
   * Options for the assertion one change needs: removing one of one's passkeys (`remove`, the default), or an
   * admin's removal of another person's (`revoke`). Each answers for its own change only (adding one: `add`, given
   * with the registration options).
   */
  manageOptions(p: Principal, at: Date, purpose?: PasskeyChange): Promise<AssertionOptions>;
  /** Removes one of the person's passkeys, given an assertion with one of them; a refusal is answered, as register's. */
  remove(
    p: Principal,
    credentialId: string,
    assertion: WebAuthnJson | undefined,
    at: Date,
  ): Promise<{ ok: true } | { ok: false; error: DomainError }>;
  /** How many passkeys the person holds. */
  count(p: Principal): Promise<number>;
  /**
   * An admin's recovery for a lost device: removes one of another person's passkeys (in the admin's tenant), given
   * an assertion with one of the admin's own passkeys made for `revoke`.
   */
  revoke(
    admin: Principal,
    personId: string,
    credentialId: string,
    assertion: WebAuthnJson | undefined,
    at: Date,
  ): Promise<{ ok: true } | { ok: false; error: DomainError }>;
  /**
   * Options for a step-up on `toolCallId`, approving `args`: the challenge is derived from the call id and the
   * digest (SHA-256 of the RFC 8785 form) of the arguments, with a random nonce.
   */
  stepUpOptions(
    p: Principal,
    toolCallId: string,
    args: Record<string, unknown>,
    at: Date,
  ): Promise<AssertionOptions & { argumentsDigest: string }>;
  /** Checks an assertion for a decision on `toolCallId` approving `args`, and uses up its challenge. Never throws for a bad assertion: says so. */
  verifyStepUp(
    p: Principal,
    response: WebAuthnJson,
    toolCallId: string,
    args: Record<string, unknown>,
    at: Date,
  ): Promise<StepUpEvidence>;
}
