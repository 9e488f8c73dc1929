import type { Question, QuestionAudience, QuestionStatus } from '../../domain/question/question.aggregate';

/** A question as REST, the SDK and the inbox show it. */
export interface QuestionView {
  id: string;
  conversationId: string;
  /** The agent's own id for it (its idempotency key), as asked. */
  externalId?: string;
  text: string;
  choices?: string[];
  /** True for a free-text question, or when an answer outside `choices` is taken. */
  allowFreeText: boolean;
  askTo: QuestionAudience[];
  status: QuestionStatus;
  timeoutSeconds: number;
  createdAt: string;
  expiresAt: string;
  answer?: { text: string; by: { id: string; name?: string; via: string }; at: string };
  /** When it expired or was cancelled. */
  endedAt?: string;
  /** Why it was cancelled. */
  reason?: string;
}

export function questionView(q: Question): QuestionView {
  const s = q.snapshot();
  return {
    id: s.id,
    conversationId: s.conversationId,
    ...(s.externalId !== undefined ? { externalId: s.externalId } : {}),
    text: s.text,
    ...(s.choices ? { choices: [...s.choices] } : {}),
    allowFreeText: s.allowFreeText,
    askTo: [...s.askTo],
    status: s.status,
    timeoutSeconds: s.timeoutSeconds,
    createdAt: s.createdAt.toISOString(),
    expiresAt: s.expiresAt.toISOString(),
    ...(s.answer ? { answer: { text: s.answer.text, by: { ...s.answer.by }, at: s.answer.at.toISOString() } } : {}),
    ...(s.endedAt ? { endedAt: s.endedAt.toISOString() } : {}),
    ...(s.endReason !== undefined ? { reason: s.endReason } : {}),
  };
}
