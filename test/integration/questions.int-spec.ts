/**
 * The question repository against a real database with the migrations applied: mapper round trip, the
 * version check, state and events written together or not at all, the inbox's filter and paging, and expiry
 * that several sweepers run at once without expiring a question twice or waiting on each other.
 */
import { CommandBus } from '@nestjs/cqrs';
import { CONVERSATIONS, ConversationRepository, UNIT_OF_WORK, UnitOfWork } from '../../src/application/ports';
import { QUESTIONS, QuestionRepository } from '../../src/application/ports/question.port';
import { ExpireQuestionsCommand } from '../../src/application/commands/questions/question.commands';
import { Conversation } from '../../src/domain/conversation/conversation.aggregate';
import { Question, QuestionInput } from '../../src/domain/question/question.aggregate';
import type { Actor, Principal } from '../../src/domain/shared/actor';
import { StaleAggregateError } from '../../src/infrastructure/persistence/unit-of-work';
import { eventsOf as eventsOfTenant, expectIntactChain } from '../support/audit';
import { startTestServer, TestServer } from '../support/server';

const AGENT: Actor = { id: 'bot', kind: 'agent', via: 'api', name: 'Bot' };
const T0 = () => new Date(Math.floor(Date.now() / 1000) * 1000);

let server: TestServer;
let uow: UnitOfWork;
let repo: QuestionRepository;
let conversations: ConversationRepository;
let n = 0;

beforeAll(async () => {
  // No sweeper of the server's own: the tests below run the sweeps.
  server = await startTestServer({ sweepIntervalMs: 0 });
  uow = server.app.get(UNIT_OF_WORK);
  repo = server.app.get(QUESTIONS);
  conversations = server.app.get(CONVERSATIONS);
});

afterAll(async () => {
  await server?.stop();
});

const eventsOf = (tenant: string) => eventsOfTenant(server.dataSource, tenant);

async function conversation(tenant: string, id: string) {
  await uow.run(async () =>
    conversations.save(
      Conversation.start({ id, tenantId: tenant, agentId: 'bot', user: { id: 'ann', roles: [] }, at: T0() }),
    ),
  );
}

async function asked(
  tenant: string,
  conversationId: string,
  question: QuestionInput,
  at = T0(),
  externalId?: string,
): Promise<Question> {
  const id = `q_${++n}`;
  // Made inside the unit: a retried unit (a lost race) starts again from nothing, as the handlers do.
  return uow.run(async () => {
    const q = Question.ask({
      id,
      tenantId: tenant,
      conversationId,
      agentId: 'bot',
      userId: 'ann',
      question,
      by: AGENT,
      at,
      ...(externalId ? { externalId } : {}),
    });
    await repo.save(q);
    return q;
  });
}

async function load(tenant: string, id: string): Promise<Question> {
  const q = await repo.findById(tenant, id);
  if (!q) throw new Error(`question ${id} was not stored`);
  return q;
}

const person = (tenant: string, id: string, roles: string[]): Principal => ({ id, tenant, roles });

describe('a question saved and loaded back', () => {
  const T = 't-q-roundtrip';
  beforeAll(() => conversation(T, 'c1'));

  it('keeps every field, pending and answered', async () => {
    const q = await asked(
      T,
      'c1',
      {
        text: 'EU or US? ✓ "quoted"',
        choices: ['EU', 'US'],
        allowFreeText: true,
        timeoutSeconds: 600,
        askTo: ['requester', 'admin'],
      },
      T0(),
      'ask_1',
    );
    const loaded = await load(T, q.id);
    expect(loaded.snapshot()).toEqual(q.snapshot());
    expect(loaded.version).toBe(1);
    expect((await repo.findByExternalId(T, 'c1', 'ask_1'))?.id).toBe(q.id);

    await uow.run(async () => {
      const locked = (await repo.findById(T, q.id, { lock: true }))!;
      expect(
        locked.answer({ ...person(T, 'ann', []), name: 'Ann' }, 'web', 'APAC', new Date(T0().getTime() + 10)).kind,
      ).toBe('answered');
      await repo.save(locked);
    });
    const answered = await load(T, q.id);
    expect(answered.snapshot()).toMatchObject({
      status: 'answered',
      answer: { text: 'APAC', by: { id: 'ann', name: 'Ann', via: 'web' } },
    });
    expect(answered.version).toBe(2);
  });

  it('refuses a second question under the same agent id in the conversation', async () => {
    await asked(T, 'c1', { text: 'once' }, T0(), 'ask_dup');
    await expect(asked(T, 'c1', { text: 'twice' }, T0(), 'ask_dup')).rejects.toThrow();
  });

  it('refuses a question in a conversation that does not exist', async () => {
    await expect(asked(T, 'no-such-conversation', { text: 'hello?' })).rejects.toThrow();
  });
});

describe('writes', () => {
  const T = 't-q-writes';
  beforeAll(() => conversation(T, 'c1'));

  it('a save from a stale load is refused and writes nothing', async () => {
    const q = await asked(T, 'c1', { text: 'Go?', choices: ['yes', 'no'] });
    const first = await load(T, q.id);
    const second = await load(T, q.id);
    await uow.run(async () => {
      first.answer(person(T, 'bob', ['approver']), 'api', 'yes', T0());
      await repo.save(first);
    });
    // Caught inside the unit, before its retry would start again from a fresh read.
    let refused: unknown;
    await uow.run(async () => {
      expect(second.answer(person(T, 'root', ['admin']), 'api', 'no', T0()).kind).toBe('answered');
      await repo.save(second).catch((e) => (refused = e));
    });
    expect(refused).toBeInstanceOf(StaleAggregateError);
    expect((await load(T, q.id)).snapshot().answer?.text).toBe('yes');
    const answered = (await eventsOf(T)).filter((e) => e.type === 'QuestionAnswered' && e.data.questionId === q.id);
    expect(answered.map((e) => e.data.answer)).toEqual(['yes']);
  });

  it('state and events commit together or not at all', async () => {
    const before = (await eventsOf(T)).length;
    const q = Question.ask({
      id: 'q_rolled_back',
      tenantId: T,
      conversationId: 'c1',
      agentId: 'bot',
      userId: 'ann',
      question: { text: 'never' },
      by: AGENT,
      at: T0(),
    });
    await expect(
      uow.run(async () => {
        await repo.save(q);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await repo.findById(T, 'q_rolled_back')).toBeNull();
    expect((await eventsOf(T)).length).toBe(before);
    expectIntactChain(await eventsOf(T));
  });
});

describe('the inbox', () => {
  const T = 't-q-inbox';
  beforeAll(() => conversation(T, 'c1'));

  it('lists what each person may answer, newest first, page by page', async () => {
    const base = T0().getTime() - 60_000;
    const toUser = await asked(T, 'c1', { text: 'user only', askTo: ['requester'] }, new Date(base + 1000));
    const toApprovers = await asked(T, 'c1', { text: 'approvers', askTo: ['approver'] }, new Date(base + 2000));
    const toAll = await asked(T, 'c1', { text: 'everyone' }, new Date(base + 3000));
    const list = async (p: Principal, limit = 10, cursor?: string) =>
      repo.listAnswerable(p, { status: 'pending', limit, cursor, now: T0() });
    expect((await list(person(T, 'ann', []))).questions.map((q) => q.id)).toEqual([toAll.id, toUser.id]);
    expect((await list(person(T, 'bob', ['approver']))).questions.map((q) => q.id)).toEqual([toAll.id, toApprovers.id]);
    expect((await list(person(T, 'root', ['admin']))).questions.map((q) => q.id)).toEqual([toAll.id]);
    // A token claiming a role named `requester` is not the conversation's user.
    expect((await list(person(T, 'mallory', ['requester', 'auditor']))).questions).toEqual([]);
    expect((await list({ id: 'bot', tenant: T, roles: ['agent', 'admin'] })).questions).toEqual([]);
    const page1 = await list(person(T, 'ann', []), 1);
    expect(page1.questions.map((q) => q.id)).toEqual([toAll.id]);
    const page2 = await list(person(T, 'ann', []), 1, page1.nextCursor!);
    expect(page2.questions.map((q) => q.id)).toEqual([toUser.id]);
    expect(page2.nextCursor).toBeNull();
  });
});

describe('expiry', () => {
  const T = 't-q-expiry';
  beforeAll(() => conversation(T, 'c1'));

  it('several sweeps at once expire each due question exactly once', async () => {
    const past = new Date(T0().getTime() - 10_000);
    const due = await Promise.all(
      Array.from({ length: 8 }, () => asked(T, 'c1', { text: 'late?', timeoutSeconds: 1 }, past)),
    );
    const notDue = await asked(T, 'c1', { text: 'later', timeoutSeconds: 3600 });
    const bus = server.app.get(CommandBus);
    const counts: number[] = await Promise.all([1, 2, 3].map(() => bus.execute(new ExpireQuestionsCommand())));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(due.length);
    for (const q of due) expect((await load(T, q.id)).status).toBe('expired');
    expect((await load(T, notDue.id)).status).toBe('pending');
    const expired = (await eventsOf(T)).filter((e) => e.type === 'QuestionExpired').map((e) => e.data.questionId);
    expect(expired.sort()).toEqual(due.map((q) => q.id).sort());
    expectIntactChain(await eventsOf(T));
  });

  // Two sessions at once: the embedded database serves one (pool size 1), so holding a lock there blocks the sweep's own connection.
  (process.env.DATABASE_URL ? it : it.skip)(
    'a sweep skips a question another transaction holds, instead of waiting for it',
    async () => {
      const q = await asked(T, 'c1', { text: 'held?', timeoutSeconds: 1 }, new Date(T0().getTime() - 10_000));
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      const holder = server.dataSource.transaction(async (m) => {
        await m.query(`SELECT id FROM questions WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, [T, q.id]);
        locked();
        await held;
      });
      await isLocked;
      const bus = server.app.get(CommandBus);
      expect(await bus.execute(new ExpireQuestionsCommand())).toBe(0);
      release();
      await holder;
      expect(await bus.execute(new ExpireQuestionsCommand())).toBe(1);
      expect((await load(T, q.id)).status).toBe('expired');
    },
  );

  it('a sweep cancels a pending question a halt covers, should the cancellation after the halt have been lost', async () => {
    await conversation(T, 'c-halted');
    const q = await asked(T, 'c-halted', { text: 'under a halt?' });
    // The halt's row alone, as if the process stopped before its after-commit cancellation ran.
    await server.dataSource.query(
      `INSERT INTO halts (tenant_id, scope, scope_id, reason, created_by, created_at) VALUES ($1, 'conversation', 'c-halted', 'drill', '{"id":"root","via":"api"}', now())`,
      [T],
    );
    await server.app.get(CommandBus).execute(new ExpireQuestionsCommand());
    expect((await load(T, q.id)).snapshot()).toMatchObject({ status: 'cancelled', endReason: 'drill' });
    const cancelled = (await eventsOf(T)).filter((e) => e.type === 'QuestionCancelled');
    expect(cancelled.map((e) => e.data)).toEqual([{ questionId: q.id, reason: 'drill' }]);
  });
});
