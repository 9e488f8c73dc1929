/**
 * The key that masks and seals secret arguments (rules of domain/shared/redaction): a keyed digest for the marker
 * people see, and authenticated encryption of the real values kept beside the call for the claim only. The key
 * lives outside the database (TOLLGATE_DATA_KEY, or a file; on the embedded default a file in the data dir).
 */
export const ARGUMENT_VAULT = Symbol('ArgumentVault');

/** What a call's sealed column holds once opened. */
export interface SealedArguments {
  /** The names masked when the call was proposed (the tool's and the policy's), used again on an edit. */
  redact: string[];
  /** The real arguments as proposed. */
  arguments: Record<string, unknown>;
  /** A person's edits, real: keyed by the vault's digest of the masked edit recorded on the call. */
  edits?: Record<string, Record<string, unknown>>;
}

export interface ArgumentVault {
  /**
   * 12 hex digits of an HMAC of the value (canonical JSON) under a key derived from the data key for this tenant:
   * one tenant cannot compute another's markers to test guesses against them.
   */
  digest(value: unknown, tenant: string): string;
  /** Encrypts for one tenant and conversation (bound as associated data: a sealed value moved elsewhere will not open). */
  seal(value: SealedArguments, tenant: string, conversationId: string): string;
  /** Opens what seal made; throws DomainError `sealed_arguments_unreadable` when no key of ours opens it. */
  unseal(sealed: string, tenant: string, conversationId: string): SealedArguments;
}
