import { Actor } from './actor';

export const EVENT_TYPES = [
  'ConversationStarted',
  'ToolRegistered',
  'PolicyUpdated',
  'ToolCallProposed',
  'ToolCallAutoApproved',
  'ApprovalRequested',
  'ToolCallApproved',
  'ToolCallRejected',
  'ToolCallExpired',
  'ToolCallCancelled',
  'ToolCallExecuted',
  'ToolCallCompleted',
  'GrantCreated',
  'GrantRefused',
  'Halted',
  'Resumed',
  'AuditPurged',
  'WebhookCreated',
  'WebhookDeleted',
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
