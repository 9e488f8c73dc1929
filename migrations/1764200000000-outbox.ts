import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The events table is also the outbox: whatever leaves the process after a change (channel
 * notifications, webhooks) is read from it after commit. Each consumer keeps a cursor per tenant,
 * with a lease (one instance delivers a tenant's stream at a time; a crashed one's lease runs out)
 * and a retry schedule.
 */
export class Outbox1764200000000 implements MigrationInterface {
  name = 'Outbox1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE outbox_cursors (
        tenant_id       text        NOT NULL,
        consumer        text        NOT NULL,
        last_seq        bigint      NOT NULL DEFAULT 0,
        attempts        integer     NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        last_error      text,
        lease_owner     text,
        lease_until     timestamptz,
        PRIMARY KEY (tenant_id, consumer)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE outbox_cursors`);
  }
}
