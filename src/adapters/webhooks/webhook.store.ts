import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ValidationError } from '../../domain/shared/domain-error';
import { decodeCursor, encodeCursor } from '../../infrastructure/persistence/keyset-cursor';
import { returnedRows } from '../../infrastructure/persistence/returned-rows';

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  createdBy: { id: string; name?: string };
  createdAt: string;
}

export interface WebhookAttempt {
  at: string;
  /** The receiver's HTTP status; absent when no answer came (refused, timed out). */
  status?: number;
  /**
   * `HTTP <status>` for a non-2xx answer, else one fixed word: `destination_not_allowed` (no connection was
   * made), `dns_failed`, `connect_failed`, `timeout`. Never what the network said: that would map it.
   */
  error?: string;
  durationMs: number;
}

export interface WebhookDelivery {
  /** The `webhook-id` header: the event's id, the same on every attempt. */
  id: string;
  eventType: string;
  eventSeq: number;
  status: 'pending' | 'delivered' | 'failed';
  attempts: WebhookAttempt[];
  nextAttemptAt: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

/** A delivery taken for sending. */
export interface DueDelivery {
  tenantId: string;
  webhookId: string;
  eventId: string;
  eventSeq: number;
  url: string;
  secret: string;
  body: string;
  attempts: number;
}

const returned = (result: unknown): any[] => returnedRows<any>(result);

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

function webhookFromRow(r: any): Webhook {
  return {
    id: r.id,
    url: r.url,
    events: r.events,
    description: r.description,
    createdBy: r.created_by,
    createdAt: iso(r.created_at)!,
  };
}

function cursor(after: string | undefined): number | null {
  if (!after) return null;
  const n = Number(Buffer.from(after, 'base64url').toString('utf8'));
  if (!Number.isSafeInteger(n) || n < 0)
    throw new ValidationError([{ path: 'cursor', message: 'is not a cursor this server issued' }]);
  return n;
}

/** Webhook subscriptions and their deliveries, per tenant. Secrets are read only to sign. */
@Injectable()
export class WebhookStore {
  constructor(private readonly dataSource: DataSource) {}

  async find(tenantId: string, id: string): Promise<Webhook | null> {
    const rows = await this.dataSource.query(
      `SELECT id, url, events, description, created_by, created_at FROM webhooks WHERE tenant_id = $1 AND id = $2`,
      [tenantId, id],
    );
    return rows.length ? webhookFromRow(rows[0]) : null;
  }

  /** Oldest first; the cursor (opaque to clients) is the last item's creation time and id. */
  async list(
    tenantId: string,
    limit: number,
    after?: string,
  ): Promise<{ items: Webhook[]; nextCursor: string | null }> {
    const key = decodeCursor(after);
    const rows = await this.dataSource.query(
      `SELECT id, url, events, description, created_by, created_at, created_at::text AS ckey FROM webhooks
        WHERE tenant_id = $1 ${key ? 'AND (created_at, id) > ($3::timestamptz, $4)' : ''} ORDER BY created_at, id LIMIT $2`,
      key ? [tenantId, limit + 1, key[0], key[1]] : [tenantId, limit + 1],
    );
    const items: Webhook[] = rows.slice(0, limit).map(webhookFromRow);
    const last = items[items.length - 1];
    return {
      items,
      nextCursor: rows.length > limit ? encodeCursor([rows[limit - 1].ckey, last.id]) : null,
    };
  }

  /**
   * Every subscription of a tenant, for matching a batch of events at once. `afterSeq` is the tenant's chain
   * head when the webhook was made: it gets the events past it, so a new webhook is not sent the tenant's
   * history, whatever the clocks say and however late the outbox gets to an event.
   */
  async subscriptions(tenantId: string): Promise<Array<{ id: string; events: string[]; afterSeq: number }>> {
    const rows: Array<{ id: string; events: string[]; after_seq: string }> = await this.dataSource.query(
      `SELECT id, events, after_seq FROM webhooks WHERE tenant_id = $1`,
      [tenantId],
    );
    return rows.map((r) => ({ id: r.id, events: r.events, afterSeq: Number(r.after_seq) }));
  }

  /** Queues one delivery per subscription; a redelivered event (the outbox is at-least-once) queues nothing new. */
  async enqueue(
    tenantId: string,
    webhookIds: string[],
    event: { id: string; seq: number; type: string },
    body: string,
  ): Promise<number> {
    if (webhookIds.length === 0) return 0;
    const rows = returned(
      await this.dataSource.query(
        `INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_seq, event_type, body, next_attempt_at)
       SELECT $1, w, $3::uuid, $4, $5, $6, now() FROM unnest($2::text[]) AS w
       ON CONFLICT (tenant_id, webhook_id, event_id) DO NOTHING RETURNING webhook_id`,
        [tenantId, webhookIds, event.id, event.seq, event.type, body],
      ),
    );
    return rows.length;
  }

  /**
   * Takes the oldest due delivery (lowest seq) of up to `limit` endpoints, across tenants, leasing each for
   * `leaseMs` (its next attempt is pushed past the lease) so that another instance, or the next pass, does
   * not send it at the same time. One per endpoint per pass keeps an endpoint's deliveries in seq order.
   */
  async takeDue(limit: number, leaseMs: number): Promise<DueDelivery[]> {
    const rows = returned(
      await this.dataSource.query(
        `WITH due AS (
         SELECT tenant_id, webhook_id, event_id, event_seq FROM webhook_deliveries
          WHERE status = 'pending' AND next_attempt_at <= now()
          ORDER BY next_attempt_at, event_seq LIMIT $1 * 10 FOR UPDATE SKIP LOCKED
       ), first AS (
         SELECT DISTINCT ON (tenant_id, webhook_id) tenant_id, webhook_id, event_id FROM due ORDER BY tenant_id, webhook_id, event_seq
       )
       UPDATE webhook_deliveries d SET next_attempt_at = now() + make_interval(secs => $2::double precision / 1000)
         FROM first f, webhooks w
        WHERE d.tenant_id = f.tenant_id AND d.webhook_id = f.webhook_id AND d.event_id = f.event_id
          AND w.tenant_id = d.tenant_id AND w.id = d.webhook_id
          AND (f.tenant_id, f.webhook_id) IN (SELECT tenant_id, webhook_id FROM first LIMIT $1)
       RETURNING d.tenant_id, d.webhook_id, d.event_id, d.event_seq, d.body, d.attempts, w.url, w.secret`,
        [limit, leaseMs],
      ),
    );
    return rows.map((r: any) => ({
      tenantId: r.tenant_id,
      webhookId: r.webhook_id,
      eventId: r.event_id,
      eventSeq: Number(r.event_seq),
      url: r.url,
      secret: r.secret,
      body: r.body,
      attempts: r.attempts,
    }));
  }

  /** Records an attempt: delivered, or failed with the next try `retryInMs` from now (null: no more tries). */
  async recordAttempt(
    d: DueDelivery,
    attempt: WebhookAttempt,
    outcome: { delivered: true } | { delivered: false; retryInMs: number | null },
  ): Promise<void> {
    const status = outcome.delivered ? 'delivered' : outcome.retryInMs === null ? 'failed' : 'pending';
    const retryMs = !outcome.delivered && outcome.retryInMs !== null ? outcome.retryInMs : null;
    await this.dataSource.query(
      `UPDATE webhook_deliveries
          SET attempts = attempts + 1, attempt_log = attempt_log || jsonb_build_array($4::jsonb), status = $5,
              next_attempt_at = CASE WHEN $6::double precision IS NULL THEN NULL ELSE now() + make_interval(secs => $6::double precision / 1000) END,
              delivered_at = CASE WHEN $5 = 'delivered' THEN now() ELSE NULL END
        WHERE tenant_id = $1 AND webhook_id = $2 AND event_id = $3`,
      [d.tenantId, d.webhookId, d.eventId, JSON.stringify(attempt), status, retryMs],
    );
  }

  /** Newest first, so the admin sees what just happened. */
  async deliveries(
    tenantId: string,
    webhookId: string,
    limit: number,
    after?: string,
  ): Promise<{ items: WebhookDelivery[]; nextCursor: string | null }> {
    const before = cursor(after);
    const rows = await this.dataSource.query(
      `SELECT event_id, event_type, event_seq, status, attempt_log, next_attempt_at, created_at, delivered_at FROM webhook_deliveries
        WHERE tenant_id = $1 AND webhook_id = $2 ${before !== null ? 'AND event_seq < $4' : ''}
        ORDER BY event_seq DESC LIMIT $3`,
      before !== null ? [tenantId, webhookId, limit + 1, before] : [tenantId, webhookId, limit + 1],
    );
    const more = rows.length > limit;
    const items: WebhookDelivery[] = rows.slice(0, limit).map((r: any) => ({
      id: r.event_id,
      eventType: r.event_type,
      eventSeq: Number(r.event_seq),
      status: r.status,
      attempts: r.attempt_log,
      nextAttemptAt: r.status === 'pending' ? iso(r.next_attempt_at) : null,
      createdAt: iso(r.created_at)!,
      deliveredAt: iso(r.delivered_at),
    }));
    return {
      items,
      nextCursor: more ? Buffer.from(String(items[items.length - 1].eventSeq)).toString('base64url') : null,
    };
  }
}
