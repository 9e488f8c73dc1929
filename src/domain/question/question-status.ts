/* Where a question stands, and who may be asked it. */

export const QUESTION_STATUSES = ['pending', 'answered', 'expired', 'cancelled'] as const;
export type QuestionStatus = (typeof QUESTION_STATUSES)[number];

/** Who may answer: the conversation's end user (`requester`) and the roles, as a policy's `approvers` name them. */
export const QUESTION_AUDIENCES = ['requester', 'approver', 'admin'] as const;
export type QuestionAudience = (typeof QUESTION_AUDIENCES)[number];
export const DEFAULT_ASK_TO: readonly QuestionAudience[] = QUESTION_AUDIENCES;
