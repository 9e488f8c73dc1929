import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two indexes that every write paid for and no read needs (docs/BENCHMARKS.md, "PostgreSQL per proposal: indexes
 * and triggers"; bench/pg/proposal-writes.js measures them):
 * - `events_by_id` (tenant_id, id): nothing looks an event up by id (it stopped being unique in 1764700000000).
 *   Its keys are random UUIDs, so each append wrote into a random leaf page: the most expensive kind of insert,
 *   two per proposal, on every partition.
 * - `tool_calls_pending` (tenant_id, created_at, id) WHERE pending: `tool_calls_by_status` (tenant_id, status,
 *   created_at, id) serves the same per-tenant reads in the same order (the inbox's list of pending calls), and
 *   `tool_calls_pending_expiry` serves the count of pending calls per tenant (metrics) and their expiry.
 * Every filter of the audit API keeps its index; test/integration/query-indexes.int-spec.ts EXPLAINs them.
 */
export class UnusedWriteIndexes1764900000000 implements MigrationInterface {
  name = 'UnusedWriteIndexes1764900000000';

  async up(q: QueryRunner): Promise<void> {
    // On the partitioned table, this drops the index of every partition with it.
    await q.query(`DROP INDEX IF EXISTS events_by_id`);
    await q.query(`DROP INDEX IF EXISTS tool_calls_pending`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX tool_calls_pending ON tool_calls (tenant_id, created_at, id) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX events_by_id ON events (tenant_id, id)`);
  }
}
