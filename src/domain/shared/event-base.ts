import { Actor } from './actor';
import { DomainEvent, EventType } from './domain-event';

export interface EventEnvelope {
  tenantId: string;
  at: Date;
  actor: Actor;
  conversationId?: string;
  toolCallId?: string;
  toolName?: string;
}

/** Base for the past-tense event classes: a typed payload plus where and who. */
export abstract class BaseEvent<D extends object> implements DomainEvent {
  abstract readonly type: EventType;
  readonly tenantId: string;
  readonly at: Date;
  readonly actor: Actor;
  readonly conversationId?: string;
  readonly toolCallId?: string;
  readonly toolName?: string;

  constructor(
    envelope: EventEnvelope,
    readonly data: D,
  ) {
    this.tenantId = envelope.tenantId;
    this.at = envelope.at;
    this.actor = envelope.actor;
    this.conversationId = envelope.conversationId;
    this.toolCallId = envelope.toolCallId;
    this.toolName = envelope.toolName;
  }
}
