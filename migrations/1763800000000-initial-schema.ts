import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The core schema. Every tenant-owned table carries tenant_id and leads its keys and indexes
 * with it, so it can later be distributed by tenant; signing_keys is instance-wide (a reference table).
 * The events table is the audit trail and the outbox: append-only, enforced by triggers.
 */
export class InitialSchema1763800000000 implements MigrationInterface {
  name = 'InitialSchema1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE conversations (
        tenant_id     text        NOT NULL,
        id            text        NOT NULL,
        agent_id      text        NOT NULL,
        user_id       text,
        user_roles    text[],
        user_name     text,
        title         text,
        metadata      jsonb,
        pending_count integer     NOT NULL DEFAULT 0,
        created_at    timestamptz NOT NULL,
        updated_at    timestamptz NOT NULL,
        version       integer     NOT NULL,
        PRIMARY KEY (tenant_id, id)
      )`);
    await q.query(`CREATE INDEX conversations_by_created ON conversations (tenant_id, created_at, id)`);
    await q.query(`CREATE INDEX conversations_by_agent ON conversations (tenant_id, agent_id, created_at, id)`);
    await q.query(`CREATE INDEX conversations_by_user ON conversations (tenant_id, user_id, created_at, id)`);

    await q.query(`
      CREATE TABLE tool_calls (
        tenant_id       text        NOT NULL,
        id              text        NOT NULL,
        conversation_id text        NOT NULL,
        external_id     text,
        tool_name       text        NOT NULL,
        arguments       jsonb       NOT NULL,
        annotations     jsonb,
        reason          text,
        confidence      double precision,
        estimated_cost  double precision,
        display         jsonb,
        status          text        NOT NULL CHECK (status IN ('pending','approved','rejected','expired','cancelled','executed','completed')),
        policy          jsonb       NOT NULL,
        approvers       text[],
        expires_at      timestamptz,
        decision        jsonb,
        execution       jsonb,
        result          jsonb,
        cancellation    jsonb,
        created_at      timestamptz NOT NULL,
        updated_at      timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, id),
        FOREIGN KEY (tenant_id, conversation_id) REFERENCES conversations (tenant_id, id)
      )`);
    await q.query(`CREATE INDEX tool_calls_by_conversation ON tool_calls (tenant_id, conversation_id, created_at, id)`);
    await q.query(
      `CREATE UNIQUE INDEX tool_calls_external_id ON tool_calls (tenant_id, conversation_id, external_id) WHERE external_id IS NOT NULL`,
    );
    // The inbox (oldest first) and the expiry sweeper only ever look at pending calls: keep those indexes small.
    await q.query(`CREATE INDEX tool_calls_pending ON tool_calls (tenant_id, created_at, id) WHERE status = 'pending'`);
    await q.query(
      `CREATE INDEX tool_calls_pending_expiry ON tool_calls (tenant_id, expires_at) WHERE status = 'pending'`,
    );
    await q.query(`CREATE INDEX tool_calls_by_status ON tool_calls (tenant_id, status, created_at, id)`);

    await q.query(`
      CREATE TABLE tools (
        tenant_id          text        NOT NULL,
        name               text        NOT NULL,
        description        text,
        is_read_only       boolean     NOT NULL,
        requires_approval  boolean     NOT NULL,
        destructive        boolean     NOT NULL,
        registered_by      text        NOT NULL,
        registered_by_kind text        NOT NULL CHECK (registered_by_kind IN ('admin','agent')),
        created_at         timestamptz NOT NULL,
        updated_at         timestamptz NOT NULL,
        version            integer     NOT NULL,
        PRIMARY KEY (tenant_id, name)
      )`);

    // One row per accepted document: the history of a tenant's policy; the newest is in force.
    await q.query(`
      CREATE TABLE policy_versions (
        tenant_id  text        NOT NULL,
        version    integer     NOT NULL,
        document   jsonb       NOT NULL,
        created_at timestamptz NOT NULL,
        created_by text        NOT NULL,
        PRIMARY KEY (tenant_id, version)
      )`);

    await q.query(`
      CREATE TABLE grants (
        tenant_id           text        NOT NULL,
        id                  text        NOT NULL,
        tool_name           text        NOT NULL,
        scope               text        NOT NULL CHECK (scope IN ('conversation','agent','tenant')),
        conversation_id     text,
        agent_id            text,
        created_by          jsonb       NOT NULL,
        source_tool_call_id text        NOT NULL,
        created_at          timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, id)
      )`);
    await q.query(`CREATE INDEX grants_by_tool ON grants (tenant_id, tool_name)`);

    await q.query(`
      CREATE TABLE halts (
        tenant_id  text        NOT NULL,
        scope      text        NOT NULL CHECK (scope IN ('tenant','agent','conversation')),
        scope_id   text        NOT NULL DEFAULT '',
        reason     text        NOT NULL,
        created_by jsonb       NOT NULL,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, scope, scope_id)
      )`);

    // The head of each tenant's hash chain. Locking this row orders a tenant's appends: no forks, no gaps.
    await q.query(`
      CREATE TABLE audit_heads (
        tenant_id text   NOT NULL PRIMARY KEY,
        seq       bigint NOT NULL,
        hash      text   NOT NULL
      )`);

    await q.query(`
      CREATE TABLE events (
        tenant_id       text        NOT NULL,
        seq             bigint      NOT NULL,
        id              uuid        NOT NULL,
        type            text        NOT NULL,
        at              timestamptz NOT NULL,
        recorded_at     timestamptz NOT NULL DEFAULT now(),
        instance_id     text        NOT NULL,
        conversation_id text,
        tool_call_id    text,
        tool_name       text,
        actor           jsonb       NOT NULL,
        data            jsonb       NOT NULL,
        prev_hash       text        NOT NULL,
        hash            text        NOT NULL,
        PRIMARY KEY (tenant_id, seq)
      )`);
    await q.query(`CREATE UNIQUE INDEX events_by_id ON events (tenant_id, id)`);
    await q.query(
      `CREATE INDEX events_by_conversation ON events (tenant_id, conversation_id, seq) WHERE conversation_id IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX events_by_tool_call ON events (tenant_id, tool_call_id, seq) WHERE tool_call_id IS NOT NULL`,
    );
    await q.query(`CREATE INDEX events_by_type ON events (tenant_id, type, seq)`);
    await q.query(`CREATE INDEX events_by_time ON events (tenant_id, at)`);

    // Append-only for every role, owner and superuser included: triggers, not only grants.
    await q.query(`
      CREATE FUNCTION tollgate_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'the audit trail is append-only: % on events is refused', TG_OP
          USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await q.query(
      `CREATE TRIGGER events_no_update_delete BEFORE UPDATE OR DELETE ON events FOR EACH ROW EXECUTE FUNCTION tollgate_events_append_only()`,
    );
    await q.query(
      `CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events FOR EACH STATEMENT EXECUTE FUNCTION tollgate_events_append_only()`,
    );
    // ALWAYS: the triggers fire even with session_replication_role = replica, which a superuser could set.
    await q.query(`ALTER TABLE events ENABLE ALWAYS TRIGGER events_no_update_delete`);
    await q.query(`ALTER TABLE events ENABLE ALWAYS TRIGGER events_no_truncate`);

    await q.query(`
      CREATE TABLE signing_keys (
        kid         text        NOT NULL PRIMARY KEY,
        alg         text        NOT NULL,
        private_jwk jsonb       NOT NULL,
        public_jwk  jsonb       NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'signing_keys',
      'events',
      'audit_heads',
      'halts',
      'grants',
      'policy_versions',
      'tools',
      'tool_calls',
      'conversations',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${t}`);
    }
    await q.query(`DROP FUNCTION IF EXISTS tollgate_events_append_only()`);
  }
}
