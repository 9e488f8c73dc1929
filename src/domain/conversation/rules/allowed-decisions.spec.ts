import fc from 'fast-check';
import { DomainError } from '../../shared/domain-error';
import type { PolicyVerdict } from '../../policy/approval-policy';
import { RULE_DECISIONS, RuleDecision } from '../../policy/policy-shape';
import { Conversation, Decider } from '../conversation.aggregate';
import type { DecisionInput } from '../tool-call.entity';
import { decisionNotAllowed, isRejection, MAX_RESPONSE_LENGTH, ruleDecisionOf } from './allowed-decisions';

const ARGS = { id: 'inv_1', amount: 120 };
const T0 = new Date('2026-03-01T12:00:00.000Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const ann: Decider = { id: 'ann', tenant: 't1', roles: ['approver'], via: 'web' };
const root: Decider = { id: 'root', tenant: 't1', roles: ['admin'], via: 'web' };

function held(over: Partial<PolicyVerdict> = {}) {
  const conv = Conversation.start({ id: 'conv_1', tenantId: 't1', agentId: 'bot', user: null, at: at(0) });
  const verdict: PolicyVerdict = {
    level: 'confirm',
    rule: 0,
    policyVersion: 1,
    reason: 'payments need a person',
    approvers: ['approver', 'admin'],
    timeoutSeconds: 7 * 24 * 3600,
    grants: 'tenant',
    ...over,
  };
  const { calls } = conv.propose(
    [{ toolName: 'pay', arguments: ARGS }],
    () => verdict,
    () => 'tc_1',
    at(1),
    null,
  );
  conv.pullEvents();
  return { conv, call: calls[0] };
}

function code(fn: () => unknown): string | undefined {
  try {
    const r = fn() as { kind: string; error?: DomainError };
    return r.kind === 'refused' ? r.error!.code : undefined;
  } catch (e) {
    if (e instanceof DomainError) return e.code;
    throw e;
  }
}

const rule = {
  allowedDecisions: ['approve', 'reject'] as RuleDecision[],
  rejectReasons: ['duplicate', 'wrong amount'],
};

describe('allowed decisions (rules/allowed-decisions)', () => {
  it('names an approval with changed arguments an edit, with the same ones an approval', () => {
    expect(ruleDecisionOf({ decision: 'approve' }, ARGS)).toBe('approve');
    expect(ruleDecisionOf({ decision: 'approve', arguments: { amount: 120, id: 'inv_1' } }, ARGS)).toBe('approve');
    expect(ruleDecisionOf({ decision: 'approve', arguments: { ...ARGS, amount: 1 } }, ARGS)).toBe('edit');
    expect(ruleDecisionOf({ decision: 'always_reject' }, ARGS)).toBe('reject');
    expect(isRejection('respond') && isRejection('always_reject') && !isRejection('always_allow')).toBe(true);
  });

  it('refuses an edit, an always_allow and a respond the rule does not list, with 403 decision_not_allowed', () => {
    for (const input of [
      { decision: 'approve', arguments: { ...ARGS, amount: 5 } },
      { decision: 'always_allow' },
      { decision: 'respond', response: 'use the other account' },
    ] as DecisionInput[]) {
      const { conv, call } = held(rule);
      expect(code(() => conv.decide('tc_1', input, ann, at(2)))).toBe('decision_not_allowed');
      expect(call.status).toBe('pending');
      expect(conv.pullEvents()).toEqual([]);
    }
  });

  it('takes a listed reason (trimmed), refuses another and a rejection without one', () => {
    const { conv, call } = held(rule);
    expect(code(() => conv.decide('tc_1', { decision: 'reject', reason: 'typo' }, ann, at(2)))).toBe(
      'decision_not_allowed',
    );
    expect(code(() => conv.decide('tc_1', { decision: 'reject' }, ann, at(2)))).toBe('decision_not_allowed');
    const r = conv.decide('tc_1', { decision: 'reject', reason: ' duplicate ' }, ann, at(3));
    expect(r.kind).toBe('decided');
    expect(call.status).toBe('rejected');
  });

  it('with rejectFreeText takes any reason, but still asks for one', () => {
    const free = { ...rule, rejectFreeText: true as const };
    expect(decisionNotAllowed(free, { decision: 'reject', reason: 'my own words' }, ARGS)).toBeUndefined();
    expect(decisionNotAllowed(free, { decision: 'reject', reason: '  ' }, ARGS)).toContain('asks for a reason');
  });

  it('allows every decision when the rule names none, respond included; respond needs its text', () => {
    expect(decisionNotAllowed({}, { decision: 'respond', response: 'try tomorrow' }, ARGS)).toBeUndefined();
    expect(decisionNotAllowed({}, { decision: 'respond' }, ARGS)).toContain('respond needs');
    expect(
      decisionNotAllowed({}, { decision: 'respond', response: 'x'.repeat(MAX_RESPONSE_LENGTH + 1) }, ARGS),
    ).toContain('at most');
  });

  it('respond rejects the call and keeps the answer in the decision and the event', () => {
    const { conv, call } = held({ allowedDecisions: ['approve', 'respond'] });
    conv.decide('tc_1', { decision: 'respond', response: 'Pay it from the EUR account instead' }, ann, at(2));
    expect(call.status).toBe('rejected');
    expect(call.decision).toMatchObject({ kind: 'respond', response: 'Pay it from the EUR account instead' });
    const [e] = conv.pullEvents();
    expect(e.type).toBe('ToolCallRejected');
    expect(e.data).toMatchObject({ decision: 'respond', response: 'Pay it from the EUR account instead' });
  });

  it('always_reject rejects and asks for a standing deny, bounded by the decider’s roles', () => {
    const a = held();
    const r = a.conv.decide('tc_1', { decision: 'always_reject', scope: 'conversation', reason: 'no' }, ann, at(2));
    expect(r).toMatchObject({ kind: 'decided', deny: { toolName: 'pay', scope: 'conversation' } });
    expect(a.conv.pullEvents()[0].data).toMatchObject({ decision: 'always_reject', scope: 'conversation' });
    const b = held();
    expect(code(() => b.conv.decide('tc_1', { decision: 'always_reject', scope: 'tenant' }, ann, at(2)))).toBe(
      'forbidden',
    );
    expect(b.call.status).toBe('pending');
    const c = held();
    expect(c.conv.decide('tc_1', { decision: 'always_reject', scope: 'tenant' }, root, at(2))).toMatchObject({
      deny: { scope: 'tenant' },
    });
  });

  it('a rejection under rejectReasons is refused with the list; the same rejection again is unchanged', () => {
    const { conv } = held(rule);
    conv.decide('tc_1', { decision: 'reject', reason: 'duplicate' }, ann, at(2));
    expect(conv.decide('tc_1', { decision: 'reject', reason: 'duplicate' }, ann, at(3)).kind).toBe('unchanged');
  });

  it('property: a decision is taken exactly when its rule decision is listed (and its reason fits)', () => {
    const decisionArb = fc.constantFrom<DecisionInput>(
      { decision: 'approve' },
      { decision: 'approve', arguments: { ...ARGS, amount: 7 } },
      { decision: 'always_allow' },
      { decision: 'reject', reason: 'duplicate' },
      { decision: 'reject', reason: 'something else' },
      { decision: 'reject' },
      { decision: 'always_reject', reason: 'wrong amount' },
      { decision: 'respond', response: 'not now' },
    );
    fc.assert(
      fc.property(
        fc.option(fc.subarray([...RULE_DECISIONS], { minLength: 1 }), { nil: undefined }),
        fc.boolean(),
        fc.boolean(),
        decisionArb,
        (allowed, reasons, free, input) => {
          const policy = {
            ...(allowed ? { allowedDecisions: allowed } : {}),
            ...(reasons ? { rejectReasons: ['duplicate', 'wrong amount'] } : {}),
            ...(reasons && free ? { rejectFreeText: true as const } : {}),
          };
          const { conv, call } = held(policy);
          const kind = ruleDecisionOf(input, ARGS);
          const reasonOk =
            kind !== 'reject' ||
            !reasons ||
            (!!input.reason && (free || ['duplicate', 'wrong amount'].includes(input.reason)));
          const expected = (!allowed || allowed.includes(kind)) && reasonOk;
          const got = code(() => conv.decide('tc_1', input, ann, at(2)));
          if (expected) {
            expect(got).toBeUndefined();
            expect(call.status).not.toBe('pending');
          } else {
            expect(got).toBe('decision_not_allowed');
            expect(call.status).toBe('pending');
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
