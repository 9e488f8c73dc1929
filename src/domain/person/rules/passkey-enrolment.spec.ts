import { enrolmentRefusal, MAX_PASSKEYS_PER_PERSON, removalRefusal } from './passkey-enrolment';

describe('adding and removing passkeys', () => {
  it('a first passkey needs only the session', () => {
    expect(enrolmentRefusal(0, 'absent')).toBeUndefined();
    expect(enrolmentRefusal(0, 'invalid')).toBeUndefined();
  });

  it('another one needs a verified assertion with a passkey already held', () => {
    expect(enrolmentRefusal(1, 'verified')).toBeUndefined();
    expect(enrolmentRefusal(1, 'absent')).toEqual({ code: 'step_up_required', reason: expect.any(String) });
    expect(enrolmentRefusal(3, 'invalid')).toEqual({ code: 'step_up_required', reason: expect.any(String) });
  });

  it('a person holds a bounded number of them', () => {
    expect(enrolmentRefusal(MAX_PASSKEYS_PER_PERSON - 1, 'verified')).toBeUndefined();
    expect(enrolmentRefusal(MAX_PASSKEYS_PER_PERSON, 'verified')?.code).toBe('too_many_passkeys');
  });

  it('removing one needs a verified assertion', () => {
    expect(removalRefusal('verified')).toBeUndefined();
    expect(removalRefusal('absent')).toEqual(expect.any(String));
    expect(removalRefusal('invalid')).toEqual(expect.any(String));
  });
});
