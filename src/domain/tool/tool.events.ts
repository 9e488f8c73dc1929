/* One class per transition of a tool; names are past tense. */
import { BaseEvent } from '../shared/event-base';
import type { ToolDefinition } from './tool-definition';

export class ToolRegistered extends BaseEvent<
  ToolDefinition & { registeredBy: string; kind: 'admin' | 'agent'; created: boolean }
> {
  readonly type = 'ToolRegistered' as const;
}
