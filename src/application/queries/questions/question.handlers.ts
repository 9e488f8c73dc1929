import { Inject, Optional } from '@nestjs/common';
import { CommandBus, IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { Question } from '../../../domain/question/question.aggregate';
import { QuestionNotFoundError } from '../../../domain/question/question.errors';
import { isAgent, Principal } from '../../../domain/shared/actor';
import { ExpireQuestionsCommand } from '../../commands/questions/question.commands';
import { CLOCK, Clock, WAITERS, ToolCallWaiters } from '../../ports';
import { QUESTION_RECHECK_MS, QUESTIONS, QuestionRepository } from '../../ports/question.port';
import { QuestionView, questionView } from '../../views/question.view';
import type { Page } from '../../views/views';
import { GetQuestionQuery, ListQuestionsQuery, QuestionAccessQuery } from './question.queries';

/**
 * How often a long-poll re-reads its question when nothing woke it, by default: a missed wake-up (a lost
 * notification from another instance) costs at most this much latency. Questions are few: one read per waiter.
 */
const DEFAULT_RECHECK_MS = 5_000;

async function visibleQuestion(questions: QuestionRepository, p: Principal, id: string): Promise<Question> {
  const q = await questions.findById(p.tenant, id);
  if (!q || !q.isVisibleTo(p)) throw new QuestionNotFoundError(id);
  return q;
}

@QueryHandler(GetQuestionQuery)
export class GetQuestionHandler implements IQueryHandler<GetQuestionQuery, QuestionView> {
  constructor(
    @Inject(QUESTIONS) private readonly questions: QuestionRepository,
    @Inject(WAITERS) private readonly waiters: ToolCallWaiters,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly commands: CommandBus,
    @Optional() @Inject(QUESTION_RECHECK_MS) private readonly recheckMs: number = DEFAULT_RECHECK_MS,
  ) {}

  async execute({ principal: p, questionId, waitSeconds, signal }: GetQuestionQuery): Promise<QuestionView> {
    const deadline = this.clock.now().getTime() + waitSeconds * 1000;
    // Opened before the first read, so an answer committed between the read and the wait is not missed.
    const watch = this.waiters.watch(p.tenant, questionId);
    try {
      for (;;) {
        const q = await this.read(p, questionId);
        const now = this.clock.now().getTime();
        const left = deadline - now;
        if (q.status !== 'pending' || left <= 0 || this.waiters.closing || signal?.aborted) return questionView(q);
        const untilExpiry = q.snapshot().expiresAt.getTime() - now + 1;
        await watch.next(Math.max(1, Math.min(left, untilExpiry, this.recheckMs)), signal);
      }
    } finally {
      watch.close();
    }
  }

  private async read(p: Principal, id: string): Promise<Question> {
    const q = await visibleQuestion(this.questions, p, id);
    if (!q.isDueAt(this.clock.now())) return q;
    // Shown expired even before the sweeper passes.
    await this.commands.execute(new ExpireQuestionsCommand({ tenantId: p.tenant, questionId: id }));
    return visibleQuestion(this.questions, p, id);
  }
}

@QueryHandler(ListQuestionsQuery)
export class ListQuestionsHandler implements IQueryHandler<ListQuestionsQuery, Page<QuestionView>> {
  constructor(
    @Inject(QUESTIONS) private readonly questions: QuestionRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ principal: p, filter }: ListQuestionsQuery): Promise<Page<QuestionView>> {
    const { questions, nextCursor } = await this.questions.listAnswerable(p, { ...filter, now: this.clock.now() });
    return { items: questions.map(questionView), nextCursor };
  }
}

@QueryHandler(QuestionAccessQuery)
export class QuestionAccessHandler implements IQueryHandler<
  QuestionAccessQuery,
  { isAgent: boolean; mayAnswer: boolean }
> {
  constructor(@Inject(QUESTIONS) private readonly questions: QuestionRepository) {}

  async execute({ principal: p, questionId }: QuestionAccessQuery) {
    const q = await visibleQuestion(this.questions, p, questionId);
    return { isAgent: isAgent(p), mayAnswer: q.mayAnswer(p) };
  }
}
