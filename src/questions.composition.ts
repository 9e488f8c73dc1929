/** The pieces of "ask a human" (questions from agents to people), mounted by the composition root. */
import { QuestionsController } from './adapters/http/controllers/questions.controller';
import {
  AnswerQuestionHandler,
  AskQuestionHandler,
  CancelQuestionsHandler,
  ExpireQuestionsHandler,
} from './application/commands/questions/question.handlers';
import { QuestionEventsHandler } from './application/events/question-events.handler';
import { OPEN_QUESTION_LIMITS, QUESTION_RECHECK_MS, QUESTIONS } from './application/ports/question.port';
import { TOLLGATE_CONFIG, TollgateConfig } from './infrastructure/config/config';
import {
  GetQuestionHandler,
  ListQuestionsHandler,
  QuestionAccessHandler,
} from './application/queries/questions/question.handlers';
import { TypeOrmQuestionRepository } from './infrastructure/persistence/typeorm-question.repository';
import { QuestionExpirySweeper } from './infrastructure/scheduling/question-expiry-sweeper';

export const QUESTION_CONTROLLERS = [QuestionsController];

export const QUESTION_PROVIDERS = [
  { provide: QUESTIONS, useClass: TypeOrmQuestionRepository },
  { provide: QUESTION_RECHECK_MS, useFactory: (c: TollgateConfig) => c.longPollRecheckMs, inject: [TOLLGATE_CONFIG] },
  { provide: OPEN_QUESTION_LIMITS, useFactory: (c: TollgateConfig) => c.openQuestions, inject: [TOLLGATE_CONFIG] },
  QuestionExpirySweeper,
  QuestionEventsHandler,
  AskQuestionHandler,
  AnswerQuestionHandler,
  ExpireQuestionsHandler,
  CancelQuestionsHandler,
  GetQuestionHandler,
  ListQuestionsHandler,
  QuestionAccessHandler,
];
