import { Actor } from './actor';

export const EVENT_TYPES = [
  'ConversationStarted',
  'ToolRegistered',
  'PolicyUpdated',
  'ToolCallProposed',
  'ToolCallAutoApproved',
  'ToolCallNotified',
  'ApprovalRequested',
  'ToolCallApproved',
  'ToolCallApprovalRecorded',
  'DecisionRefused',
  'ToolCallEscalated',
  'ToolCallReminded',
  'ToolCallDeadlineExtended',
  'ToolCallRejected',
  'ToolCallExpired',
  'ToolCallCancelled',
  'ToolCallExecuted',
  'ToolCallCompleted',
  'GrantCreated',
  'GrantRefused',
  'GrantRevoked',
  'GrantUsed',
  'Halted',
  'Resumed',
  'AuditPurged',
  'WebhookCreated',
  'WebhookDeleted',
  'QuestionAsked',
  'QuestionAnswered',
  'QuestionExpired',
  'QuestionCancelled',
  'PasskeyRegistered',
  'PasskeyRemoved',
  'DelegationSet',
  'DelegationEnded',
  // Four eyes on the control plane (src/domain/governance)
  'ChangeProposed',
  'ChangeApproved',
  'ChangeRejected',
  'ChangeApplied',
  'ChangeExpired',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * A fact that happened inside an aggregate. Sequence number, id and hash are
 * assigned when the event store appends it inside the transaction.
 */
export interface DomainEvent {
  readonly type: EventType;
  readonly tenantId: string;
  readonly at: Date;
  readonly actor: Actor;
  readonly conversationId?: string;
  readonly toolCallId?: string;
  readonly toolName?: string;
  readonly data: object;
}
