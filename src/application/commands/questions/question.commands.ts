import type { HaltTarget } from '../../../domain/halt/halt.aggregate';
import type { QuestionInput } from '../../../domain/question/question.aggregate';
import type { Actor, Channel, Principal } from '../../../domain/shared/actor';
import { Command } from '@nestjs/cqrs';
import type { QuestionView } from '../../views/question.view';

/** The conversation's agent asks a person a question. `externalId`: the agent's idempotency key. */
export class AskQuestionCommand extends Command<{ replay: boolean; question: QuestionView }> {
  constructor(
    readonly principal: Principal,
    readonly conversationId: string,
    readonly question: QuestionInput,
    readonly externalId?: string,
  ) {
    super();
  }
}

/** A person answers; `via` is the channel they answered from. */
export class AnswerQuestionCommand extends Command<QuestionView> {
  constructor(
    readonly principal: Principal,
    readonly questionId: string,
    readonly answer: string,
    readonly via: Channel = 'api',
  ) {
    super();
  }
}

/** Expires pending questions past their `expiresAt`: from the sweeper for all tenants, or one question on read. */
export class ExpireQuestionsCommand extends Command<number> {
  constructor(readonly target?: { tenantId: string; questionId: string }) {
    super();
  }
}

/** A halt cancels the pending questions in its scope, as it cancels pending tool calls. */
export class CancelQuestionsCommand extends Command<string[]> {
  constructor(
    readonly tenantId: string,
    readonly target: HaltTarget,
    readonly reason: string,
    readonly by: Actor,
  ) {
    super();
  }
}
