/* One class per transition of a question; names are past tense. */
import { BaseEvent } from '../shared/event-base';
import type { QuestionAudience } from './question-status';

export class QuestionAsked extends BaseEvent<{
  questionId: string;
  text: string;
  choices?: string[];
  allowFreeText: boolean;
  askTo: QuestionAudience[];
  timeoutSeconds: number;
  expiresAt: string;
  externalId?: string;
}> {
  readonly type = 'QuestionAsked' as const;
}

export class QuestionAnswered extends BaseEvent<{
  questionId: string;
  by: string;
  via: string;
  answer: string;
  latencyMs: number;
}> {
  readonly type = 'QuestionAnswered' as const;
}

export class QuestionExpired extends BaseEvent<{ questionId: string; expiresAt: string }> {
  readonly type = 'QuestionExpired' as const;
}

export class QuestionCancelled extends BaseEvent<{ questionId: string; reason: string }> {
  readonly type = 'QuestionCancelled' as const;
}
