/**
 * The question handlers with in-memory fakes of the ports: the order of checks (404 → 403 → 400 → 409/503),
 * idempotent asks, first answer wins under concurrency, expiry on the way, and halts.
 */
import { DomainError } from '../../../domain/shared/domain-error';
import { Conversation } from '../../../domain/conversation/conversation.aggregate';
import { Halt } from '../../../domain/halt/halt.aggregate';
import type { HaltTarget } from '../../../domain/halt/halt.aggregate';
import { Question, QuestionState } from '../../../domain/question/question.aggregate';
import type { Actor, Principal } from '../../../domain/shared/actor';
import {
  DuplicateKeyError,
  inMemoryPorts,
  InMemoryPorts,
  InMemoryUnitOfWork,
  NotInUnitOfWorkError,
  StaleAggregateError,
} from '../../../../test/support/in-memory-ports';
import type { QuestionListFilter, QuestionRepository } from '../../ports/question.port';
import {
  AnswerQuestionCommand,
  AskQuestionCommand,
  CancelQuestionsCommand,
  ExpireQuestionsCommand,
} from './question.commands';
import {
  AnswerQuestionHandler,
  AskQuestionHandler,
  CancelQuestionsHandler,
  ExpireQuestionsHandler,
} from './question.handlers';

/** As TypeOrmQuestionRepository: snapshots, version-checked updates, a unique agent id per conversation, events to the unit of work. */
class InMemoryQuestionRepository implements QuestionRepository {
  private rows = new Map<string, { s: QuestionState; version: number }>();

  constructor(private readonly uow: InMemoryUnitOfWork) {
    uow.enlist({ snapshot: () => structuredClone(this.rows), restore: (s) => (this.rows = s as typeof this.rows) });
  }

  private load(r: { s: QuestionState; version: number } | undefined): Question | null {
    return r ? Question.rehydrate(structuredClone(r.s), r.version) : null;
  }

  async findById(tenantId: string, id: string) {
    return this.load(this.rows.get(`${tenantId} ${id}`));
  }

  async findByExternalId(tenantId: string, conversationId: string, externalId: string) {
    return this.load(
      [...this.rows.values()].find(
        (r) => r.s.tenantId === tenantId && r.s.conversationId === conversationId && r.s.externalId === externalId,
      ),
    );
  }

  async save(q: Question): Promise<void> {
    if (!this.uow.inTransaction) throw new NotInUnitOfWorkError('outside a unit of work');
    const events = q.pullEvents();
    if (events.length === 0) return;
    const s = q.snapshot();
    const k = `${s.tenantId} ${s.id}`;
    if (events.some((e) => e.type === 'QuestionAsked')) {
      if (
        this.rows.has(k) ||
        (s.externalId !== undefined && (await this.findByExternalId(s.tenantId, s.conversationId, s.externalId)))
      )
        throw new DuplicateKeyError(k);
      q.version = 1;
    } else {
      if (this.rows.get(k)?.version !== q.version) throw new StaleAggregateError(k);
      q.version += 1;
    }
    this.rows.set(k, { s: structuredClone({ ...s }), version: q.version });
    this.uow.collect(events);
  }

  async countOpen(
    tenantId: string,
    scope: { conversationId: string; agentId: string },
    upTo: { conversation: number; agent: number },
  ) {
    const pending = [...this.rows.values()].filter((r) => r.s.tenantId === tenantId && r.s.status === 'pending');
    return {
      conversation: Math.min(
        upTo.conversation,
        pending.filter((r) => r.s.conversationId === scope.conversationId).length,
      ),
      agent: Math.min(upTo.agent, pending.filter((r) => r.s.agentId === scope.agentId).length),
    };
  }

  async findDue(now: Date, limit: number) {
    return [...this.rows.values()]
      .filter((r) => r.s.status === 'pending' && r.s.expiresAt <= now)
      .slice(0, limit)
      .map((r) => ({ tenantId: r.s.tenantId, id: r.s.id }));
  }

  async findPendingUnderHalt() {
    return [];
  }

  async findPendingIn(tenantId: string, t: HaltTarget) {
    return [...this.rows.values()]
      .filter(
        (r) =>
          r.s.tenantId === tenantId &&
          r.s.status === 'pending' &&
          (t.scope === 'tenant' || (t.scope === 'agent' ? r.s.agentId : r.s.conversationId) === t.id),
      )
      .map((r) => r.s.id);
  }

  async listAnswerable(_p: Principal, _f: QuestionListFilter) {
    return { questions: [], nextCursor: null };
  }

  status(tenantId: string, id: string) {
    return this.rows.get(`${tenantId} ${id}`)?.s.status;
  }
}

const T = 't1';
const bot: Principal = { id: 'bot', tenant: T, roles: ['agent'] };
const otherBot: Principal = { id: 'other-bot', tenant: T, roles: ['agent'] };
const ann: Principal = { id: 'ann', tenant: T, roles: [], name: 'Ann' };
const bob: Principal = { id: 'bob', tenant: T, roles: ['approver'] };
const root: Principal = { id: 'root', tenant: T, roles: ['admin'] };
const rootActor: Actor = { id: 'root', kind: 'person', via: 'api' };

let ports: InMemoryPorts;
let questions: InMemoryQuestionRepository;
let ask: AskQuestionHandler;
let answer: AnswerQuestionHandler;
let expire: ExpireQuestionsHandler;
let cancel: CancelQuestionsHandler;

beforeEach(async () => {
  ports = inMemoryPorts();
  questions = new InMemoryQuestionRepository(ports.uow);
  ask = new AskQuestionHandler(ports.uow, ports.conversations, questions, ports.halts, ports.ids, ports.clock, {
    perConversation: 3,
    perAgent: 4,
  });
  answer = new AnswerQuestionHandler(ports.uow, questions, ports.clock);
  expire = new ExpireQuestionsHandler(ports.uow, questions, ports.clock);
  cancel = new CancelQuestionsHandler(ports.uow, questions, ports.clock);
  await ports.uow.run(() =>
    ports.conversations.save(
      Conversation.start({
        id: 'c1',
        tenantId: T,
        agentId: 'bot',
        user: { id: 'ann', roles: [] },
        at: ports.clock.now(),
      }),
    ),
  );
});

async function code(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (e) {
    return (e as DomainError).code;
  }
  return undefined;
}

describe('AskQuestionHandler', () => {
  it('asks once per agent id: the same content again is a replay, other content an idempotency_mismatch', async () => {
    const first = await ask.execute(
      new AskQuestionCommand(bot, 'c1', { text: 'EU or US?', choices: ['EU', 'US'] }, 'ask_1'),
    );
    expect(first).toMatchObject({ replay: false, question: { id: 'q_1', status: 'pending', externalId: 'ask_1' } });
    expect(
      await ask.execute(new AskQuestionCommand(bot, 'c1', { text: 'EU or US?', choices: ['EU', 'US'] }, 'ask_1')),
    ).toMatchObject({ replay: true, question: { id: 'q_1' } });
    expect(
      await code(
        ask.execute(new AskQuestionCommand(bot, 'c1', { text: 'EU or APAC?', choices: ['EU', 'APAC'] }, 'ask_1')),
      ),
    ).toBe('idempotency_mismatch');
    expect(ports.uow.types()).toEqual(['ConversationStarted', 'QuestionAsked']);
  });

  it('refuses a question past the open limits (409 too_many_open_questions), counting only pending ones, and still answers a replay', async () => {
    for (let i = 0; i < 3; i++)
      await ask.execute(new AskQuestionCommand(bot, 'c1', { text: `question ${i}?` }, `ask_${i}`));
    expect(await code(ask.execute(new AskQuestionCommand(bot, 'c1', { text: 'one more?' })))).toBe(
      'too_many_open_questions',
    );
    expect(await ask.execute(new AskQuestionCommand(bot, 'c1', { text: 'question 0?' }, 'ask_0'))).toMatchObject({
      replay: true,
    });
    await answer.execute(new AnswerQuestionCommand(ann, 'q_1', 'yes'));
    expect(await ask.execute(new AskQuestionCommand(bot, 'c1', { text: 'one more?' }))).toMatchObject({
      replay: false,
      question: { status: 'pending' },
    });
    // The agent's fourth open question anywhere is its last: a new conversation does not reset the count.
    await ports.uow.run(() =>
      ports.conversations.save(
        Conversation.start({
          id: 'c2',
          tenantId: T,
          agentId: 'bot',
          user: { id: 'ann', roles: [] },
          at: ports.clock.now(),
        }),
      ),
    );
    expect(await ask.execute(new AskQuestionCommand(bot, 'c2', { text: 'elsewhere?' }))).toMatchObject({
      replay: false,
    });
    expect(await code(ask.execute(new AskQuestionCommand(bot, 'c2', { text: 'and again?' })))).toBe(
      'too_many_open_questions',
    );
  });

  it('checks in order: another agent 404, a person 403, a bad question 400, a halt 503', async () => {
    expect(await code(ask.execute(new AskQuestionCommand(otherBot, 'c1', { text: '' })))).toBe('not_found');
    expect(await code(ask.execute(new AskQuestionCommand(bob, 'c1', { text: '' })))).toBe('forbidden');
    expect(await code(ask.execute(new AskQuestionCommand(bot, 'c1', { text: '' })))).toBe('validation_failed');
    await ports.uow.run(() =>
      ports.halts.save(
        Halt.pull({
          tenantId: T,
          target: { scope: 'agent', id: 'bot' },
          reason: 'drill',
          by: rootActor,
          at: ports.clock.now(),
        }),
      ),
    );
    expect(await code(ask.execute(new AskQuestionCommand(bot, 'c1', { text: 'hello?' })))).toBe('halted');
  });
});

describe('AnswerQuestionHandler', () => {
  it('lets the first of concurrent answers win; the others are refused with already_answered', async () => {
    const { question } = await ask.execute(new AskQuestionCommand(bot, 'c1', { text: 'Go?', choices: ['yes', 'no'] }));
    const results = await Promise.allSettled([
      answer.execute(new AnswerQuestionCommand(ann, question.id, 'yes', 'web')),
      answer.execute(new AnswerQuestionCommand(bob, question.id, 'no')),
      answer.execute(new AnswerQuestionCommand(root, question.id, 'no')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect(results.slice(1).map((r) => ((r as PromiseRejectedResult).reason as DomainError).code)).toEqual([
      'already_answered',
      'already_answered',
    ]);
    expect(ports.uow.types().filter((t) => t === 'QuestionAnswered')).toHaveLength(1);
  });

  it('hides a question from people who may not read its conversation, and refuses agents', async () => {
    const { question } = await ask.execute(new AskQuestionCommand(bot, 'c1', { text: 'Who?' }));
    expect(
      await code(answer.execute(new AnswerQuestionCommand({ id: 'carl', tenant: T, roles: [] }, question.id, 'me'))),
    ).toBe('not_found');
    expect(await code(answer.execute(new AnswerQuestionCommand({ ...root, tenant: 'other' }, question.id, 'me')))).toBe(
      'not_found',
    );
    expect(await code(answer.execute(new AnswerQuestionCommand(bot, question.id, 'me')))).toBe('forbidden');
  });

  it('expires a question past its time on the way, commits that, then refuses the answer', async () => {
    const { question } = await ask.execute(new AskQuestionCommand(bot, 'c1', { text: 'Quick?', timeoutSeconds: 1 }));
    ports.clock.advance(1000);
    expect(await code(answer.execute(new AnswerQuestionCommand(ann, question.id, 'yes')))).toBe('already_answered');
    expect(questions.status(T, question.id)).toBe('expired');
    expect(ports.uow.types().slice(-1)).toEqual(['QuestionExpired']);
  });
});

describe('ExpireQuestionsHandler and CancelQuestionsHandler', () => {
  it('expire only due questions, and cancel only pending ones in the halt scope', async () => {
    await ports.uow.run(() =>
      ports.conversations.save(Conversation.start({ id: 'c2', tenantId: T, agentId: 'bot', at: ports.clock.now() })),
    );
    const short = (await ask.execute(new AskQuestionCommand(bot, 'c1', { text: 'a', timeoutSeconds: 1 }))).question;
    const long = (await ask.execute(new AskQuestionCommand(bot, 'c1', { text: 'b', timeoutSeconds: 600 }))).question;
    const elsewhere = (await ask.execute(new AskQuestionCommand(bot, 'c2', { text: 'c', timeoutSeconds: 600 })))
      .question;
    ports.clock.advance(1000);
    expect(await expire.execute(new ExpireQuestionsCommand())).toBe(1);
    expect(
      await cancel.execute(new CancelQuestionsCommand(T, { scope: 'conversation', id: 'c1' }, 'drill', rootActor)),
    ).toEqual([long.id]);
    expect([short, long, elsewhere].map((q) => questions.status(T, q.id))).toEqual(['expired', 'cancelled', 'pending']);
  });
});
