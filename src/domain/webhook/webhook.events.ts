/* One class per transition of a webhook; names are past tense. */
import { BaseEvent } from '../shared/event-base';

export class WebhookCreated extends BaseEvent<{
  webhookId: string;
  url: string;
  events: string[];
  description: string | null;
}> {
  readonly type = 'WebhookCreated' as const;
}

export class WebhookDeleted extends BaseEvent<{ webhookId: string; url: string; events: string[] }> {
  readonly type = 'WebhookDeleted' as const;
}
