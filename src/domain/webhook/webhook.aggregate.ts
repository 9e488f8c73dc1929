import { AggregateRoot } from '../shared/aggregate-root';
import { Actor } from '../shared/actor';
import { WebhookCreated, WebhookDeleted } from './webhook.events';

/** A subscription of a URL to audit event types. The signing secret is not part of it: it never enters an event. */
export interface WebhookState {
  tenantId: string;
  id: string;
  url: string;
  events: string[];
  description: string | null;
  createdBy: { id: string; name?: string };
  createdAt: Date;
}

/**
 * Where the tenant's audit events go besides the trail itself. Making and removing one are recorded in the
 * trail: an auditor can tell who sent the tenant's events where, and since when.
 */
export class Webhook extends AggregateRoot {
  private deleted = false;

  private constructor(
    private readonly s: WebhookState,
    version: number,
  ) {
    super(s.tenantId, version);
  }

  static rehydrate(state: WebhookState): Webhook {
    return new Webhook(state, 1);
  }

  static create(input: Omit<WebhookState, 'createdBy' | 'createdAt'> & { by: Actor; at: Date }): Webhook {
    const { by, at, ...rest } = input;
    const w = new Webhook(
      {
        ...rest,
        events: [...new Set(rest.events)],
        createdBy: { id: by.id, ...(by.name ? { name: by.name } : {}) },
        createdAt: at,
      },
      0,
    );
    w.record(
      new WebhookCreated(
        { tenantId: w.s.tenantId, at, actor: by },
        { webhookId: w.s.id, url: w.s.url, events: w.s.events, description: w.s.description },
      ),
    );
    return w;
  }

  delete(by: Actor, at: Date): void {
    if (this.deleted) return;
    this.deleted = true;
    this.record(
      new WebhookDeleted(
        { tenantId: this.s.tenantId, at, actor: by },
        { webhookId: this.s.id, url: this.s.url, events: this.s.events },
      ),
    );
  }

  get isDeleted(): boolean {
    return this.deleted;
  }

  snapshot(): Readonly<WebhookState> {
    return this.s;
  }
}
