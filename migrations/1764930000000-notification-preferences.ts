import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How each person wants to be reached (docs/CHANNELS.md "Digests and quiet hours"): their settings, and for each
 * person and channel whether a digest of what waits for them is due, and when. A due digest lists what waits when
 * it is sent, so nothing but its time is kept here.
 */
export class NotificationPreferences1764930000000 implements MigrationInterface {
  name = 'NotificationPreferences1764930000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE notification_preferences (
        tenant_id  text        NOT NULL,
        person_id  text        NOT NULL,
        settings   jsonb       NOT NULL,
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, person_id),
        FOREIGN KEY (tenant_id, person_id) REFERENCES persons (tenant_id, id)
      )`);
    await q.query(`
      CREATE TABLE digests_due (
        tenant_id text        NOT NULL,
        person_id text        NOT NULL,
        channel   text        NOT NULL CHECK (channel IN ('email', 'push', 'slack')),
        due_at    timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, person_id, channel),
        FOREIGN KEY (tenant_id, person_id) REFERENCES persons (tenant_id, id)
      )`);
    await q.query(`CREATE INDEX digests_due_by_time ON digests_due (due_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE digests_due`);
    await q.query(`DROP TABLE notification_preferences`);
  }
}
