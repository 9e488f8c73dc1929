import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * ANALYZE of the write path's tables collects only the statistics that plans use (docs/BENCHMARKS.md,
 * "PostgreSQL per proposal: indexes and triggers"). Most of an ANALYZE of `events` went into sorting the sample's
 * jsonb payloads and hashes to build statistics no query reads: every read finds events by tenant, seq, time,
 * type, tool, call, conversation or actor (its expression index keeps statistics of its own). Measured on a
 * month of 40,000 events: 2.6–4.6 s of CPU per ANALYZE before, 0.5–0.6 s after. Autovacuum analyses a growing
 * month at every 10% of growth by default; a month's partition now waits for 50% (the first ANALYZE still comes
 * after 50 rows, so a new month is not planned as empty for long). `tool_calls` is updated and read by status,
 * so only its payloads lose their statistics and its autovacuum settings stay.
 *
 * A month made later gets the same settings: `tollgate_events_guard_partition`, which
 * `tollgate_events_ensure_partitions` calls for every new partition, is redefined here (its definition before
 * this is in 1764700000000-events-partitioned.ts, and `down` puts it back).
 */
const EVENT_PAYLOADS = ['data', 'actor', 'id', 'hash', 'prev_hash'];
const CALL_PAYLOADS = [
  'arguments',
  'annotations',
  'display',
  'policy',
  'decision',
  'execution',
  'result',
  'cancellation',
  'approvals',
  'follow_up',
];
const PARTITION_OPTIONS = 'autovacuum_analyze_scale_factor = 0.5';

const statistics = (columns: string[], target: number) =>
  columns.map((c) => `ALTER COLUMN ${c} SET STATISTICS ${target}`).join(', ');

const guardFunction = (settings: boolean) => `
  CREATE OR REPLACE FUNCTION tollgate_events_guard_partition(p_name text) RETURNS void
  LANGUAGE plpgsql AS $fn$
  BEGIN
    EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON %I FROM PUBLIC', p_name);
    EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON %I FROM CURRENT_USER', p_name);
    EXECUTE format('CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION tollgate_events_append_only()', p_name);
    EXECUTE format('ALTER TABLE %I ENABLE ALWAYS TRIGGER events_no_truncate', p_name);${
      settings
        ? `
    EXECUTE format('ALTER TABLE %I SET (${PARTITION_OPTIONS})', p_name);
    EXECUTE format('ALTER TABLE %I ${statistics(EVENT_PAYLOADS, 0)}', p_name);`
        : ''
    }
  END
  $fn$`;

export class AnalyzeWhatPlansUse1764900000001 implements MigrationInterface {
  name = 'AnalyzeWhatPlansUse1764900000001';

  async up(q: QueryRunner): Promise<void> {
    // On the partitioned table this reaches every partition; new ones get it from the guard below.
    await q.query(`ALTER TABLE events ${statistics(EVENT_PAYLOADS, 0)}`);
    await q.query(`ALTER TABLE tool_calls ${statistics(CALL_PAYLOADS, 0)}`);
    for (const p of await this.partitions(q)) await q.query(`ALTER TABLE ${p} SET (${PARTITION_OPTIONS})`);
    await this.guard(q, true);
  }

  async down(q: QueryRunner): Promise<void> {
    await this.guard(q, false);
    for (const p of await this.partitions(q)) await q.query(`ALTER TABLE ${p} RESET (autovacuum_analyze_scale_factor)`);
    await q.query(`ALTER TABLE tool_calls ${statistics(CALL_PAYLOADS, -1)}`);
    await q.query(`ALTER TABLE events ${statistics(EVENT_PAYLOADS, -1)}`);
  }

  /** Every partition of `events`, the default one too, quoted. */
  private async partitions(q: QueryRunner): Promise<string[]> {
    const rows: Array<{ name: string }> = await q.query(
      `SELECT quote_ident(c.relname) AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'events'::regclass`,
    );
    return rows.map((r) => r.name);
  }

  /** CREATE OR REPLACE drops the function's SET clause: its fixed search_path is set again, as 1764700000000 did. */
  private async guard(q: QueryRunner, settings: boolean): Promise<void> {
    await q.query(guardFunction(settings));
    const [{ schema }] = await q.query(`SELECT quote_ident(current_schema()) AS schema`);
    await q.query(`ALTER FUNCTION tollgate_events_guard_partition(text) SET search_path = ${schema}, pg_temp`);
  }
}
