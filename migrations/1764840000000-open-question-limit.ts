import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An agent's open questions are counted before it asks another (TOLLGATE_MAX_OPEN_QUESTIONS_PER_AGENT): the count
 * reads this partial index, as the per-conversation count reads questions_pending_by_conversation.
 */
export class OpenQuestionLimit1764840000000 implements MigrationInterface {
  name = 'OpenQuestionLimit1764840000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX questions_pending_by_agent ON questions (tenant_id, agent_id) WHERE status = 'pending'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX questions_pending_by_agent`);
  }
}
