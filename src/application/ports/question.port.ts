/** The Question aggregate's repository and the reads of the questions inbox. */
import type { HaltTarget } from '../../domain/halt/halt.aggregate';
import type { Question, QuestionStatus } from '../../domain/question/question.aggregate';
import type { Principal } from '../../domain/shared/actor';
import type { ListFilter } from './index';

export const QUESTIONS = Symbol('QuestionRepository');
/** Milliseconds a question's long-poll waits before it re-reads when nothing woke it (TOLLGATE_LONGPOLL_RECHECK_MS). */
export const QUESTION_RECHECK_MS = Symbol('QuestionRecheckMs');
/** OpenQuestionLimits (TOLLGATE_MAX_OPEN_QUESTIONS_PER_CONVERSATION, …_PER_AGENT). */
export const OPEN_QUESTION_LIMITS = Symbol('OpenQuestionLimits');

export interface QuestionListFilter extends ListFilter {
  status: QuestionStatus;
  /** Pending questions past this instant are left out (the sweeper is about to expire them). */
  now: Date;
}

export interface QuestionRepository {
  /** With `lock`, the row is locked until the unit of work ends; `skip-locked` answers null when another holds it. */
  findById(tenantId: string, id: string, opts?: { lock?: boolean | 'skip-locked' }): Promise<Question | null>;
  /** The question an agent asked in this conversation under its own id (its idempotency key). */
  findByExternalId(tenantId: string, conversationId: string, externalId: string): Promise<Question | null>;
  /**
   * The pending questions of a conversation and of its agent (across the tenant), each counted only up to `upTo`:
   * enough to tell whether a limit is reached without reading more. Inside a unit of work, the agent's asks queue
   * from here to its end, so concurrent asks each count the ones committed before them.
   */
  countOpen(
    tenantId: string,
    scope: { conversationId: string; agentId: string },
    upTo: { conversation: number; agent: number },
  ): Promise<{ conversation: number; agent: number }>;
  /** Inserts a new question or updates it (version-checked), appends its events and wakes its long-polls after commit. */
  save(question: Question): Promise<void>;
  /** Pending questions whose expiry has passed, across tenants. */
  findDue(now: Date, limit: number): Promise<Array<{ tenantId: string; id: string }>>;
  /**
   * Pending questions a halt in force covers, across tenants, with the halt's reason: what a cancellation after
   * the halt's commit missed (the process stopped first) is cancelled by the sweeper.
   */
  findPendingUnderHalt(limit: number): Promise<Array<{ tenantId: string; id: string; reason: string }>>;
  /** Ids of the pending questions in a halt's scope. */
  findPendingIn(tenantId: string, target: HaltTarget): Promise<string[]>;
  /** The questions this person may answer, newest first; `nextCursor` is opaque. */
  listAnswerable(
    p: Principal,
    filter: QuestionListFilter,
  ): Promise<{ questions: Question[]; nextCursor: string | null }>;
}
