import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Approval channels and outgoing webhooks (issue 6):
 * - `slack_messages`: the Slack message that asked about a call (channel id and `ts`) and the conversation it
 *   showed, so the outcome can update it whichever channel decided, and so a redelivered request is not posted twice.
 * - `webhooks`: a tenant's subscriptions (URL, event types, signing secret).
 * - `webhook_deliveries`: one row per (subscription, event), holding the exact body that is signed and
 *   sent, its retry schedule and every attempt (`attempt_log`), which admins can read.
 */
export class Channels1764400000000 implements MigrationInterface {
  name = 'Channels1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE slack_messages (
        tenant_id    text        NOT NULL,
        tool_call_id text        NOT NULL,
        channel_id   text        NOT NULL,
        ts           text        NOT NULL,
        conversation jsonb,
        outcome      text,
        created_at   timestamptz NOT NULL DEFAULT now(),
        updated_at   timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, tool_call_id)
      )`);
    await q.query(`
      CREATE TABLE webhooks (
        tenant_id   text        NOT NULL,
        id          text        NOT NULL,
        url         text        NOT NULL,
        events      text[]      NOT NULL,
        description text,
        secret      text        NOT NULL,
        created_by  jsonb       NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        -- The tenant's chain head when the webhook was made: it receives the events after it.
        after_seq   bigint      NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant_id, id)
      )`);
    await q.query(`
      CREATE TABLE webhook_deliveries (
        tenant_id       text        NOT NULL,
        webhook_id      text        NOT NULL,
        event_id        uuid        NOT NULL,
        event_seq       bigint      NOT NULL,
        event_type      text        NOT NULL,
        body            text        NOT NULL,
        status          text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts        integer     NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        attempt_log     jsonb       NOT NULL DEFAULT '[]'::jsonb,
        created_at      timestamptz NOT NULL DEFAULT now(),
        delivered_at    timestamptz,
        PRIMARY KEY (tenant_id, webhook_id, event_id),
        FOREIGN KEY (tenant_id, webhook_id) REFERENCES webhooks (tenant_id, id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX webhook_deliveries_by_seq ON webhook_deliveries (tenant_id, webhook_id, event_seq)`);
    await q.query(
      `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (tenant_id, next_attempt_at) WHERE status = 'pending'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhooks`);
    await q.query(`DROP TABLE slack_messages`);
  }
}
