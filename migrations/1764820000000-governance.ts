import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Separation of duties, quorums, escalation and reminders. A conversation remembers its agent's owner (the agent token's `owner`
 * claim), who may not approve its calls where the policy says `selfApproval: false`; a held call keeps the
 * approvals counted towards its quorum while it waits, and how far its escalation and reminders have gone, with
 * the time the next step is due (`next_step_at`, indexed for the sweeper like `expires_at`). All nullable: rows
 * from before have none.
 */
export class Governance1764820000000 implements MigrationInterface {
  name = 'Governance1764820000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE conversations ADD COLUMN agent_owner text`);
    await q.query(
      `ALTER TABLE tool_calls ADD COLUMN approvals jsonb, ADD COLUMN follow_up jsonb, ADD COLUMN next_step_at timestamptz`,
    );
    await q.query(
      `CREATE INDEX tool_calls_pending_next_step ON tool_calls (tenant_id, next_step_at) WHERE status = 'pending' AND next_step_at IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX tool_calls_pending_next_step`);
    await q.query(`ALTER TABLE tool_calls DROP COLUMN approvals, DROP COLUMN follow_up, DROP COLUMN next_step_at`);
    await q.query(`ALTER TABLE conversations DROP COLUMN agent_owner`);
  }
}
