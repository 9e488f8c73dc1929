import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `events` partitioned by time (issue 14): `PARTITION BY RANGE (at)`, one partition per calendar month (UTC),
 * named `events_YYYY_MM`, plus `events_default`. The existing rows are copied into their months in this
 * migration, which holds the table locked while it runs (the time per million events is in docs/BENCHMARKS.md).
 *
 * Partitions ahead of time. `tollgate_events_ensure_partitions(from, to)` makes every missing month that
 * overlaps [from, to): the migration makes each month that holds events and this month with the next three; the
 * service calls it at start-up and every hour for its clock's month and the next three
 * (EventPartitionMaintenance). It runs as the table's owner (SECURITY DEFINER), so a service role that does not
 * own `events` can still make partitions; it only ever adds empty ones. It builds each as a table and ATTACHes
 * it, which takes SHARE UPDATE EXCLUSIVE on `events` (appends and reads go on) rather than the ACCESS EXCLUSIVE
 * of CREATE TABLE … PARTITION OF. The default partition is the safety net: an event whose month has no partition
 * (a clock far off, the service down for months) lands there, so an INSERT never fails for lack of a partition.
 * A month whose events are in the default partition gets no partition of its own later (ATTACH would refuse:
 * those rows cannot be moved out of an append-only table); its events stay in the default partition, where
 * queries still find them, pruning just cannot skip them, and retention deletes them row by row.
 *
 * Uniqueness. A unique index on a partitioned table must contain the partition key, so:
 * - the primary key is (tenant_id, seq, at). PostgreSQL no longer refuses, by itself, a second row with an
 *   existing (tenant_id, seq) and another `at`. That is a weakening, stated here and in docs/OPERATIONS.md.
 *   What keeps seq unique per tenant: `tollgate_append_events` is the one writer; it numbers a tenant's events
 *   from the chain head it holds locked (migration 1764500000000), so appends are serialised per tenant and seq
 *   rises by one with no gaps; the head only moves forward, onto an event in the table (1764615000000); and
 *   verify walks the chain in seq order, so a duplicated seq fails it ("event N+1 is missing" or a broken link).
 *   A duplicate is therefore detected, not prevented, when someone inserts behind the service's back.
 * - `events_by_id` (tenant_id, id) is no longer unique, for the same reason; ids are random UUIDs the service
 *   makes, and nothing looks an event up by id.
 * - Every other index is as before, created on `events` and so on every partition.
 *
 * Append-only, as before, on every partition: the row trigger (UPDATE/DELETE) is cloned onto each partition by
 * PostgreSQL, ENABLE ALWAYS included; the TRUNCATE trigger is statement-level, which PostgreSQL does not clone,
 * so each partition gets its own; UPDATE, DELETE and TRUNCATE are revoked on `events` and on each partition, from
 * PUBLIC and from the owner. Grants that others held on the old table are carried over.
 *
 * Retention drops whole partitions: `tollgate_events_drop_partition(name)` drops a monthly partition only inside
 * a retention purge (`tollgate.retention_purge` on, as the row trigger of 1764000000000 requires) and only when
 * its whole range is older than six months; the purge uses it for partitions that hold nothing but the purged
 * events (src/infrastructure/persistence/typeorm-audit-retention.ts) and deletes rows elsewhere. Dropping a table
 * is the owner's DDL, which no row trigger sees: a partition dropped by hand leaves a hole that verify reports.
 */
export class EventsPartitioned1764700000000 implements MigrationInterface {
  name = 'EventsPartitioned1764700000000';

  async up(q: QueryRunner): Promise<void> {
    // Every index of the old table is rebuilt below by name; one this migration does not know would be lost.
    const indexes: Array<{ name: string }> = await q.query(
      `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'events'::regclass`,
    );
    const unknown = indexes.map((i) => i.name).filter((n) => !(n in INDEXES) && n !== 'events_pkey');
    if (unknown.length > 0)
      throw new Error(`events has indexes this migration would not rebuild: ${unknown.join(', ')}`);

    await q.query(`ALTER TABLE events RENAME TO events_unpartitioned`);
    await q.query(`ALTER TABLE events_unpartitioned DROP CONSTRAINT events_pkey`);
    for (const name of Object.keys(INDEXES)) await q.query(`DROP INDEX IF EXISTS ${name}`);

    // LIKE keeps the columns in their order (correlation_id last), NOT NULLs and defaults.
    await q.query(`CREATE TABLE events (LIKE events_unpartitioned INCLUDING DEFAULTS) PARTITION BY RANGE (at)`);
    await q.query(
      `CREATE TRIGGER events_no_update_delete BEFORE UPDATE OR DELETE ON events FOR EACH ROW EXECUTE FUNCTION tollgate_events_append_only()`,
    );
    await q.query(
      `CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events FOR EACH STATEMENT EXECUTE FUNCTION tollgate_events_append_only()`,
    );
    await q.query(`ALTER TABLE events ENABLE ALWAYS TRIGGER events_no_update_delete`);
    await q.query(`ALTER TABLE events ENABLE ALWAYS TRIGGER events_no_truncate`);
    // The old table's grants, then the revocations of 1764100000000.
    await q.query(`REVOKE ALL ON events FROM CURRENT_USER`);
    await q.query(`
      DO $$
      DECLARE r record;
      BEGIN
        FOR r IN SELECT a.grantee, a.privilege_type, a.is_grantable FROM pg_class c, aclexplode(c.relacl) a WHERE c.oid = 'events_unpartitioned'::regclass LOOP
          EXECUTE format('GRANT %s ON events TO %s%s', r.privilege_type,
            CASE WHEN r.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(r.grantee)) END,
            CASE WHEN r.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
        END LOOP;
        IF (SELECT relacl FROM pg_class WHERE oid = 'events_unpartitioned'::regclass) IS NULL THEN
          GRANT ALL ON events TO CURRENT_USER;
        END IF;
      END $$`);
    await q.query(`REVOKE UPDATE, DELETE, TRUNCATE ON events FROM PUBLIC`);
    await q.query(`REVOKE UPDATE, DELETE, TRUNCATE ON events FROM CURRENT_USER`);

    await q.query(PARTITIONS_FUNCTION);
    await q.query(GUARD_FUNCTION);
    await q.query(ENSURE_FUNCTION);
    await q.query(DROP_FUNCTION);
    // Partitions are made by the table's owner whoever asks; search_path fixed, as a SECURITY DEFINER function needs.
    const [{ schema }] = await q.query(`SELECT quote_ident(current_schema()) AS schema`);
    await q.query(
      `ALTER FUNCTION tollgate_events_ensure_partitions(timestamptz, timestamptz) SECURITY DEFINER SET search_path = ${schema}, pg_temp`,
    );
    await q.query(`ALTER FUNCTION tollgate_events_guard_partition(text) SET search_path = ${schema}, pg_temp`);

    await q.query(`CREATE TABLE events_default PARTITION OF events DEFAULT`);
    await q.query(`SELECT tollgate_events_guard_partition('events_default')`);
    // A partition for each month that holds events, and for this month and the next three.
    await q.query(`
      SELECT tollgate_events_ensure_partitions(m, m + interval '1 month')
        FROM (SELECT DISTINCT date_trunc('month', at, 'UTC') AS m FROM events_unpartitioned) months ORDER BY m`);
    await q.query(`SELECT tollgate_events_ensure_partitions(now(), now() + interval '3 months')`);

    // The rows, then the indexes (built once per partition, faster than maintained row by row).
    await q.query(`INSERT INTO events SELECT * FROM events_unpartitioned`);
    const [counts] = await q.query(
      `SELECT (SELECT count(*) FROM events_unpartitioned) AS before, (SELECT count(*) FROM events) AS after`,
    );
    if (counts.before !== counts.after) throw new Error(`copied ${counts.after} of ${counts.before} events`);
    await q.query(`ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (tenant_id, seq, at)`);
    for (const [name, definition] of Object.entries(INDEXES))
      await q.query(`CREATE INDEX ${name} ON events ${definition}`);
    await q.query(`DROP TABLE events_unpartitioned`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events RENAME TO events_partitioned`);
    await q.query(`ALTER TABLE events_partitioned DROP CONSTRAINT events_pkey`);
    for (const name of Object.keys(INDEXES)) await q.query(`DROP INDEX IF EXISTS ${name}`);
    await q.query(`CREATE TABLE events (LIKE events_partitioned INCLUDING DEFAULTS)`);
    await q.query(`INSERT INTO events SELECT * FROM events_partitioned`);
    await q.query(`ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (tenant_id, seq)`);
    for (const [name, definition] of Object.entries(INDEXES)) {
      await q.query(`CREATE ${name === 'events_by_id' ? 'UNIQUE ' : ''}INDEX ${name} ON events ${definition}`);
    }
    await q.query(
      `CREATE TRIGGER events_no_update_delete BEFORE UPDATE OR DELETE ON events FOR EACH ROW EXECUTE FUNCTION tollgate_events_append_only()`,
    );
    await q.query(
      `CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events FOR EACH STATEMENT EXECUTE FUNCTION tollgate_events_append_only()`,
    );
    await q.query(`ALTER TABLE events ENABLE ALWAYS TRIGGER events_no_update_delete`);
    await q.query(`ALTER TABLE events ENABLE ALWAYS TRIGGER events_no_truncate`);
    await q.query(`REVOKE UPDATE, DELETE, TRUNCATE ON events FROM PUBLIC`);
    await q.query(`REVOKE UPDATE, DELETE, TRUNCATE ON events FROM CURRENT_USER`);
    await q.query(`DROP TABLE events_partitioned`);
    for (const f of [
      'tollgate_events_drop_partition(text)',
      'tollgate_events_ensure_partitions(timestamptz, timestamptz)',
      'tollgate_events_guard_partition(text)',
      'tollgate_events_partitions()',
    ]) {
      await q.query(`DROP FUNCTION IF EXISTS ${f}`);
    }
  }
}

/** The secondary indexes of events (migrations 1763800000000 and 1763900000000), rebuilt on the partitioned table. */
const INDEXES: Record<string, string> = {
  events_by_id: `(tenant_id, id)`,
  events_by_conversation: `(tenant_id, conversation_id, seq) WHERE conversation_id IS NOT NULL`,
  events_by_tool_call: `(tenant_id, tool_call_id, seq) WHERE tool_call_id IS NOT NULL`,
  events_by_type: `(tenant_id, type, seq)`,
  events_by_time: `(tenant_id, at, seq)`,
  events_by_tool_name: `(tenant_id, tool_name, seq) WHERE tool_name IS NOT NULL`,
  events_by_actor: `(tenant_id, (actor->>'id'), seq)`,
};

/** The monthly partitions of events and their bounds, oldest first; the default partition is not listed. */
const PARTITIONS_FUNCTION = `
  CREATE FUNCTION tollgate_events_partitions() RETURNS TABLE (name text, from_at timestamptz, to_at timestamptz)
  LANGUAGE sql STABLE AS $fn$
    -- The bound reads FOR VALUES FROM ('…') TO ('…'), each timestamp with its offset.
    SELECT c.relname::text, split_part(b.bound, '''', 2)::timestamptz, split_part(b.bound, '''', 4)::timestamptz
      FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid
      CROSS JOIN LATERAL (SELECT pg_get_expr(c.relpartbound, c.oid) AS bound) b
     WHERE i.inhparent = 'events'::regclass AND b.bound <> 'DEFAULT'
     ORDER BY 2
  $fn$`;

/** What every partition of events gets besides the cloned row trigger: its own TRUNCATE trigger and revocations. */
const GUARD_FUNCTION = `
  CREATE FUNCTION tollgate_events_guard_partition(p_name text) RETURNS void
  LANGUAGE plpgsql AS $fn$
  BEGIN
    EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON %I FROM PUBLIC', p_name);
    EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON %I FROM CURRENT_USER', p_name);
    EXECUTE format('CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION tollgate_events_append_only()', p_name);
    EXECUTE format('ALTER TABLE %I ENABLE ALWAYS TRIGGER events_no_truncate', p_name);
  END
  $fn$`;

/**
 * Makes the missing monthly partitions overlapping [p_from, p_to) and returns how many it made. One caller at a
 * time (an advisory lock), so instances starting together do not race. Months in UTC whatever the session's zone.
 */
const ENSURE_FUNCTION = `
  CREATE FUNCTION tollgate_events_ensure_partitions(p_from timestamptz, p_to timestamptz) RETURNS integer
  LANGUAGE plpgsql SET timezone = 'UTC' AS $fn$
  DECLARE
    v_lo   timestamptz := date_trunc('month', p_from);
    v_hi   timestamptz;
    v_name text;
    v_made integer := 0;
  BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('tollgate_events_ensure_partitions'));
    WHILE v_lo < p_to LOOP
      v_hi := v_lo + interval '1 month';
      v_name := 'events_' || to_char(v_lo, 'YYYY_MM');
      IF to_regclass(v_name) IS NULL
         AND NOT EXISTS (SELECT 1 FROM tollgate_events_partitions() p WHERE p.from_at < v_hi AND p.to_at > v_lo)
         AND NOT EXISTS (SELECT 1 FROM events_default WHERE at >= v_lo AND at < v_hi) THEN
        EXECUTE format('CREATE TABLE %I (LIKE events INCLUDING DEFAULTS)', v_name);
        PERFORM tollgate_events_guard_partition(v_name);
        -- Indexes are made and the row trigger cloned (ENABLE ALWAYS kept) as it is attached.
        EXECUTE format('ALTER TABLE events ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', v_name, v_lo, v_hi);
        v_made := v_made + 1;
      END IF;
      v_lo := v_hi;
    END LOOP;
    RETURN v_made;
  END
  $fn$`;

/** Retention's way to drop a whole month: inside a purge, and only a month entirely older than six months. */
const DROP_FUNCTION = `
  CREATE FUNCTION tollgate_events_drop_partition(p_name text) RETURNS void
  LANGUAGE plpgsql AS $fn$
  DECLARE
    v_to timestamptz;
  BEGIN
    IF current_setting('tollgate.retention_purge', true) IS DISTINCT FROM 'on' THEN
      RAISE EXCEPTION 'the audit trail is append-only: dropping % is refused outside a retention purge', p_name USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT p.to_at INTO v_to FROM tollgate_events_partitions() p WHERE p.name = p_name;
    IF NOT FOUND THEN
      RAISE EXCEPTION '% is not a monthly partition of events', p_name USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF v_to > now() - interval '6 months' THEN
      RAISE EXCEPTION 'partition % holds events younger than six months and cannot be dropped', p_name USING ERRCODE = 'insufficient_privilege';
    END IF;
    EXECUTE format('DROP TABLE %I', p_name);
  END
  $fn$`;
