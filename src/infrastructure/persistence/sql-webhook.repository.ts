import { Injectable } from '@nestjs/common';
import { WebhookRepository } from '../../application/ports';
import { Webhook } from '../../domain/webhook/webhook.aggregate';
import { TypeOrmUnitOfWork } from './unit-of-work';

/** Webhook subscriptions as the commands see them; deliveries and their attempts are the webhook adapter's. */
@Injectable()
export class SqlWebhookRepository implements WebhookRepository {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  /** Locked inside a unit of work: of two concurrent deletes, the second finds nothing (one WebhookDeleted). */
  async find(tenantId: string, id: string): Promise<Webhook | null> {
    const [r]: Array<{
      url: string;
      events: string[];
      description: string | null;
      created_by: { id: string; name?: string };
      created_at: Date;
    }> = await this.uow
      .manager()
      .query(
        `SELECT url, events, description, created_by, created_at FROM webhooks WHERE tenant_id = $1 AND id = $2${this.uow.inTransaction ? ' FOR UPDATE' : ''}`,
        [tenantId, id],
      );
    return r
      ? Webhook.rehydrate({
          tenantId,
          id,
          url: r.url,
          events: r.events,
          description: r.description,
          createdBy: r.created_by,
          createdAt: r.created_at,
        })
      : null;
  }

  async save(webhook: Webhook, secret?: string): Promise<void> {
    const events = webhook.pullEvents();
    if (events.length === 0) return;
    const s = webhook.snapshot();
    const m = this.uow.manager();
    if (webhook.isDeleted) {
      await m.query(`DELETE FROM webhooks WHERE tenant_id = $1 AND id = $2`, [s.tenantId, s.id]); // deliveries cascade
    } else if (webhook.version === 0) {
      if (!secret) throw new Error('a new webhook needs its signing secret');
      // after_seq: the chain head now; the webhook gets the events appended after it.
      await m.query(
        `INSERT INTO webhooks (tenant_id, id, url, events, description, secret, created_by, created_at, after_seq)
         VALUES ($1, $2, $3, $4::text[], $5, $6, $7::jsonb, $8, coalesce((SELECT seq FROM audit_heads WHERE tenant_id = $1), 0))`,
        [s.tenantId, s.id, s.url, s.events, s.description, secret, JSON.stringify(s.createdBy), s.createdAt],
      );
      webhook.version = 1;
    }
    this.uow.collect(events);
  }
}
