import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit trail as auditors query it: a correlation id per event (the request that wrote it) and an
 * index for each filter of GET /v1/audit/events, each led by tenant_id and ending in seq so a filtered
 * page is an index range scan in seq order.
 */
export class AuditQueries1763900000000 implements MigrationInterface {
  name = 'AuditQueries1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events ADD COLUMN correlation_id text`);
    await q.query(`CREATE INDEX events_by_tool_name ON events (tenant_id, tool_name, seq) WHERE tool_name IS NOT NULL`);
    await q.query(`CREATE INDEX events_by_actor ON events (tenant_id, (actor->>'id'), seq)`);
    await q.query(`DROP INDEX events_by_time`);
    await q.query(`CREATE INDEX events_by_time ON events (tenant_id, at, seq)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX events_by_time`);
    await q.query(`CREATE INDEX events_by_time ON events (tenant_id, at)`);
    await q.query(`DROP INDEX events_by_actor`);
    await q.query(`DROP INDEX events_by_tool_name`);
    await q.query(`ALTER TABLE events DROP COLUMN correlation_id`);
  }
}
