import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Four eyes on the control plane (`governance: {quorum}` in the policy document): a policy change, a rollback, a
 * tenant-wide grant, a resume or a new webhook made by one admin waits here until enough distinct admins approve.
 * `payload` is what will be applied (never a secret); a new webhook's signing secret waits beside it in `secret`,
 * cleared when the change ends. `version` makes each save conditional (two approvals at once apply once).
 */
export class PendingChanges1765100000000 implements MigrationInterface {
  name = 'PendingChanges1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE pending_changes (
        tenant_id      text        NOT NULL,
        id             text        NOT NULL,
        kind           text        NOT NULL CHECK (kind IN ('policy_update', 'policy_rollback', 'resume', 'webhook_create', 'tenant_grant')),
        summary        text        NOT NULL,
        payload        jsonb       NOT NULL,
        payload_digest text        NOT NULL,
        base_version   integer,
        proposed_by    jsonb       NOT NULL,
        approvals      jsonb       NOT NULL,
        needed         integer     NOT NULL CHECK (needed BETWEEN 2 AND 10),
        status         text        NOT NULL CHECK (status IN ('pending', 'applied', 'rejected', 'expired')),
        created_at     timestamptz NOT NULL,
        expires_at     timestamptz NOT NULL,
        closed_at      timestamptz,
        rejected_by    jsonb,
        reason         text,
        secret         text,
        version        integer     NOT NULL DEFAULT 1,
        PRIMARY KEY (tenant_id, id)
      )`);
    await q.query(`CREATE INDEX pending_changes_by_time ON pending_changes (tenant_id, created_at DESC, id DESC)`);
    await q.query(
      `CREATE INDEX pending_changes_open ON pending_changes (tenant_id, expires_at) WHERE status = 'pending'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE pending_changes`);
  }
}
