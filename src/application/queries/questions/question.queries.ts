import { Query } from '@nestjs/cqrs';
import type { QuestionView } from '../../views/question.view';
import type { Page } from '../../views/views';
import type { QuestionStatus } from '../../../domain/question/question.aggregate';
import type { Principal } from '../../../domain/shared/actor';

/** A question, or a wait of up to `waitSeconds` for its answer. `signal` ends the wait when the client has gone. */
export class GetQuestionQuery extends Query<QuestionView> {
  constructor(
    readonly principal: Principal,
    readonly questionId: string,
    readonly waitSeconds = 0,
    readonly signal?: AbortSignal,
  ) {
    super();
  }
}

/** The questions the caller may answer, newest first. */
export class ListQuestionsQuery extends Query<Page<QuestionView>> {
  constructor(
    readonly principal: Principal,
    readonly filter: { status: QuestionStatus; cursor?: string; limit: number },
  ) {
    super();
  }
}

/** Whether the caller may answer a question (404 when they may not even see it). */
export class QuestionAccessQuery extends Query<{ isAgent: boolean; mayAnswer: boolean }> {
  constructor(
    readonly principal: Principal,
    readonly questionId: string,
  ) {
    super();
  }
}
