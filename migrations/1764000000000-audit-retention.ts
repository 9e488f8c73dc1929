import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retention: the one DELETE the events table allows is a retention purge, and only of events older than
 * six months (EU AI Act Art. 19), inside a transaction that declared itself a purge. The service's purge
 * appends an AuditPurged event in that same transaction. UPDATE and TRUNCATE stay refused for everyone.
 */
export class AuditRetention1764000000000 implements MigrationInterface {
  name = 'AuditRetention1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION tollgate_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' AND current_setting('tollgate.retention_purge', true) = 'on' THEN
          IF OLD.at < now() - interval '6 months' THEN
            RETURN OLD;
          END IF;
          RAISE EXCEPTION 'event % is younger than six months and cannot be purged', OLD.seq USING ERRCODE = 'insufficient_privilege';
        END IF;
        RAISE EXCEPTION 'the audit trail is append-only: % on events is refused', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION tollgate_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'the audit trail is append-only: % on events is refused', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
  }
}
