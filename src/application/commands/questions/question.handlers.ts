import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { HaltedError, IdempotencyMismatchError } from '../../../domain/conversation/conversation.errors';
import { Question, questionFaults } from '../../../domain/question/question.aggregate';
import { QuestionNotFoundError } from '../../../domain/question/question.errors';
import { ValidationError } from '../../../domain/shared/domain-error';
import { SYSTEM_ACTOR } from '../../../domain/shared/actor';
import { mustBeOwningAgent, visibleConversation } from '../../access';
import {
  CLOCK,
  Clock,
  CONVERSATIONS,
  ConversationRepository,
  HALTS,
  HaltRepository,
  IDS,
  IdGenerator,
  PENDING,
  UNIT_OF_WORK,
  UnitOfWork,
} from '../../ports';
import { OPEN_QUESTION_LIMITS, QUESTIONS, QuestionRepository } from '../../ports/question.port';
import { checkOpenQuestionLimit, type OpenQuestionLimits } from '../../../domain/question/rules/open-question-limit';
import { QuestionView, questionView } from '../../views/question.view';
import {
  AnswerQuestionCommand,
  AskQuestionCommand,
  CancelQuestionsCommand,
  ExpireQuestionsCommand,
} from './question.commands';

const BATCH = 100;

@CommandHandler(AskQuestionCommand)
export class AskQuestionHandler implements ICommandHandler<
  AskQuestionCommand,
  { replay: boolean; question: QuestionView }
> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(CONVERSATIONS) private readonly conversations: ConversationRepository,
    @Inject(QUESTIONS) private readonly questions: QuestionRepository,
    @Inject(HALTS) private readonly halts: HaltRepository,
    @Inject(IDS) private readonly ids: IdGenerator,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(OPEN_QUESTION_LIMITS) private readonly limits: OpenQuestionLimits,
  ) {}

  async execute({ principal: p, conversationId, question, externalId }: AskQuestionCommand) {
    const result = await this.uow.run(async () => {
      const conv = visibleConversation(
        await this.conversations.findById(p.tenant, conversationId, { calls: { statuses: PENDING } }),
        p,
        conversationId,
      );
      mustBeOwningAgent(conv, p);
      const faults = questionFaults(question); // 400 after 404 and 403, before any idempotency check
      if (faults.length > 0) throw new ValidationError(faults);
      if (!conv.user && question.askTo?.every((a) => a === 'requester')) {
        throw new ValidationError([
          { path: 'askTo', message: 'names only the requester, but this conversation has no end user' },
        ]);
      }
      if (externalId !== undefined) {
        const earlier = await this.questions.findByExternalId(p.tenant, conversationId, externalId);
        if (earlier) {
          // The same id and content again answers the same question (an agent's retry), halted or not.
          if (!earlier.asksTheSame(question))
            throw new IdempotencyMismatchError(
              `Question id ${externalId} was already asked in this conversation with different content`,
            );
          return { replay: true, question: earlier, agentId: conv.agentId };
        }
      }
      const halt = await this.halts.covering(p.tenant, conv.agentId, conv.id);
      if (halt) throw new HaltedError(halt.scope, halt.reason);
      // The agent's asks are counted one at a time from here (countOpen queues them), across its conversations.
      const upTo = { conversation: this.limits.perConversation, agent: this.limits.perAgent };
      checkOpenQuestionLimit(
        await this.questions.countOpen(p.tenant, { conversationId: conv.id, agentId: conv.agentId }, upTo),
        this.limits,
      );
      const q = Question.ask({
        id: this.ids.next('q'),
        tenantId: p.tenant,
        conversationId: conv.id,
        agentId: conv.agentId,
        userId: conv.user?.id ?? null,
        ...(externalId !== undefined ? { externalId } : {}),
        question,
        by: { id: p.id, kind: 'agent', via: p.via ?? 'api', ...(p.name ? { name: p.name } : {}) },
        at: this.clock.now(),
      });
      await this.questions.save(q);
      return { replay: false, question: q, agentId: conv.agentId };
    });
    if (result.replay) return { replay: true, question: questionView(result.question) };
    // A halt that committed while this question was asked did not see it, nor did this ask see the halt:
    // look once more after commit, as the halt itself does for tool calls.
    const halt = await this.halts.covering(p.tenant, result.agentId, conversationId);
    if (halt) {
      const cancelled = await this.uow.run(async () => {
        const q = await this.questions.findById(p.tenant, result.question.id, { lock: true });
        if (q && q.cancel(halt.reason, SYSTEM_ACTOR, this.clock.now())) await this.questions.save(q);
        return q;
      });
      if (cancelled) return { replay: false, question: questionView(cancelled) };
    }
    return { replay: false, question: questionView(result.question) };
  }
}

@CommandHandler(AnswerQuestionCommand)
export class AnswerQuestionHandler implements ICommandHandler<AnswerQuestionCommand, QuestionView> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(QUESTIONS) private readonly questions: QuestionRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ principal: p, questionId, answer, via }: AnswerQuestionCommand): Promise<QuestionView> {
    const { view, error } = await this.uow.run(async () => {
      // Locked: concurrent answers queue here and the later one sees the first.
      const q = await this.questions.findById(p.tenant, questionId, { lock: true });
      if (!q || !q.isVisibleTo(p)) throw new QuestionNotFoundError(questionId);
      const r = q.answer(p, via, answer, this.clock.now());
      if (r.kind !== 'unchanged') await this.questions.save(q);
      return { view: questionView(q), error: r.kind === 'refused' ? r.error : undefined };
    });
    // An expiry found on the way is saved first, then the answer refused.
    if (error) throw error;
    return view;
  }
}

@CommandHandler(ExpireQuestionsCommand)
export class ExpireQuestionsHandler implements ICommandHandler<ExpireQuestionsCommand, number> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(QUESTIONS) private readonly questions: QuestionRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Answers how many expired. Safe on many instances: each question is expired under its row lock. A sweep also
   * cancels pending questions a halt covers, should the cancellation that follows the halt have been lost.
   */
  async execute({ target }: ExpireQuestionsCommand): Promise<number> {
    if (!target) await this.cancelHalted();
    const due = target
      ? [{ tenantId: target.tenantId, id: target.questionId }]
      : await this.questions.findDue(this.clock.now(), BATCH);
    let expired = 0;
    for (const { tenantId, id } of due) {
      expired += await this.uow.run(async () => {
        // Sweepers of other instances skip a question one of them holds rather than queue behind it.
        const q = await this.questions.findById(tenantId, id, { lock: target ? true : 'skip-locked' });
        if (!q || !q.expire(this.clock.now())) return 0;
        await this.questions.save(q);
        return 1;
      });
    }
    return expired;
  }

  private async cancelHalted(): Promise<void> {
    for (const { tenantId, id, reason } of await this.questions.findPendingUnderHalt(BATCH)) {
      await this.uow.run(async () => {
        const q = await this.questions.findById(tenantId, id, { lock: 'skip-locked' });
        if (q && q.cancel(reason, SYSTEM_ACTOR, this.clock.now())) await this.questions.save(q);
      });
    }
  }
}

@CommandHandler(CancelQuestionsCommand)
export class CancelQuestionsHandler implements ICommandHandler<CancelQuestionsCommand, string[]> {
  constructor(
    @Inject(UNIT_OF_WORK) private readonly uow: UnitOfWork,
    @Inject(QUESTIONS) private readonly questions: QuestionRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ tenantId, target, reason, by }: CancelQuestionsCommand): Promise<string[]> {
    const cancelled: string[] = [];
    for (const id of await this.questions.findPendingIn(tenantId, target)) {
      const done = await this.uow.run(async () => {
        const q = await this.questions.findById(tenantId, id, { lock: true });
        if (!q || !q.cancel(reason, by, this.clock.now())) return false;
        await this.questions.save(q);
        return true;
      });
      if (done) cancelled.push(id);
    }
    return cancelled;
  }
}
