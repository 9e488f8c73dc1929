/**
 * "Ask a human": an agent asks a person a question in its conversation and waits for the answer, in the same
 * inbox people use for approvals; people list and answer them.
 */
import { TollgateError } from './errors.js';
import { ID_PATTERN, newId, toolCallKey } from './ids.js';
import { untilSettled } from './long-poll.js';
import type { DecisionChannel, TollgateClient, WaitOptions } from './client.js';
import type {
  ActorRef,
  AnswerQuestionRequest,
  AskQuestionRequest,
  Question,
  QuestionAudience,
  QuestionPage,
  QuestionStatus,
} from './types.js';

// The API's shapes, named in types.ts from the generated schemas; exported here too, as before.
export type { AskQuestionRequest, Question, QuestionAudience, QuestionPage, QuestionStatus } from './types.js';

export interface AskOptions {
  /** 2 to 20 distinct answers to pick from; without them the answer is free text. */
  choices?: string[];
  /** With choices: take an answer outside them too. */
  allowFreeText?: boolean;
  /** Seconds before the question expires unanswered (1 to 86,400; default 300). */
  timeoutSeconds?: number;
  /** Who may answer (default: the end user, approvers and admins). */
  askTo?: QuestionAudience[];
  /** The idempotency key: asking again with the same id and content answers the same question. Made here when left out. */
  id?: string;
  signal?: AbortSignal;
}

/** How a question ended: the answer and who gave it, or that it expired or was cancelled (a halt). */
export type QuestionOutcome =
  | { status: 'answered'; answer: string; by: ActorRef; question: Question }
  | { status: 'expired' | 'cancelled'; question: Question };

export interface QuestionQuery {
  status?: QuestionStatus;
  cursor?: string;
  limit?: number;
}

const enc = encodeURIComponent;

/** The questions API: `tollgate.questions`. */
export class Questions {
  constructor(private readonly tollgate: TollgateClient) {}

  /** Asks in a conversation (the conversation's agent); answers the question, pending (operationId askQuestion). */
  ask(conversationId: string, body: AskQuestionRequest, o: WaitOptions = {}): Promise<Question> {
    return this.tollgate.request<Question>('POST', `/v1/conversations/${enc(conversationId)}/questions`, {
      body,
      signal: o.signal,
    });
  }

  /** One question; with `wait`, long-polls up to that many seconds (≤ 60) while it is pending (operationId getQuestion). */
  get(id: string, o: WaitOptions & { wait?: number } = {}): Promise<Question> {
    return this.tollgate.request<Question>('GET', `/v1/questions/${enc(id)}`, {
      query: o.wait ? { wait: o.wait } : undefined,
      signal: o.signal,
    });
  }

  /** One page of the questions the caller may answer, newest first (operationId listQuestions). */
  list(q: QuestionQuery = {}, o: WaitOptions = {}): Promise<QuestionPage> {
    return this.tollgate.request<QuestionPage>('GET', '/v1/questions', {
      query: q as Record<string, string | number>,
      signal: o.signal,
    });
  }

  /** The pending questions the caller may answer: what a UI shows. */
  pending(q: Omit<QuestionQuery, 'status'> = {}, o: WaitOptions = {}): Promise<QuestionPage> {
    return this.list({ ...q, status: 'pending' }, o);
  }

  /**
   * Answers (people only): the first answer wins; the same answer again by the same person answers it unchanged,
   * any other later one throws TollgateError `already_answered` (operationId answerQuestion).
   */
  answer(id: string, answer: string, o: WaitOptions & { channel?: DecisionChannel } = {}): Promise<Question> {
    return this.tollgate.request<Question>('POST', `/v1/questions/${enc(id)}/answer`, {
      body: { answer } satisfies AnswerQuestionRequest,
      signal: o.signal,
      headers: this.tollgate.channelHeader(o.channel),
    });
  }

  /**
   * Waits (long-polling) until the question is answered, expires or is cancelled, riding out network errors and
   * restarts until a minute past its expiry, as waiting for a decision does.
   */
  async wait(idOrQuestion: string | Question, o: WaitOptions = {}): Promise<Question> {
    let q = typeof idOrQuestion === 'string' ? await this.get(idOrQuestion, o) : idOrQuestion;
    return untilSettled(q, {
      pending: (x) => x.status === 'pending',
      expiresAt: (x) => Date.parse(x.expiresAt),
      read: (x, wait) => this.get(x.id, { wait, signal: o.signal }),
      pollSeconds: this.tollgate.options.pollSeconds,
      backoff: (attempt) => this.tollgate.transport.backoff(attempt),
      signal: o.signal,
    });
  }

  /** Asks in a conversation and waits for the outcome (`conv.ask`). */
  async askAndWait(conversationId: string, text: string, o: AskOptions = {}): Promise<QuestionOutcome> {
    const { signal, id, ...rest } = o;
    // Made before the first attempt, so a retried ask never asks twice.
    const key = id === undefined ? newId('ask') : ID_PATTERN.test(id) ? id : await toolCallKey(id);
    const asked = await this.ask(conversationId, { text, ...rest, id: key }, { signal });
    return questionOutcome(await this.wait(asked, { signal }));
  }
}

/** The outcome of a question that is no longer pending. */
export function questionOutcome(q: Question): QuestionOutcome {
  if (q.status === 'answered' && q.answer)
    return { status: 'answered', answer: q.answer.text, by: q.answer.by, question: q };
  if (q.status === 'expired' || q.status === 'cancelled') return { status: q.status, question: q };
  throw new TollgateError({
    type: 'urn:tollgate:problem:still_pending',
    title: 'Still pending',
    status: 0,
    detail: `question ${q.id} is still pending`,
    code: 'still_pending',
  });
}
