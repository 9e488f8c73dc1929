import { StepUpEvidence, StepUpProof, stepUpRefusal } from './step-up';

const ARGS = { to: 'ACME', amount: 950000 };
const proof = (over: Partial<StepUpProof> = {}): StepUpProof => ({
  method: 'passkey',
  credentialId: 'cred-1',
  aaguid: '00000000-0000-0000-0000-000000000000',
  userVerified: true,
  toolCallId: 'tc_1',
  argumentsDigest: 'ab'.repeat(32),
  nonce: 'bm9uY2U',
  publicKey: 'pQECAyYgASFYIA',
  assertion: { clientDataJSON: 'e30', authenticatorData: 'AA', signature: 'AA' },
  ...over,
});
const verified = (args: Record<string, unknown> = ARGS, over: Partial<StepUpProof> = {}): StepUpEvidence => ({
  outcome: 'verified',
  proof: proof(over),
  arguments: args,
});
const PASSKEY = { stepUp: 'passkey' as const };

describe('a step-up: an approval of a call whose rule asks for a passkey', () => {
  it('a rule that asks none takes any decision, with or without evidence', () => {
    expect(stepUpRefusal('approve', {}, undefined, 'tc_1', ARGS)).toBeUndefined();
    expect(stepUpRefusal('always_allow', {}, { outcome: 'invalid', reason: 'x' }, 'tc_1', ARGS)).toBeUndefined();
  });

  it('a rejection never needs a passkey', () => {
    expect(stepUpRefusal('reject', PASSKEY, undefined, 'tc_1', ARGS)).toBeUndefined();
  });

  it('an approval or always_allow without evidence is step_up_required', () => {
    for (const d of ['approve', 'always_allow'] as const)
      expect(stepUpRefusal(d, PASSKEY, undefined, 'tc_1', ARGS)).toEqual({
        code: 'step_up_required',
        reason: expect.stringContaining('passkey'),
      });
  });

  it('evidence that proves nothing is step_up_required, with its reason', () => {
    expect(stepUpRefusal('approve', PASSKEY, { outcome: 'invalid', reason: 'bad signature' }, 'tc_1', ARGS)).toEqual({
      code: 'step_up_required',
      reason: 'bad signature',
    });
  });

  it('evidence for another call or other arguments is step_up_mismatch', () => {
    expect(stepUpRefusal('approve', PASSKEY, { outcome: 'mismatch', reason: 'other call' }, 'tc_1', ARGS)).toEqual({
      code: 'step_up_mismatch',
      reason: 'other call',
    });
    expect(stepUpRefusal('approve', PASSKEY, verified(ARGS, { toolCallId: 'tc_2' }), 'tc_1', ARGS)?.code).toBe(
      'step_up_mismatch',
    );
    expect(stepUpRefusal('approve', PASSKEY, verified({ ...ARGS, amount: 1 }), 'tc_1', ARGS)?.code).toBe(
      'step_up_mismatch',
    );
  });

  it('verified evidence for this call and these arguments lets the approval go on (key order does not matter)', () => {
    expect(stepUpRefusal('approve', PASSKEY, verified({ amount: 950000, to: 'ACME' }), 'tc_1', ARGS)).toBeUndefined();
    expect(stepUpRefusal('always_allow', PASSKEY, verified(), 'tc_1', ARGS)).toBeUndefined();
  });
});
