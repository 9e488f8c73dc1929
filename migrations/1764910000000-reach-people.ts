import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reaching approvers where they are (docs/CHANNELS.md): a person's Web Push subscriptions, the instance's VAPID key
 * pair (made on first use, like the signing key, unless the operator configures one), the single-use action tokens
 * of push notifications and emails once used, and which person was already told of which call on which channel,
 * so a redelivered outbox event never sends twice.
 */
export class ReachPeople1764910000000 implements MigrationInterface {
  name = 'ReachPeople1764910000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE push_subscriptions (
        tenant_id       text        NOT NULL,
        person_id       text        NOT NULL,
        id              text        NOT NULL,
        endpoint        text        NOT NULL,
        p256dh          text        NOT NULL,
        auth            text        NOT NULL,
        user_agent      text,
        created_at      timestamptz NOT NULL,
        last_sent_at    timestamptz,
        failures        integer     NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant_id, person_id, id),
        FOREIGN KEY (tenant_id, person_id) REFERENCES persons (tenant_id, id)
      )`);
    // A browser's subscription belongs to the last person who subscribed it on this tenant.
    await q.query(`CREATE UNIQUE INDEX push_subscriptions_by_endpoint ON push_subscriptions (tenant_id, endpoint)`);
    await q.query(`
      CREATE TABLE vapid_keys (
        id          text        PRIMARY KEY,
        public_key  text        NOT NULL,
        private_key text        NOT NULL,
        created_at  timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE action_token_uses (
        tenant_id    text        NOT NULL,
        jti          text        NOT NULL,
        tool_call_id text        NOT NULL,
        person_id    text        NOT NULL,
        used_at      timestamptz NOT NULL,
        -- Kept until the token could no longer be used anyway; swept after.
        expires_at   timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, jti)
      )`);
    await q.query(`CREATE INDEX action_token_uses_by_expiry ON action_token_uses (expires_at)`);
    await q.query(`
      CREATE TABLE notifications_sent (
        tenant_id    text        NOT NULL,
        tool_call_id text        NOT NULL,
        channel      text        NOT NULL,
        person_id    text        NOT NULL,
        -- What was sent: ask (the request), escalated, reminder.
        kind         text        NOT NULL,
        sent_at      timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, tool_call_id, channel, person_id, kind)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE notifications_sent`);
    await q.query(`DROP TABLE action_token_uses`);
    await q.query(`DROP TABLE vapid_keys`);
    await q.query(`DROP TABLE push_subscriptions`);
  }
}
