import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Belt and braces for the append-only trail: besides the triggers, UPDATE, DELETE and TRUNCATE on events
 * are revoked, from everyone and from the role that runs the migrations (usually the service's own),
 * so they fail with "permission denied" before any trigger runs. An owner can grant them back — give the
 * service a role that does not own the table in production (docs/OPERATIONS.md). A retention purge
 * grants itself DELETE for its own transaction only.
 */
export class EventsPrivileges1764100000000 implements MigrationInterface {
  name = 'EventsPrivileges1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`REVOKE UPDATE, DELETE, TRUNCATE ON events FROM PUBLIC`);
    await q.query(`REVOKE UPDATE, DELETE, TRUNCATE ON events FROM CURRENT_USER`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`GRANT UPDATE, DELETE, TRUNCATE ON events TO CURRENT_USER`);
  }
}
