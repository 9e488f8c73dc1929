import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Delegation (out of office): one row per person who delegates (a new delegation replaces it), naming the person
 * who decides for them from `starts_at` until `ends_at`. Checks are by time: a row past its end simply stops
 * applying. Both sides are persons of the tenant.
 */
export class Delegations1764920000000 implements MigrationInterface {
  name = 'Delegations1764920000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE delegations (
        tenant_id     text        NOT NULL,
        person_id     text        NOT NULL,
        to_person_id  text        NOT NULL,
        starts_at     timestamptz NOT NULL,
        ends_at       timestamptz NOT NULL,
        reason        text,
        created_at    timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, person_id),
        FOREIGN KEY (tenant_id, person_id) REFERENCES persons (tenant_id, id),
        FOREIGN KEY (tenant_id, to_person_id) REFERENCES persons (tenant_id, id),
        CHECK (ends_at > starts_at),
        CHECK (to_person_id <> person_id)
      )`);
    // Every decision, inbox list and stream of a person asks who delegated to them.
    await q.query(`CREATE INDEX delegations_to_person ON delegations (tenant_id, to_person_id, ends_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE delegations`);
  }
}
