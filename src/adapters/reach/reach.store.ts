import { Injectable } from '@nestjs/common';
import { returnedRows } from '../../infrastructure/persistence/returned-rows';
import { TypeOrmUnitOfWork } from '../../infrastructure/persistence/unit-of-work';
import { DEFAULT_PREFERENCES, NotificationPreferences, ReachChannel, readStored } from './preferences';

export interface DueDigest {
  tenantId: string;
  personId: string;
  channel: ReachChannel;
}

/** People's notification settings and the digests due for them (tables `notification_preferences`, `digests_due`). */
@Injectable()
export class ReachStore {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  async preferences(tenantId: string, personId: string): Promise<NotificationPreferences> {
    return (await this.preferencesOf(tenantId, [personId])).get(personId) ?? { ...DEFAULT_PREFERENCES };
  }

  /** Each person's settings; those who never set any have the defaults. */
  async preferencesOf(tenantId: string, personIds: readonly string[]): Promise<Map<string, NotificationPreferences>> {
    const out = new Map(personIds.map((id) => [id, { ...DEFAULT_PREFERENCES }]));
    if (personIds.length === 0) return out;
    const rows: Array<{ person_id: string; settings: unknown }> = await this.uow
      .manager()
      .query(
        `SELECT person_id, settings FROM notification_preferences WHERE tenant_id = $1 AND person_id = ANY($2::text[])`,
        [tenantId, [...personIds]],
      );
    for (const r of rows) out.set(r.person_id, readStored(r.settings));
    return out;
  }

  async save(tenantId: string, personId: string, p: NotificationPreferences, at: Date): Promise<void> {
    await this.uow.manager().query(
      `INSERT INTO notification_preferences (tenant_id, person_id, settings, updated_at) VALUES ($1, $2, $3::jsonb, $4)
       ON CONFLICT (tenant_id, person_id) DO UPDATE SET settings = EXCLUDED.settings, updated_at = EXCLUDED.updated_at`,
      [tenantId, personId, JSON.stringify(p), at],
    );
  }

  /** A digest for this person and channel is due at `at`, or earlier if one already is. */
  async digestDue(d: DueDigest, at: Date): Promise<void> {
    await this.uow.manager().query(
      `INSERT INTO digests_due (tenant_id, person_id, channel, due_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant_id, person_id, channel) DO UPDATE SET due_at = LEAST(digests_due.due_at, EXCLUDED.due_at)`,
      [d.tenantId, d.personId, d.channel, at],
    );
  }

  /** Takes the digests due by `now` (at most `limit`): removed as they are taken, so of several instances one sends each. */
  async takeDue(now: Date, limit: number): Promise<DueDigest[]> {
    const result: unknown = await this.uow.manager().query(
      `DELETE FROM digests_due WHERE (tenant_id, person_id, channel) IN (
         SELECT tenant_id, person_id, channel FROM digests_due WHERE due_at <= $1 ORDER BY due_at LIMIT $2
         FOR UPDATE SKIP LOCKED)
       RETURNING tenant_id, person_id, channel`,
      [now, limit],
    );
    const rows = returnedRows<{ tenant_id: string; person_id: string; channel: ReachChannel }>(result);
    return rows.map((r) => ({ tenantId: r.tenant_id, personId: r.person_id, channel: r.channel }));
  }
}
