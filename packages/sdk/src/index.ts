/**
 * @tollgate/sdk: gate an agent's tool calls behind Tollgate (propose → wait → claim → run → report), decide
 * them from approver programs, and check receipts in tool backends.
 */
export { Tollgate, Grants, type GrantQuery } from './tollgate.js';
export {
  TollgateClient,
  allPages,
  type TollgateOptions,
  type ReportMode,
  type DecisionChannel,
  type AuditQuery,
  type WaitOptions,
} from './client.js';
export {
  TollgateConversation,
  ToolCallHandle,
  outcomeOf,
  type ApprovalOutcome,
  type ApprovalRequest,
  type ApprovalStatus,
  type GuardCallOptions,
  type GuardedTool,
  type GuardOptions,
  type ProposeOptions,
  type RunContext,
  type RunOptions,
} from './conversation.js';
export { Inbox, type DecideOptions, type StepDecision } from './inbox.js';
export { Passkeys, needsPasskey } from './passkeys.js';
export {
  Questions,
  questionOutcome,
  type Question,
  type QuestionPage,
  type QuestionStatus,
  type QuestionAudience,
  type AskQuestionRequest,
  type AskOptions,
  type QuestionOutcome,
  type QuestionQuery,
} from './questions.js';
export {
  EventStream,
  SseParser,
  type SseEvent,
  type SseItem,
  type StreamPhase,
  type StreamState,
  type WatchOptions,
} from './sse.js';
export { TollgateError, ToolCallRejectedError, type RefusalStatus } from './errors.js';
export {
  verifyReceipt,
  MemoryReplayStore,
  ReceiptVerificationError,
  RECEIPT_TYP,
  type ReceiptClaims,
  type ReceiptErrorCode,
  type ReceiptStepUp,
  type ReceiptReplayStore,
  type VerifyReceiptOptions,
} from './receipts.js';
export { canonicalJson, argumentsDigest } from './jcs.js';
export { previewDigest } from './preview.js';
export { toolCallKey, ID_PATTERN } from './ids.js';
export {
  parseRetryAfter,
  type FetchLike,
  type TokenSource,
  type RetryOptions,
  type RetryInfo,
  type RequestOptions,
  type Query,
} from './http.js';
export type * from './types.js';
