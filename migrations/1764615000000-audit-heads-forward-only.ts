import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The chain head gets the events table's discipline. `audit_heads` says where each tenant's chain ends, and
 * verify trusts it to notice events cut from the end; a head that can be moved back hides such a cut. So:
 * - a head is born at seq 0 with 64 zeros for a tenant without events (the first append makes it), or at the
 *   last event of its tenant with that event's hash (a bulk load that writes the events first);
 * - it moves only forward, onto an event that is in the table with that seq and that hash (every append
 *   inserts its events before it moves the head, in the same statement); an UPDATE that changes nothing
 *   (an empty append) passes; the hash never changes without the seq;
 * - DELETE and TRUNCATE are refused, and revoked as on events.
 * The triggers are ENABLE ALWAYS, so session_replication_role = replica does not skip them. A retention purge
 * only locks the head (SELECT … FOR UPDATE, no trigger) and moves it by appending its AuditPurged event.
 * Someone who owns the table can still drop the triggers: signed checkpoints kept outside the database catch
 * that (docs/COMPLIANCE.md).
 */
export class AuditHeadsForwardOnly1764615000000 implements MigrationInterface {
  name = 'AuditHeadsForwardOnly1764615000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION tollgate_audit_heads_forward_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          IF NEW.seq = 0 AND NEW.hash = repeat('0', 64) AND NOT EXISTS (SELECT 1 FROM events WHERE tenant_id = NEW.tenant_id) THEN
            RETURN NEW;
          END IF;
          -- A bulk load (bench/audit.js) writes its events first, then the head at the last of them.
          IF NEW.seq = (SELECT max(seq) FROM events WHERE tenant_id = NEW.tenant_id)
             AND EXISTS (SELECT 1 FROM events WHERE tenant_id = NEW.tenant_id AND seq = NEW.seq AND hash = NEW.hash) THEN
            RETURN NEW;
          END IF;
          -- Two first appends of a tenant race to make its head: the loser's INSERT … ON CONFLICT DO NOTHING
          -- fires this trigger after the winner committed its events, and then leaves the winner's head as it
          -- is (a plain INSERT fails on the primary key). Nothing moves, so there is nothing to refuse. Checked
          -- last: the winner's head and events commit together, so once its events are seen, so is its head.
          IF EXISTS (SELECT 1 FROM audit_heads WHERE tenant_id = NEW.tenant_id) THEN
            RETURN NEW;
          END IF;
          RAISE EXCEPTION 'a chain head starts at seq 0, or at the last event of its tenant: INSERT of % at seq % on audit_heads is refused', NEW.tenant_id, NEW.seq
            USING ERRCODE = 'insufficient_privilege';
        ELSIF TG_OP = 'UPDATE' THEN
          IF NEW.tenant_id = OLD.tenant_id AND NEW.seq = OLD.seq AND NEW.hash = OLD.hash THEN
            RETURN NEW;
          END IF;
          IF NEW.tenant_id = OLD.tenant_id AND NEW.seq > OLD.seq
             AND EXISTS (SELECT 1 FROM events WHERE tenant_id = NEW.tenant_id AND seq = NEW.seq AND hash = NEW.hash) THEN
            RETURN NEW;
          END IF;
          RAISE EXCEPTION 'the chain head only moves forward, onto an appended event: UPDATE of % from seq % to seq % is refused', OLD.tenant_id, OLD.seq, NEW.seq
            USING ERRCODE = 'insufficient_privilege';
        END IF;
        RAISE EXCEPTION 'the chain head only moves forward: % on audit_heads is refused', TG_OP USING ERRCODE = 'insufficient_privilege';
      END $$`);
    await q.query(
      `CREATE TRIGGER audit_heads_forward_only BEFORE INSERT OR UPDATE OR DELETE ON audit_heads FOR EACH ROW EXECUTE FUNCTION tollgate_audit_heads_forward_only()`,
    );
    await q.query(
      `CREATE TRIGGER audit_heads_no_truncate BEFORE TRUNCATE ON audit_heads FOR EACH STATEMENT EXECUTE FUNCTION tollgate_audit_heads_forward_only()`,
    );
    await q.query(`ALTER TABLE audit_heads ENABLE ALWAYS TRIGGER audit_heads_forward_only`);
    await q.query(`ALTER TABLE audit_heads ENABLE ALWAYS TRIGGER audit_heads_no_truncate`);
    // INSERT and UPDATE stay granted: tollgate_append_events runs as its caller and moves the head.
    await q.query(`REVOKE DELETE, TRUNCATE ON audit_heads FROM PUBLIC`);
    await q.query(`REVOKE DELETE, TRUNCATE ON audit_heads FROM CURRENT_USER`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`GRANT DELETE, TRUNCATE ON audit_heads TO CURRENT_USER`);
    await q.query(`DROP TRIGGER IF EXISTS audit_heads_no_truncate ON audit_heads`);
    await q.query(`DROP TRIGGER IF EXISTS audit_heads_forward_only ON audit_heads`);
    await q.query(`DROP FUNCTION IF EXISTS tollgate_audit_heads_forward_only()`);
  }
}
