import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One person per tenant, whatever channel they come through: made on their first authenticated request (id = the
 * token's or the identity provider's `sub`), with the name, email and roles last seen. A channel's own user id (a
 * Slack user) is linked to a person, so a decision made there is the person's, and separation of duties and
 * quorums compare persons across channels.
 */
export class Persons1764850000000 implements MigrationInterface {
  name = 'Persons1764850000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE persons (
        tenant_id     text        NOT NULL,
        id            text        NOT NULL,
        name          text,
        email         text,
        roles         text[]      NOT NULL DEFAULT '{}',
        first_seen_at timestamptz NOT NULL,
        last_seen_at  timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, id)
      )`);
    // Linking a channel user by a verified email finds the person by it.
    await q.query(`CREATE INDEX persons_by_email ON persons (tenant_id, lower(email)) WHERE email IS NOT NULL`);
    await q.query(`
      CREATE TABLE person_identities (
        tenant_id    text        NOT NULL,
        channel      text        NOT NULL,
        channel_user text        NOT NULL,
        person_id    text        NOT NULL,
        linked_by    text        NOT NULL CHECK (linked_by IN ('config','email')),
        linked_at    timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, channel, channel_user),
        FOREIGN KEY (tenant_id, person_id) REFERENCES persons (tenant_id, id)
      )`);
    await q.query(`CREATE INDEX person_identities_by_person ON person_identities (tenant_id, person_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE person_identities`);
    await q.query(`DROP TABLE persons`);
  }
}
