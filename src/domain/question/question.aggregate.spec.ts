import fc from 'fast-check';
import { Actor, Principal } from '../shared/actor';
import { DomainError, ValidationError } from '../shared/domain-error';
import { Question, QuestionInput, questionFaults } from './question.aggregate';
import { AlreadyAnsweredError } from './question.errors';

const T0 = new Date('2026-01-05T10:00:00.000Z');
const AGENT: Actor = { id: 'bot', kind: 'agent', via: 'api' };
const ann: Principal = { id: 'ann', tenant: 't1', roles: [] }; // the conversation's user
const bob: Principal = { id: 'bob', tenant: 't1', roles: ['approver'] };
const root: Principal = { id: 'root', tenant: 't1', roles: ['admin'] };
const audrey: Principal = { id: 'audrey', tenant: 't1', roles: ['auditor'] };
const botP: Principal = { id: 'bot', tenant: 't1', roles: ['agent', 'admin'] };

function ask(question: QuestionInput, at = T0): Question {
  return Question.ask({
    id: 'q_1',
    tenantId: 't1',
    conversationId: 'c1',
    agentId: 'bot',
    userId: 'ann',
    question,
    by: AGENT,
    at,
  });
}

function faultPaths(f: () => unknown): string[] {
  try {
    f();
  } catch (e) {
    if (e instanceof ValidationError) return e.faults.map((x) => x.path);
    throw e;
  }
  return [];
}

function code(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    return (e as DomainError).code;
  }
  return undefined;
}

describe('asking a question', () => {
  it('records QuestionAsked with the defaults: free text, five minutes, the user and approvers and admins', () => {
    const q = ask({ text: 'Which account should I bill?' });
    const [e] = q.pullEvents();
    expect(e).toMatchObject({ type: 'QuestionAsked', conversationId: 'c1', actor: AGENT });
    expect(e.data).toEqual({
      questionId: 'q_1',
      text: 'Which account should I bill?',
      allowFreeText: true,
      askTo: ['requester', 'approver', 'admin'],
      timeoutSeconds: 300,
      expiresAt: '2026-01-05T10:05:00.000Z',
    });
    expect(q.status).toBe('pending');
  });

  it('refuses a bad question naming each field', () => {
    expect(faultPaths(() => ask({ text: '' }))).toEqual(['text']);
    expect(faultPaths(() => ask({ text: 'x'.repeat(4001) }))).toEqual(['text']);
    expect(faultPaths(() => ask({ text: 'q', choices: ['only'] }))).toEqual(['choices']);
    expect(faultPaths(() => ask({ text: 'q', choices: Array.from({ length: 21 }, (_, i) => `c${i}`) }))).toEqual([
      'choices',
    ]);
    expect(faultPaths(() => ask({ text: 'q', choices: ['EU', 'EU'] }))).toEqual(['choices[1]']);
    expect(faultPaths(() => ask({ text: 'q', choices: ['EU', ' '] }))).toEqual(['choices[1]']);
    expect(faultPaths(() => ask({ text: 'q', choices: ['EU', 'x'.repeat(201)] }))).toEqual(['choices[1]']);
    expect(faultPaths(() => ask({ text: 'q', allowFreeText: false }))).toEqual(['allowFreeText']);
    expect(ask({ text: 'q', allowFreeText: true }).snapshot().allowFreeText).toBe(true);
    expect(faultPaths(() => ask({ text: 'q', timeoutSeconds: 0 }))).toEqual(['timeoutSeconds']);
    expect(faultPaths(() => ask({ text: 'q', timeoutSeconds: 86_401 }))).toEqual(['timeoutSeconds']);
    expect(faultPaths(() => ask({ text: 'q', askTo: ['agent'] }))).toEqual(['askTo[0]']);
    expect(faultPaths(() => ask({ text: 'q', askTo: ['auditor'] }))).toEqual(['askTo[0]']);
    expect(faultPaths(() => ask({ text: 'q', askTo: [] }))).toEqual(['askTo']);
  });

  it('knows an identical ask as a replay, and any difference as another question', () => {
    const q = ask({ text: 'EU or US?', choices: ['EU', 'US'], askTo: ['approver', 'requester'] });
    expect(
      q.asksTheSame({
        text: 'EU or US?',
        choices: ['EU', 'US'],
        askTo: ['requester', 'approver'],
        timeoutSeconds: 300,
        allowFreeText: false,
      }),
    ).toBe(true);
    expect(q.asksTheSame({ text: 'EU or US?', choices: ['US', 'EU'], askTo: ['requester', 'approver'] })).toBe(false);
    expect(q.asksTheSame({ text: 'EU or US?', choices: ['EU', 'US'] })).toBe(false);
    expect(
      q.asksTheSame({ text: 'EU or US?', choices: ['EU', 'US'], askTo: ['requester', 'approver'], timeoutSeconds: 60 }),
    ).toBe(false);
  });
});

describe('answering', () => {
  it('records QuestionAnswered with who, the channel, the answer and the latency', () => {
    const q = ask({ text: 'EU or US?', choices: ['EU', 'US'] });
    q.pullEvents();
    expect(q.answer(ann, 'web', 'EU', new Date(T0.getTime() + 1500))).toEqual({ kind: 'answered' });
    const [e] = q.pullEvents();
    expect(e).toMatchObject({ type: 'QuestionAnswered', actor: { id: 'ann', kind: 'person', via: 'web' } });
    expect(e.data).toEqual({ questionId: 'q_1', by: 'ann', via: 'web', answer: 'EU', latencyMs: 1500 });
    expect(q.snapshot().answer).toMatchObject({ text: 'EU', by: { id: 'ann', via: 'web' } });
  });

  it('refuses agents, auditors and people the question was not put to', () => {
    const q = ask({ text: 'q' });
    expect(code(() => q.answer(botP, 'api', 'x', T0))).toBe('forbidden');
    expect(code(() => q.answer(audrey, 'api', 'x', T0))).toBe('forbidden');
    const onlyUser = ask({ text: 'q', askTo: ['requester'] });
    expect(code(() => onlyUser.answer(root, 'api', 'x', T0))).toBe('forbidden');
    expect(onlyUser.answer(ann, 'api', 'x', T0).kind).toBe('answered');
    const onlyApprovers = ask({ text: 'q', askTo: ['approver', 'admin'] });
    expect(code(() => onlyApprovers.answer(ann, 'api', 'x', T0))).toBe('forbidden');
    expect(onlyApprovers.answer(bob, 'api', 'x', T0).kind).toBe('answered');
  });

  it('takes an answer outside the choices only when free text is allowed', () => {
    expect(faultPaths(() => ask({ text: 'q', choices: ['EU', 'US'] }).answer(ann, 'api', 'APAC', T0))).toEqual([
      'answer',
    ]);
    expect(ask({ text: 'q', choices: ['EU', 'US'], allowFreeText: true }).answer(ann, 'api', 'APAC', T0).kind).toBe(
      'answered',
    );
    expect(faultPaths(() => ask({ text: 'q' }).answer(ann, 'api', '  ', T0))).toEqual(['answer']);
    expect(faultPaths(() => ask({ text: 'q' }).answer(ann, 'api', 'x'.repeat(4001), T0))).toEqual(['answer']);
  });

  it('refuses an answer after expiry with already_answered, expiring the question first', () => {
    const q = ask({ text: 'q', timeoutSeconds: 1 });
    q.pullEvents();
    const r = q.answer(ann, 'api', 'x', new Date(T0.getTime() + 1000));
    expect(r).toMatchObject({
      kind: 'refused',
      error: { code: 'already_answered', details: { questionStatus: 'expired' } },
    });
    expect(q.pullEvents().map((e) => e.type)).toEqual(['QuestionExpired']);
  });

  it('a halt cancels a pending question and nothing else', () => {
    const q = ask({ text: 'q' });
    expect(q.cancel('incident', { id: 'root', kind: 'person', via: 'api' }, T0)).toBe(true);
    expect(q.status).toBe('cancelled');
    expect(q.cancel('again', { id: 'root', kind: 'person', via: 'api' }, T0)).toBe(false);
    expect(q.answer(ann, 'api', 'x', T0)).toMatchObject({ kind: 'refused', error: { code: 'already_answered' } });
  });
});

describe('properties', () => {
  const people = fc.constantFrom(ann, bob, root);
  const choices = ['EU', 'US', 'APAC'];

  it('the first valid answer wins across any sequence: replays by its author change nothing, the rest are refused', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ who: people, answer: fc.constantFrom(...choices, 'other') }), {
          minLength: 1,
          maxLength: 12,
        }),
        (attempts) => {
          const q = ask({ text: 'Region?', choices });
          q.pullEvents();
          let first: { who: Principal; answer: string } | undefined;
          for (const a of attempts) {
            if (!choices.includes(a.answer)) {
              expect(faultPaths(() => q.answer(a.who, 'api', a.answer, T0))).toEqual(['answer']);
              continue;
            }
            const r = q.answer(a.who, 'api', a.answer, T0);
            if (!first) {
              expect(r.kind).toBe('answered');
              first = a;
            } else if (a.who.id === first.who.id && a.answer === first.answer) {
              expect(r.kind).toBe('unchanged');
            } else {
              expect(r.kind).toBe('refused');
              expect((r as { error: DomainError }).error).toBeInstanceOf(AlreadyAnsweredError);
            }
          }
          const answered = q.pullEvents();
          expect(answered.map((e) => e.type)).toEqual(first ? ['QuestionAnswered'] : []);
          if (first) expect(q.snapshot().answer).toMatchObject({ text: first.answer, by: { id: first.who.id } });
        },
      ),
    );
  });

  it('with choices and no free text, an answer is accepted exactly when it is one of the choices', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.string({ minLength: 1, maxLength: 10 }).filter((s) => s.trim() !== ''),
          { minLength: 2, maxLength: 20 },
        ),
        fc.string({ minLength: 1, maxLength: 10 }),
        fc.boolean(),
        (cs, answer, free) => {
          const q = ask({ text: 'Pick one', choices: cs, allowFreeText: free });
          const valid = answer.trim() !== '' && (free || cs.includes(answer));
          if (valid) expect(q.answer(ann, 'api', answer, T0).kind).toBe('answered');
          else expect(faultPaths(() => q.answer(ann, 'api', answer, T0))).toEqual(['answer']);
        },
      ),
    );
  });

  it('a well-formed question is never refused, and a refused one names at least one field', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 50 }),
        fc.option(fc.array(fc.string({ maxLength: 5 }), { maxLength: 25 }), { nil: undefined }),
        fc.option(fc.integer({ min: -5, max: 90_000 }), { nil: undefined }),
        (text, cs, timeout) => {
          const input: QuestionInput = {
            text,
            ...(cs ? { choices: cs } : {}),
            ...(timeout !== undefined ? { timeoutSeconds: timeout } : {}),
          };
          const faults = questionFaults(input);
          if (faults.length === 0) expect(ask(input).status).toBe('pending');
          else expect(faultPaths(() => ask(input)).length).toBeGreaterThan(0);
        },
      ),
    );
  });
});
