import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Web inbox sessions made by single sign-on (OpenID Connect). The cookie carries `<tenant>.<secret>`; only the
 * secret's SHA-256 is stored, so a copy of this table signs no one in. A session ends at `expires_at` (its
 * lifetime) or when unused for the idle timeout (`last_seen_at`), and at logout.
 */
export class WebSessions1764860000000 implements MigrationInterface {
  name = 'WebSessions1764860000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE web_sessions (
        tenant_id    text        NOT NULL,
        id_hash      text        NOT NULL,
        person_id    text        NOT NULL,
        name         text,
        email        text,
        roles        text[]      NOT NULL,
        csrf_hash    text        NOT NULL,
        id_token     text,
        created_at   timestamptz NOT NULL,
        last_seen_at timestamptz NOT NULL,
        expires_at   timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, id_hash)
      )`);
    await q.query(`CREATE INDEX web_sessions_by_expiry ON web_sessions (tenant_id, expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE web_sessions`);
  }
}
