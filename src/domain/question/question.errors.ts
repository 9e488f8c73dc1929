import { DomainError } from '../shared/domain-error';
import type { QuestionStatus } from './question-status';

export class QuestionNotFoundError extends DomainError {
  constructor(id: string) {
    super('not_found', 'not_found', `Question ${id} not found`);
  }
}

/** A later answer than the first (or one after expiry or cancellation). */
export class AlreadyAnsweredError extends DomainError {
  constructor(id: string, status: QuestionStatus) {
    super(
      'already_answered',
      'conflict',
      status === 'answered'
        ? `Question ${id} was already answered`
        : `Question ${id} is ${status}: it can no longer be answered`,
      { questionStatus: status },
    );
  }
}
