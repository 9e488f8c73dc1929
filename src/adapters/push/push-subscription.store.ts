import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { returnedRows } from '../../infrastructure/persistence/returned-rows';

/** One browser's Web Push subscription, as the browser's PushSubscription.toJSON() gave it, for one person. */
export interface PushSubscriptionRecord {
  tenantId: string;
  personId: string;
  id: string;
  endpoint: string;
  /** The browser's P-256 public key (65 bytes) and auth secret (16 bytes), base64url: what a payload is sealed to. */
  p256dh: string;
  auth: string;
  userAgent: string | null;
  createdAt: Date;
  lastSentAt: Date | null;
  /** Sends refused or lost since the last one the push service took. */
  failures: number;
}

/** What the owner sees of a subscription: never its keys. */
export type PushSubscriptionSummary = Omit<PushSubscriptionRecord, 'tenantId' | 'personId' | 'p256dh' | 'auth'>;

/** A person keeps at most this many devices: more is a script subscribing in a loop, not phones and laptops. */
export const MAX_SUBSCRIPTIONS_PER_PERSON = 10;

interface Row {
  tenant_id: string;
  person_id: string;
  id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  user_agent: string | null;
  created_at: Date;
  last_sent_at: Date | null;
  failures: number;
}

const COLUMNS = 'tenant_id, person_id, id, endpoint, p256dh, auth, user_agent, created_at, last_sent_at, failures';

const record = (r: Row): PushSubscriptionRecord => ({
  tenantId: r.tenant_id,
  personId: r.person_id,
  id: r.id,
  endpoint: r.endpoint,
  p256dh: r.p256dh,
  auth: r.auth,
  userAgent: r.user_agent,
  createdAt: new Date(r.created_at),
  lastSentAt: r.last_sent_at ? new Date(r.last_sent_at) : null,
  failures: Number(r.failures),
});

export function summary(s: PushSubscriptionRecord): PushSubscriptionSummary {
  const { tenantId: _t, personId: _p, p256dh: _k, auth: _a, ...rest } = s;
  return rest;
}

/**
 * `push_subscriptions`: each person's browsers, per tenant. Every read and write names the tenant and, from the API,
 * the person: one person never lists, reads or removes another's. An endpoint is one browser's, so it belongs to
 * whoever subscribed it last in the tenant (someone else signing in on a shared laptop takes it over).
 */
@Injectable()
export class PushSubscriptionStore {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Keeps a subscription: the same endpoint again refreshes its keys (and moves it to this person); a new one is added
   * while the person has fewer than MAX_SUBSCRIPTIONS_PER_PERSON. Undefined when that limit is reached.
   */
  async save(
    s: Pick<PushSubscriptionRecord, 'tenantId' | 'personId' | 'endpoint' | 'p256dh' | 'auth' | 'userAgent'>,
  ): Promise<PushSubscriptionRecord | undefined> {
    const [moved] = returnedRows<Row>(
      await this.dataSource.query(
        `UPDATE push_subscriptions SET person_id = $2, p256dh = $4, auth = $5, user_agent = $6, failures = 0
         WHERE tenant_id = $1 AND endpoint = $3 RETURNING ${COLUMNS}`,
        [s.tenantId, s.personId, s.endpoint, s.p256dh, s.auth, s.userAgent],
      ),
    );
    if (moved) return record(moved);
    // The count and the insert are one statement; two subscriptions racing may pass the limit by one, no more.
    const [added]: Row[] = await this.dataSource.query(
      `INSERT INTO push_subscriptions (tenant_id, person_id, id, endpoint, p256dh, auth, user_agent, created_at)
       SELECT $1, $2, $3, $4, $5, $6, $7, now()
       WHERE (SELECT count(*) FROM push_subscriptions WHERE tenant_id = $1 AND person_id = $2) < $8
       ON CONFLICT (tenant_id, endpoint) DO UPDATE
         SET person_id = EXCLUDED.person_id, p256dh = EXCLUDED.p256dh, auth = EXCLUDED.auth,
             user_agent = EXCLUDED.user_agent, failures = 0
       RETURNING ${COLUMNS}`,
      [s.tenantId, s.personId, newId(), s.endpoint, s.p256dh, s.auth, s.userAgent, MAX_SUBSCRIPTIONS_PER_PERSON],
    );
    return added ? record(added) : undefined;
  }

  async list(tenantId: string, personId: string): Promise<PushSubscriptionRecord[]> {
    const rows: Row[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM push_subscriptions WHERE tenant_id = $1 AND person_id = $2 ORDER BY created_at, id`,
      [tenantId, personId],
    );
    return rows.map(record);
  }

  /** The subscriptions of these persons, for sending. */
  async ofPersons(tenantId: string, personIds: readonly string[]): Promise<PushSubscriptionRecord[]> {
    if (personIds.length === 0) return [];
    const rows: Row[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM push_subscriptions WHERE tenant_id = $1 AND person_id = ANY($2::text[])
       ORDER BY person_id, created_at, id`,
      [tenantId, personIds],
    );
    return rows.map(record);
  }

  /** Removes one of the person's own subscriptions; false when they have none of that id. */
  async remove(tenantId: string, personId: string, id: string): Promise<boolean> {
    const rows = returnedRows<{ id: string }>(
      await this.dataSource.query(
        `DELETE FROM push_subscriptions WHERE tenant_id = $1 AND person_id = $2 AND id = $3 RETURNING id`,
        [tenantId, personId, id],
      ),
    );
    return rows.length > 0;
  }

  /**
   * The push service said the subscription is gone (404, 410): forgotten. Matched on the endpoint too, so a row the
   * browser re-subscribed meanwhile (same id, new keys) is kept only if its endpoint changed.
   */
  async forget(s: Pick<PushSubscriptionRecord, 'tenantId' | 'personId' | 'id' | 'endpoint'>): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM push_subscriptions WHERE tenant_id = $1 AND person_id = $2 AND id = $3 AND endpoint = $4`,
      [s.tenantId, s.personId, s.id, s.endpoint],
    );
  }

  async sent(s: Pick<PushSubscriptionRecord, 'tenantId' | 'personId' | 'id'>): Promise<void> {
    await this.dataSource.query(
      `UPDATE push_subscriptions SET last_sent_at = now(), failures = 0 WHERE tenant_id = $1 AND person_id = $2 AND id = $3`,
      [s.tenantId, s.personId, s.id],
    );
  }

  async failed(s: Pick<PushSubscriptionRecord, 'tenantId' | 'personId' | 'id'>): Promise<void> {
    await this.dataSource.query(
      `UPDATE push_subscriptions SET failures = failures + 1 WHERE tenant_id = $1 AND person_id = $2 AND id = $3`,
      [s.tenantId, s.personId, s.id],
    );
  }
}

/** `ps_` and 16 random bytes: names a subscription in the API without revealing its endpoint. */
function newId(): string {
  return `ps_${randomBytes(16).toString('base64url')}`;
}
