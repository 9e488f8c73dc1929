import { DomainError } from '../../shared/domain-error';

/**
 * How many questions an agent may keep open (pending) at once: each one sits in people's inboxes, in Slack and in
 * the web until it is answered or expires, so an agent that asks without waiting would fill them (and the table).
 */
export interface OpenQuestionLimits {
  perConversation: number;
  perAgent: number;
}

export const DEFAULT_OPEN_QUESTION_LIMITS: OpenQuestionLimits = Object.freeze({ perConversation: 20, perAgent: 1000 });

export class TooManyOpenQuestionsError extends DomainError {
  constructor(scope: 'conversation' | 'agent', limit: number) {
    const where = scope === 'conversation' ? 'in this conversation' : 'across its conversations';
    super(
      'too_many_open_questions',
      'conflict',
      `The agent already has ${limit} open questions ${where}: wait for an answer (or their expiry) before asking more`,
      { limit, scope },
    );
  }
}

/** Refuses one more question when the agent's open ones (counted before it) are at a limit. */
export function checkOpenQuestionLimit(
  open: { conversation: number; agent: number },
  limits: OpenQuestionLimits,
): void {
  if (open.conversation >= limits.perConversation)
    throw new TooManyOpenQuestionsError('conversation', limits.perConversation);
  if (open.agent >= limits.perAgent) throw new TooManyOpenQuestionsError('agent', limits.perAgent);
}
