import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 28, parts 8 and 9.
 * `call_views`: when each person was first shown a held call's card (a GET of the call, the approvals list, the
 * action-link page), measured by the server, so time to decide does not rest on a client's claim. Not an audit
 * event; one row per call and person at most, and at most 100 people per call (the insert checks).
 * `audit_anchors`: per tenant, the last checkpoint the scheduler wrote to the sink outside the database (seq,
 * hash, when), so a run signs only tenants with new events since, and a claim so one instance writes each.
 */
export class ReviewerViewsAndAnchors1765080000000 implements MigrationInterface {
  name = 'ReviewerViewsAndAnchors1765080000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE call_views (
        tenant_id     text        NOT NULL,
        call_id       text        NOT NULL,
        person_id     text        NOT NULL CHECK (length(person_id) <= 256),
        first_seen_at timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, call_id, person_id)
      )`);
    await q.query(`
      CREATE TABLE audit_anchors (
        tenant_id   text        NOT NULL PRIMARY KEY,
        seq         bigint      NOT NULL,
        hash        text        NOT NULL,
        anchored_at timestamptz NOT NULL,
        -- An instance writing this tenant's checkpoint holds it until then: one writer per tenant and run.
        claimed_until timestamptz
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_anchors`);
    await q.query(`DROP TABLE call_views`);
  }
}
