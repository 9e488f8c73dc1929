import { Inject, Injectable } from '@nestjs/common';
import { QuestionListFilter, QuestionRepository } from '../../application/ports/question.port';
import type { HaltScope, HaltTarget } from '../../domain/halt/halt.aggregate';
import { haltThatApplies } from '../../domain/halt/rules/halt-that-applies';
import { Question, QuestionAudience, QuestionStatus } from '../../domain/question/question.aggregate';
import { isAgent, Principal } from '../../domain/shared/actor';
import { TOLLGATE_CONFIG, TollgateConfig } from '../config/config';
import { WAKE_CHANNEL, wakePayload } from '../waiting/pg-wake-listener';
import { QuestionRow } from './question.orm-entity';
import { decodeCursor, encodeCursor } from './keyset-cursor';
import { StaleAggregateError, TypeOrmUnitOfWork } from './unit-of-work';

/** A halt joined to a question: it may cover it (see `haltThatApplies`). */
type HaltCandidate = { scope: HaltScope; halt_id: string; reason: string };

export function questionFromRow(r: QuestionRow): Question {
  return Question.rehydrate(
    {
      id: r.id,
      tenantId: r.tenantId,
      conversationId: r.conversationId,
      agentId: r.agentId,
      userId: r.userId,
      ...(r.externalId !== null ? { externalId: r.externalId } : {}),
      text: r.text,
      ...(r.choices ? { choices: r.choices } : {}),
      allowFreeText: r.allowFreeText,
      askTo: r.askTo as QuestionAudience[],
      timeoutSeconds: r.timeoutSeconds,
      askedBy: r.askedBy,
      createdAt: r.createdAt,
      expiresAt: r.expiresAt,
      status: r.status as QuestionStatus,
      ...(r.answer !== null && r.answeredBy && r.answeredAt
        ? { answer: { text: r.answer, by: r.answeredBy, at: r.answeredAt } }
        : {}),
      ...(r.endedAt ? { endedAt: r.endedAt } : {}),
      ...(r.endReason !== null ? { endReason: r.endReason } : {}),
    },
    r.version,
  );
}

/** Keyset cursors on (created_at, id): stable under inserts. */
const cursorOf = (r: QuestionRow) => encodeCursor([r.createdAt.toISOString(), r.id]);

@Injectable()
export class TypeOrmQuestionRepository implements QuestionRepository {
  constructor(
    private readonly uow: TypeOrmUnitOfWork,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
  ) {}

  async findById(
    tenantId: string,
    id: string,
    opts: { lock?: boolean | 'skip-locked' } = {},
  ): Promise<Question | null> {
    const qb = this.uow
      .manager()
      .getRepository(QuestionRow)
      .createQueryBuilder('q')
      .where('q.tenant_id = :tenantId AND q.id = :id', { tenantId, id });
    // A lock means something inside a transaction only; plain reads take none.
    if (opts.lock && this.uow.inTransaction) {
      qb.setLock('pessimistic_write');
      if (opts.lock === 'skip-locked') qb.setOnLocked('skip_locked');
    }
    const row = await qb.getOne();
    return row && questionFromRow(row);
  }

  async countOpen(
    tenantId: string,
    scope: { conversationId: string; agentId: string },
    upTo: { conversation: number; agent: number },
  ): Promise<{ conversation: number; agent: number }> {
    // Asks of one agent queue here until their transactions end, so each counts the ones before it (an advisory
    // lock: there is no agent row to lock). Each count stops at its limit, reading the partial indexes of pending
    // questions only.
    await this.uow
      .manager()
      .query(`SELECT pg_advisory_xact_lock(hashtextextended('tollgate.questions:' || $1 || '/' || $2, 0))`, [
        tenantId,
        scope.agentId,
      ]);
    const [row] = await this.uow.manager().query(
      `SELECT (SELECT count(*) FROM (SELECT 1 FROM questions WHERE tenant_id = $1 AND conversation_id = $2 AND status = 'pending' LIMIT $4) c)::int AS conversation,
              (SELECT count(*) FROM (SELECT 1 FROM questions WHERE tenant_id = $1 AND agent_id = $3 AND status = 'pending' LIMIT $5) a)::int AS agent`,
      [tenantId, scope.conversationId, scope.agentId, upTo.conversation, upTo.agent],
    );
    return { conversation: row.conversation, agent: row.agent };
  }

  async findByExternalId(tenantId: string, conversationId: string, externalId: string): Promise<Question | null> {
    const row = await this.uow.manager().getRepository(QuestionRow).findOneBy({ tenantId, conversationId, externalId });
    return row && questionFromRow(row);
  }

  async save(question: Question): Promise<void> {
    const events = question.pullEvents();
    if (events.length === 0) return;
    const s = question.snapshot();
    const m = this.uow.manager();
    const changes = {
      status: s.status,
      answer: s.answer?.text ?? null,
      answeredBy: s.answer?.by ?? null,
      answeredAt: s.answer?.at ?? null,
      endedAt: s.endedAt ?? null,
      endReason: s.endReason ?? null,
    };
    if (events.some((e) => e.type === 'QuestionAsked')) {
      await m.getRepository(QuestionRow).insert({
        tenantId: s.tenantId,
        id: s.id,
        conversationId: s.conversationId,
        agentId: s.agentId,
        userId: s.userId,
        externalId: s.externalId ?? null,
        text: s.text,
        choices: s.choices ?? null,
        allowFreeText: s.allowFreeText,
        askTo: s.askTo,
        timeoutSeconds: s.timeoutSeconds,
        askedBy: s.askedBy,
        createdAt: s.createdAt,
        expiresAt: s.expiresAt,
        ...changes,
        version: 1,
      });
      question.version = 1;
    } else {
      // TypeORM's update does not check versions: the WHERE does, and 0 rows means another writer came first.
      const res = await m
        .getRepository(QuestionRow)
        .update(
          { tenantId: s.tenantId, id: s.id, version: question.version },
          { ...changes, version: question.version + 1 },
        );
      if (res.affected === 0) throw new StaleAggregateError(`question ${s.id} changed since it was loaded`);
      question.version += 1;
      // Long-polls on other instances wake on commit (the notification is sent only if this commits).
      if (this.config.databaseUrl)
        await m.query(`SELECT pg_notify('${WAKE_CHANNEL}', $1)`, [wakePayload(s.tenantId, s.id)]);
    }
    this.uow.collect(events);
  }

  async findDue(now: Date, limit: number): Promise<Array<{ tenantId: string; id: string }>> {
    const rows: Array<{ tenant_id: string; id: string }> = await this.uow
      .manager()
      .query(
        `SELECT tenant_id, id FROM questions WHERE status = 'pending' AND expires_at <= $1 ORDER BY expires_at LIMIT $2`,
        [now, limit],
      );
    return rows.map((r) => ({ tenantId: r.tenant_id, id: r.id }));
  }

  async findPendingUnderHalt(limit: number): Promise<Array<{ tenantId: string; id: string; reason: string }>> {
    // The SQL narrows to pending questions and the halts that may cover them; the domain picks the halt whose
    // reason a question is cancelled with (one question under several halts comes once).
    const rows: Array<{ tenant_id: string; id: string; agent_id: string; conversation_id: string } & HaltCandidate> =
      await this.uow.manager().query(
        `SELECT q.tenant_id, q.id, q.agent_id, q.conversation_id, h.scope, h.scope_id AS halt_id, h.reason FROM questions q
           JOIN halts h ON h.tenant_id = q.tenant_id
            AND ((h.scope = 'tenant' AND h.scope_id = '') OR (h.scope = 'agent' AND h.scope_id = q.agent_id) OR (h.scope = 'conversation' AND h.scope_id = q.conversation_id))
          WHERE q.status = 'pending' LIMIT $1`,
        [limit],
      );
    const byQuestion = new Map<string, typeof rows>();
    for (const r of rows) {
      const key = `${r.tenant_id}\u0000${r.id}`;
      byQuestion.set(key, [...(byQuestion.get(key) ?? []), r]);
    }
    return [...byQuestion.values()].map((candidates) => {
      const q = candidates[0];
      const halt = haltThatApplies(
        candidates.map((c) => ({ scope: c.scope, id: c.halt_id, reason: c.reason })),
        { agentId: q.agent_id, conversationId: q.conversation_id },
      );
      return { tenantId: q.tenant_id, id: q.id, reason: halt!.reason };
    });
  }

  async findPendingIn(tenantId: string, target: HaltTarget): Promise<string[]> {
    const scope =
      target.scope === 'tenant' ? '' : target.scope === 'agent' ? 'AND agent_id = $2' : 'AND conversation_id = $2';
    const rows: Array<{ id: string }> = await this.uow
      .manager()
      .query(
        `SELECT id FROM questions WHERE tenant_id = $1 AND status = 'pending' ${scope}`,
        target.scope === 'tenant' ? [tenantId] : [tenantId, target.id],
      );
    return rows.map((r) => r.id);
  }

  async listAnswerable(
    p: Principal,
    f: QuestionListFilter,
  ): Promise<{ questions: Question[]; nextCursor: string | null }> {
    if (isAgent(p)) return { questions: [], nextCursor: null };
    // `requester` names the conversation's user, never a role a token could claim.
    const roles = p.roles.filter((r) => r === 'approver' || r === 'admin');
    const qb = this.uow
      .manager()
      .getRepository(QuestionRow)
      .createQueryBuilder('q')
      .where('q.tenant_id = :tenantId AND q.status = :status', { tenantId: p.tenant, status: f.status })
      .andWhere(`(('requester' = ANY(q.ask_to) AND q.user_id = :me) OR q.ask_to && :roles::text[])`, {
        me: p.id,
        roles,
      });
    if (f.status === 'pending') qb.andWhere('q.expires_at > :now', { now: f.now });
    const after = decodeCursor(f.cursor, { dated: true });
    if (after)
      qb.andWhere('(q.created_at, q.id) < (:afterAt::timestamptz, :afterId)', { afterAt: after[0], afterId: after[1] });
    const rows = await qb
      .orderBy('q.created_at', 'DESC')
      .addOrderBy('q.id', 'DESC')
      .limit(f.limit + 1)
      .getMany();
    const more = rows.length > f.limit;
    const items = rows.slice(0, f.limit);
    return { questions: items.map(questionFromRow), nextCursor: more ? cursorOf(items[items.length - 1]) : null };
  }
}
