import { cardPath } from '../conversation/conversation.errors';
import { DomainError } from '../shared/domain-error';

/** A passkey registration that does not verify (bad attestation, wrong origin, a used or expired challenge…). */
export class PasskeyInvalidError extends DomainError {
  constructor(reason: string) {
    super('passkey_invalid', 'invalid', reason);
  }
}

/** Adding or removing a passkey needs an assertion with one the person holds, and none verified. */
export class PasskeyAssertionRequiredError extends DomainError {
  constructor(reason: string) {
    super('step_up_required', 'forbidden', reason, { stepUp: 'passkey' });
  }
}

/** A person may hold a bounded number of passkeys. */
export class TooManyPasskeysError extends DomainError {
  constructor(reason: string) {
    super('too_many_passkeys', 'conflict', reason);
  }
}

/** The person has no passkey with that id. */
export class PasskeyNotFoundError extends DomainError {
  constructor(whose = 'of yours') {
    super('not_found', 'not_found', `No passkey ${whose} has this id`);
  }
}

/** Only admins see or remove other people's passkeys. */
export class PasskeysOfOthersError extends DomainError {
  constructor() {
    super('forbidden', 'forbidden', "Only admins see and remove other people's passkeys");
  }
}

/**
 * An admin removes other people's lost passkeys, never their own: their own need an assertion with one of them,
 * or a stolen admin session could swap the admin's passkeys for the thief's.
 */
export class OwnPasskeyRevocationError extends DomainError {
  constructor() {
    super(
      'forbidden',
      'forbidden',
      'Remove your own passkeys under /v1/me/passkeys, with an assertion from one of them; another admin can remove a lost one',
    );
  }
}

/** A step-up was asked for a call whose rule asks no passkey: approve it as any other. */
export class StepUpNotRequiredError extends DomainError {
  constructor(toolCallId: string) {
    super('step_up_not_required', 'conflict', "This call's rule asks no passkey: decide it without one", {
      toolCallId,
    });
  }
}

/** The call needs a passkey, and the person has registered none. */
export class NoPasskeyError extends DomainError {
  constructor(toolCallId: string) {
    super(
      'no_passkey',
      'conflict',
      'This call needs a passkey and you have none: register one in the inbox (Passkeys), then approve',
      { toolCallId, card: cardPath(toolCallId), stepUp: 'passkey' },
    );
  }
}

/** Passkeys are people's: an agent token neither registers one nor asks for a challenge. */
export class PasskeysForPersonsOnlyError extends DomainError {
  constructor() {
    super('forbidden', 'forbidden', 'Agent tokens have no passkeys: passkeys belong to people');
  }
}
