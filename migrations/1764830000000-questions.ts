import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Questions an agent asks a person in a conversation ("EU or US?"), answered in the same inbox as approvals.
 * The conversation's parties (agent, user) are copied in: they never change and decide who may read and answer.
 * Every key and index leads with tenant_id.
 */
export class Questions1764830000000 implements MigrationInterface {
  name = 'Questions1764830000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE questions (
        tenant_id       text        NOT NULL,
        id              text        NOT NULL,
        conversation_id text        NOT NULL,
        agent_id        text        NOT NULL,
        user_id         text,
        external_id     text,
        text            text        NOT NULL,
        choices         jsonb,
        allow_free_text boolean     NOT NULL,
        ask_to          text[]      NOT NULL,
        timeout_seconds integer     NOT NULL,
        asked_by        jsonb       NOT NULL,
        status          text        NOT NULL CHECK (status IN ('pending','answered','expired','cancelled')),
        created_at      timestamptz NOT NULL,
        expires_at      timestamptz NOT NULL,
        answer          text,
        answered_by     jsonb,
        answered_at     timestamptz,
        ended_at        timestamptz,
        end_reason      text,
        version         integer     NOT NULL,
        PRIMARY KEY (tenant_id, id),
        FOREIGN KEY (tenant_id, conversation_id) REFERENCES conversations (tenant_id, id)
      )`);
    // The agent's idempotency key, per conversation.
    await q.query(
      `CREATE UNIQUE INDEX questions_by_external_id ON questions (tenant_id, conversation_id, external_id) WHERE external_id IS NOT NULL`,
    );
    // The inbox (newest first) and the sweeper and halts (pending only).
    await q.query(`CREATE INDEX questions_by_status_created ON questions (tenant_id, status, created_at, id)`);
    await q.query(
      `CREATE INDEX questions_pending_expiry ON questions (tenant_id, expires_at) WHERE status = 'pending'`,
    );
    await q.query(
      `CREATE INDEX questions_pending_by_conversation ON questions (tenant_id, conversation_id) WHERE status = 'pending'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE questions`);
  }
}
