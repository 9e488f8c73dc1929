import { AggregateRoot } from '../shared/aggregate-root';
import { Actor, Principal, SYSTEM_ACTOR, hasAnyRole, isAgent, personActor } from '../shared/actor';
import { DomainError, ValidationError, ValidationFault } from '../shared/domain-error';
import { mayReadConversation } from '../conversation/conversation.aggregate';

import { AlreadyAnsweredError } from './question.errors';
import { QuestionAnswered, QuestionAsked, QuestionCancelled, QuestionExpired } from './question.events';
import { DEFAULT_ASK_TO, QUESTION_AUDIENCES, QuestionAudience, QuestionStatus } from './question-status';

export * from './question-status';

export const MAX_QUESTION_TEXT = 4000;
export const MAX_ANSWER_TEXT = 4000;
export const MIN_CHOICES = 2;
export const MAX_CHOICES = 20;
export const MAX_CHOICE_LENGTH = 200;
export const MAX_QUESTION_SECONDS = 86_400;
export const DEFAULT_QUESTION_SECONDS = 300;

const NEXT: Record<QuestionStatus, readonly QuestionStatus[]> = {
  pending: ['answered', 'expired', 'cancelled'],
  answered: [],
  expired: [],
  cancelled: [],
};
/** One transition table: a question is answered, expires or is cancelled once, and then stays so. */

export interface QuestionAnswer {
  text: string;
  by: { id: string; name?: string; via: string };
  at: Date;
}

export interface QuestionState {
  id: string;
  tenantId: string;
  conversationId: string;
  /** The conversation's parties, copied at ask time (they never change): who may read and answer. */
  agentId: string;
  userId: string | null;
  /** The agent's idempotency key. */
  externalId?: string;
  text: string;
  choices?: string[];
  allowFreeText: boolean;
  askTo: QuestionAudience[];
  timeoutSeconds: number;
  askedBy: { id: string; via: string };
  createdAt: Date;
  expiresAt: Date;
  status: QuestionStatus;
  answer?: QuestionAnswer;
  /** When it expired or was cancelled. */
  endedAt?: Date;
  /** Why it was cancelled (the halt's reason). */
  endReason?: string;
}

/** What an agent asks; checked by `questionFaults` before a Question is made. */
export interface QuestionInput {
  text: string;
  choices?: string[];
  allowFreeText?: boolean;
  timeoutSeconds?: number;
  askTo?: string[];
}

/** What is wrong with a question as asked, each fault naming its field; empty when it may be asked. */
export function questionFaults(q: QuestionInput): ValidationFault[] {
  const faults: ValidationFault[] = [];
  if (typeof q.text !== 'string' || q.text.trim() === '')
    faults.push({ path: 'text', message: 'must be a non-empty string' });
  else if (q.text.length > MAX_QUESTION_TEXT)
    faults.push({ path: 'text', message: `must be at most ${MAX_QUESTION_TEXT} characters` });
  if (q.choices !== undefined) {
    if (!Array.isArray(q.choices) || q.choices.length < MIN_CHOICES || q.choices.length > MAX_CHOICES) {
      faults.push({ path: 'choices', message: `must list from ${MIN_CHOICES} to ${MAX_CHOICES} choices` });
    } else {
      const seen = new Set<string>();
      q.choices.forEach((c, i) => {
        if (typeof c !== 'string' || c.trim() === '')
          faults.push({ path: `choices[${i}]`, message: 'must be a non-empty string' });
        else if (c.length > MAX_CHOICE_LENGTH)
          faults.push({ path: `choices[${i}]`, message: `must be at most ${MAX_CHOICE_LENGTH} characters` });
        else if (seen.has(c)) faults.push({ path: `choices[${i}]`, message: 'repeats an earlier choice' });
        else seen.add(c);
      });
    }
  } else if (q.allowFreeText === false) {
    faults.push({
      path: 'allowFreeText',
      message: 'cannot be false without choices: without choices every answer is free text',
    });
  }
  if (
    q.timeoutSeconds !== undefined &&
    (!Number.isInteger(q.timeoutSeconds) || q.timeoutSeconds < 1 || q.timeoutSeconds > MAX_QUESTION_SECONDS)
  ) {
    faults.push({ path: 'timeoutSeconds', message: `must be a whole number from 1 to ${MAX_QUESTION_SECONDS}` });
  }
  if (q.askTo !== undefined) {
    if (!Array.isArray(q.askTo) || q.askTo.length === 0)
      faults.push({ path: 'askTo', message: `must name at least one of: ${QUESTION_AUDIENCES.join(', ')}` });
    else
      q.askTo.forEach((a, i) => {
        if (!(QUESTION_AUDIENCES as readonly string[]).includes(a))
          faults.push({
            path: `askTo[${i}]`,
            message: `must be one of: ${QUESTION_AUDIENCES.join(', ')} (agents and auditors never answer)`,
          });
      });
  }
  return faults;
}

function answerFault(s: Pick<QuestionState, 'choices' | 'allowFreeText'>, answer: string): ValidationFault | undefined {
  if (typeof answer !== 'string' || answer.trim() === '')
    return { path: 'answer', message: 'must be a non-empty string' };
  if (answer.length > MAX_ANSWER_TEXT)
    return { path: 'answer', message: `must be at most ${MAX_ANSWER_TEXT} characters` };
  if (s.choices && !s.choices.includes(answer) && !s.allowFreeText)
    return {
      path: 'answer',
      message: `must be one of the choices: ${s.choices.map((c) => JSON.stringify(c)).join(', ')}`,
    };
  return undefined;
}
/** The answer's fault against the question's choices, or undefined. */

function normalised(q: QuestionInput): {
  text: string;
  choices?: string[];
  allowFreeText: boolean;
  askTo: QuestionAudience[];
  timeoutSeconds: number;
} {
  return {
    text: q.text,
    ...(q.choices ? { choices: [...q.choices] } : {}),
    allowFreeText: q.choices ? (q.allowFreeText ?? false) : true,
    askTo: QUESTION_AUDIENCES.filter((a) => (q.askTo ?? DEFAULT_ASK_TO).includes(a)),
    timeoutSeconds: q.timeoutSeconds ?? DEFAULT_QUESTION_SECONDS,
  };
}
/** The answer as recorded: what the agent asked, normalised so a replay compares equal. */

export type AnswerResult = { kind: 'answered' } | { kind: 'unchanged' } | { kind: 'refused'; error: DomainError };

/**
 * A question an agent asks a person in a conversation: free text, or one of a few choices. It waits like a
 * held tool call — pending until the first answer, its expiry or a halt — and the first answer wins.
 */
export class Question extends AggregateRoot {
  private constructor(
    private s: QuestionState,
    version: number,
  ) {
    super(s.tenantId, version);
  }

  static rehydrate(state: QuestionState, version: number): Question {
    return new Question(state, version);
  }

  /** Asks; throws ValidationError naming each bad field. `by` is the conversation's agent. */
  static ask(input: {
    id: string;
    tenantId: string;
    conversationId: string;
    agentId: string;
    userId: string | null;
    externalId?: string;
    question: QuestionInput;
    by: Actor;
    at: Date;
  }): Question {
    const faults = questionFaults(input.question);
    if (faults.length > 0) throw new ValidationError(faults);
    const n = normalised(input.question);
    const expiresAt = new Date(input.at.getTime() + n.timeoutSeconds * 1000);
    const q = new Question(
      {
        id: input.id,
        tenantId: input.tenantId,
        conversationId: input.conversationId,
        agentId: input.agentId,
        userId: input.userId,
        ...(input.externalId !== undefined ? { externalId: input.externalId } : {}),
        ...n,
        askedBy: { id: input.by.id, via: input.by.via },
        createdAt: input.at,
        expiresAt,
        status: 'pending',
      },
      0,
    );
    q.record(
      new QuestionAsked(q.envelope(input.by, input.at), {
        questionId: input.id,
        text: n.text,
        ...(n.choices ? { choices: n.choices } : {}),
        allowFreeText: n.allowFreeText,
        askTo: n.askTo,
        timeoutSeconds: n.timeoutSeconds,
        expiresAt: expiresAt.toISOString(),
        ...(input.externalId !== undefined ? { externalId: input.externalId } : {}),
      }),
    );
    return q;
  }

  get id(): string {
    return this.s.id;
  }

  get status(): QuestionStatus {
    return this.s.status;
  }

  get conversationId(): string {
    return this.s.conversationId;
  }

  snapshot(): Readonly<QuestionState> {
    return this.s;
  }

  /** True when the same agent's same id asks for exactly this again (an idempotent replay). */
  asksTheSame(q: QuestionInput): boolean {
    if (questionFaults(q).length > 0) return false;
    const n = normalised(q);
    const same = (a?: string[], b?: string[]) =>
      a === undefined ? b === undefined : b !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
    return (
      n.text === this.s.text &&
      same(n.choices, this.s.choices) &&
      n.allowFreeText === this.s.allowFreeText &&
      same(n.askTo, this.s.askTo) &&
      n.timeoutSeconds === this.s.timeoutSeconds
    );
  }

  /** Who may read it: whoever may read its conversation. */
  isVisibleTo(p: Principal): boolean {
    return mayReadConversation(p, { agentId: this.s.agentId, userId: this.s.userId });
  }

  /** Never an agent; the end user when `requester` is asked; otherwise a role among `askTo`. */
  mayAnswer(p: Principal): boolean {
    if (isAgent(p)) return false;
    if (this.s.askTo.includes('requester') && this.s.userId !== null && this.s.userId === p.id) return true;
    return hasAnyRole(
      p,
      this.s.askTo.filter((a) => a !== 'requester'),
    );
  }

  isDueAt(now: Date): boolean {
    return this.s.status === 'pending' && this.s.expiresAt.getTime() <= now.getTime();
  }

  /**
   * The first answer wins. The same person sending the same answer again changes nothing; any other later
   * answer is refused with already_answered. A question past its expiry expires here first (saved, then refused).
   * Who may answer and whether the answer fits are checked first: 403 and 400 come before 409.
   */
  answer(by: Principal, via: Actor['via'], text: string, at: Date): AnswerResult {
    if (!this.mayAnswer(by)) {
      throw new DomainError(
        'forbidden',
        'forbidden',
        isAgent(by)
          ? 'Agent tokens cannot answer questions: answers come from people'
          : `Answering this question needs one of: ${this.s.askTo.join(', ')}`,
      );
    }
    const fault = answerFault(this.s, text);
    if (fault) throw new ValidationError([fault]);
    if (this.s.status === 'answered' && this.s.answer!.by.id === by.id && this.s.answer!.text === text)
      return { kind: 'unchanged' };
    if (this.s.status === 'pending' && this.isDueAt(at)) {
      this.expire(at);
      return { kind: 'refused', error: new AlreadyAnsweredError(this.s.id, this.s.status) };
    }
    if (this.s.status !== 'pending')
      return { kind: 'refused', error: new AlreadyAnsweredError(this.s.id, this.s.status) };
    // The trail's actor carries the channel's own user (a linked Slack user) and a relayed answer's assurance.
    const actor = personActor(by, via);
    this.moveTo('answered');
    this.s = { ...this.s, answer: { text, by: { id: by.id, via, ...(by.name ? { name: by.name } : {}) }, at } };
    this.record(
      new QuestionAnswered(this.envelope(actor, at), {
        questionId: this.s.id,
        by: by.id,
        via,
        answer: text,
        latencyMs: Math.max(0, at.getTime() - this.s.createdAt.getTime()),
      }),
    );
    return { kind: 'answered' };
  }

  /** Expires a pending question whose time is up; answers whether it did. */
  expire(at: Date, actor: Actor = SYSTEM_ACTOR): boolean {
    if (!this.isDueAt(at)) return false;
    this.moveTo('expired');
    this.s = { ...this.s, endedAt: at };
    this.record(
      new QuestionExpired(this.envelope(actor, at), {
        questionId: this.s.id,
        expiresAt: this.s.expiresAt.toISOString(),
      }),
    );
    return true;
  }

  /** A halt cancels a pending question; anything else stays as it is. Answers whether it did. */
  cancel(reason: string, by: Actor, at: Date): boolean {
    if (this.s.status !== 'pending') return false;
    this.moveTo('cancelled');
    this.s = { ...this.s, endedAt: at, endReason: reason };
    this.record(new QuestionCancelled(this.envelope(by, at), { questionId: this.s.id, reason }));
    return true;
  }

  private moveTo(next: QuestionStatus): void {
    if (!NEXT[this.s.status].includes(next))
      throw new DomainError(
        'illegal_transition',
        'conflict',
        `Question ${this.s.id} cannot go from ${this.s.status} to ${next}`,
      );
    this.s = { ...this.s, status: next };
  }

  private envelope(actor: Actor, at: Date) {
    return { tenantId: this.s.tenantId, at, actor, conversationId: this.s.conversationId };
  }
}
