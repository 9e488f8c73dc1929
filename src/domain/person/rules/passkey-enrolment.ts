/** How many passkeys one person may hold: enough for a phone, a laptop and spare keys; the list stays small. */
export const MAX_PASSKEYS_PER_PERSON = 20;

/** What an assertion with one of the person's own passkeys showed, when they added or removed one. */
export type OwnAssertion = 'verified' | 'absent' | 'invalid';

export type EnrolmentRefusal =
  { code: 'step_up_required'; reason: string } | { code: 'too_many_passkeys'; reason: string };

/**
 * A person's first passkey needs only their session; every later one needs an assertion with a passkey they
 * already hold, so a stolen session cannot add the thief's passkey and then approve with it. A person holds at
 * most MAX_PASSKEYS_PER_PERSON. Returns the refusal, or undefined when the passkey may be added.
 */
export function enrolmentRefusal(held: number, assertion: OwnAssertion): EnrolmentRefusal | undefined {
  if (held >= MAX_PASSKEYS_PER_PERSON)
    return {
      code: 'too_many_passkeys',
      reason: `A person holds at most ${MAX_PASSKEYS_PER_PERSON} passkeys: remove one before adding another`,
    };
  if (held === 0 || assertion === 'verified') return undefined;
  return {
    code: 'step_up_required',
    reason:
      assertion === 'absent'
        ? 'You have a passkey already: adding another needs an assertion with it'
        : 'The assertion with your existing passkey did not verify: adding another needs one that does',
  };
}

/** Removing a passkey needs an assertion with one of the person's passkeys (the one removed may be it). */
export function removalRefusal(assertion: OwnAssertion): string | undefined {
  if (assertion === 'verified') return undefined;
  return assertion === 'absent'
    ? 'Removing a passkey needs an assertion with one of your passkeys'
    : 'The assertion with your passkey did not verify';
}
