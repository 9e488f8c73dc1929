import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The chain head's forward-only check probes one month of events, not every month. The trigger of
 * 1764615000000 checked that the new head names an appended event by (tenant_id, seq, hash). `events` is
 * partitioned by `at` (1764700000000), so that lookup locked and probed every month's partition on every append:
 * about 6 µs per partition, growing with retention (docs/BENCHMARKS.md).
 *
 * So the head carries its event's `at`:
 * - `audit_heads.at` (nullable): the `at` of the event at `seq`, or NULL where it is not known (heads made before
 *   this migration, a new tenant's head at seq 0, a bulk load's head);
 * - `tollgate_append_events` sets it to its last event's `at`, in the UPDATE that moves the head;
 * - the trigger's check adds `AND at = NEW.at` when it is set, which PostgreSQL prunes to that month. When it is
 *   NULL, the check is the one it was. A wrong `at` finds no event and is refused, like a wrong hash: the head
 *   still only moves forward, onto an appended event. An UPDATE that moves the head and leaves `at` as it was
 *   names the previous event's `at`, so it is refused too unless both events share it: whoever moves the head
 *   sets `at` or NULL.
 * - `at` alone may be filled in (or cleared) at the same seq, checked the same way; on INSERT it is NULL or the
 *   `at` of the event the head starts at.
 * Both functions are redefined here; `down` puts back their definitions from 1764500000000 and 1764615000000.
 */
export class ChainHeadAt1764900000002 implements MigrationInterface {
  name = 'ChainHeadAt1764900000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audit_heads ADD COLUMN at timestamptz`);
    await q.query(TRIGGER_FUNCTION);
    await q.query(APPEND_FUNCTION);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(APPEND_FUNCTION_BEFORE);
    await q.query(TRIGGER_FUNCTION_BEFORE);
    await q.query(`ALTER TABLE audit_heads DROP COLUMN at`);
  }
}

/**
 * The checks are separate statements, not one with `NEW.at IS NULL OR at = NEW.at`: a statement whose `at` is
 * always a value is pruned whether plpgsql plans it for each call or once for all of them.
 */
const TRIGGER_FUNCTION = `
  CREATE OR REPLACE FUNCTION tollgate_audit_heads_forward_only() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      IF NEW.seq = 0 AND NEW.hash = repeat('0', 64) AND NEW.at IS NULL
         AND NOT EXISTS (SELECT 1 FROM events WHERE tenant_id = NEW.tenant_id) THEN
        RETURN NEW;
      END IF;
      -- A bulk load (bench/audit.js) writes its events first, then the head at the last of them.
      IF NEW.seq = (SELECT max(seq) FROM events WHERE tenant_id = NEW.tenant_id)
         AND EXISTS (SELECT 1 FROM events WHERE tenant_id = NEW.tenant_id AND seq = NEW.seq AND hash = NEW.hash
                        AND (NEW.at IS NULL OR at = NEW.at)) THEN
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
      IF NEW.tenant_id = OLD.tenant_id AND NEW.seq = OLD.seq AND NEW.hash = OLD.hash
         AND NEW.at IS NOT DISTINCT FROM OLD.at THEN
        RETURN NEW;
      END IF;
      IF NEW.tenant_id = OLD.tenant_id AND (NEW.seq > OLD.seq OR (NEW.seq = OLD.seq AND NEW.hash = OLD.hash)) THEN
        IF NEW.at IS NOT NULL THEN
          -- One month: the partition of NEW.at.
          IF EXISTS (SELECT 1 FROM events
                      WHERE tenant_id = NEW.tenant_id AND seq = NEW.seq AND hash = NEW.hash AND at = NEW.at) THEN
            RETURN NEW;
          END IF;
        ELSIF EXISTS (SELECT 1 FROM events WHERE tenant_id = NEW.tenant_id AND seq = NEW.seq AND hash = NEW.hash) THEN
          RETURN NEW;
        END IF;
      END IF;
      RAISE EXCEPTION 'the chain head only moves forward, onto an appended event: UPDATE of % from seq % to seq % (at %) is refused', OLD.tenant_id, OLD.seq, NEW.seq, NEW.at
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    RAISE EXCEPTION 'the chain head only moves forward: % on audit_heads is refused', TG_OP USING ERRCODE = 'insufficient_privilege';
  END $$`;

/** As 1764500000000 defines it, and the head keeps the `at` of its last event (unchanged by an empty append). */
export const APPEND_FUNCTION = `
  CREATE OR REPLACE FUNCTION tollgate_append_events(p_tenant text, p_events jsonb)
  RETURNS TABLE (out_seq bigint, out_prev_hash text, out_hash text)
  LANGUAGE plpgsql AS $fn$
  DECLARE
    v_seq  bigint;
    v_hash text;
    v_at   timestamptz;
    v_new  text;
    e      jsonb;
  BEGIN
    SELECT h.seq, h.hash, h.at INTO v_seq, v_hash, v_at FROM audit_heads h WHERE h.tenant_id = p_tenant FOR UPDATE;
    IF NOT FOUND THEN
      INSERT INTO audit_heads (tenant_id, seq, hash) VALUES (p_tenant, 0, repeat('0', 64)) ON CONFLICT (tenant_id) DO NOTHING;
      SELECT h.seq, h.hash, h.at INTO v_seq, v_hash, v_at FROM audit_heads h WHERE h.tenant_id = p_tenant FOR UPDATE;
    END IF;
    FOR e IN SELECT value FROM jsonb_array_elements(p_events) LOOP
      v_seq := v_seq + 1;
      v_at := (e->>'at')::timestamptz;
      v_new := encode(sha256(convert_to(
        v_hash || (e->>'head') || v_hash || (e->>'mid') || v_seq::text || (e->>'tail'), 'UTF8')), 'hex');
      INSERT INTO events (tenant_id, seq, id, type, at, recorded_at, instance_id, correlation_id,
                          conversation_id, tool_call_id, tool_name, actor, data, prev_hash, hash)
      VALUES (p_tenant, v_seq, (e->>'id')::uuid, e->>'type', v_at, (e->>'recordedAt')::timestamptz,
              e->>'instanceId', e->>'correlationId', e->>'conversationId', e->>'toolCallId', e->>'toolName',
              e->'actor', e->'data', v_hash, v_new);
      out_seq := v_seq; out_prev_hash := v_hash; out_hash := v_new;
      RETURN NEXT;
      v_hash := v_new;
    END LOOP;
    UPDATE audit_heads SET seq = v_seq, hash = v_hash, at = v_at WHERE tenant_id = p_tenant;
  END
  $fn$`;

/** 1764500000000's definition. */
const APPEND_FUNCTION_BEFORE = `
  CREATE OR REPLACE FUNCTION tollgate_append_events(p_tenant text, p_events jsonb)
  RETURNS TABLE (out_seq bigint, out_prev_hash text, out_hash text)
  LANGUAGE plpgsql AS $fn$
  DECLARE
    v_seq  bigint;
    v_hash text;
    v_new  text;
    e      jsonb;
  BEGIN
    SELECT h.seq, h.hash INTO v_seq, v_hash FROM audit_heads h WHERE h.tenant_id = p_tenant FOR UPDATE;
    IF NOT FOUND THEN
      INSERT INTO audit_heads (tenant_id, seq, hash) VALUES (p_tenant, 0, repeat('0', 64)) ON CONFLICT (tenant_id) DO NOTHING;
      SELECT h.seq, h.hash INTO v_seq, v_hash FROM audit_heads h WHERE h.tenant_id = p_tenant FOR UPDATE;
    END IF;
    FOR e IN SELECT value FROM jsonb_array_elements(p_events) LOOP
      v_seq := v_seq + 1;
      v_new := encode(sha256(convert_to(
        v_hash || (e->>'head') || v_hash || (e->>'mid') || v_seq::text || (e->>'tail'), 'UTF8')), 'hex');
      INSERT INTO events (tenant_id, seq, id, type, at, recorded_at, instance_id, correlation_id,
                          conversation_id, tool_call_id, tool_name, actor, data, prev_hash, hash)
      VALUES (p_tenant, v_seq, (e->>'id')::uuid, e->>'type', (e->>'at')::timestamptz, (e->>'recordedAt')::timestamptz,
              e->>'instanceId', e->>'correlationId', e->>'conversationId', e->>'toolCallId', e->>'toolName',
              e->'actor', e->'data', v_hash, v_new);
      out_seq := v_seq; out_prev_hash := v_hash; out_hash := v_new;
      RETURN NEXT;
      v_hash := v_new;
    END LOOP;
    UPDATE audit_heads SET seq = v_seq, hash = v_hash WHERE tenant_id = p_tenant;
  END
  $fn$`;

/** 1764615000000's definition. */
const TRIGGER_FUNCTION_BEFORE = `
  CREATE OR REPLACE FUNCTION tollgate_audit_heads_forward_only() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      IF NEW.seq = 0 AND NEW.hash = repeat('0', 64) AND NOT EXISTS (SELECT 1 FROM events WHERE tenant_id = NEW.tenant_id) THEN
        RETURN NEW;
      END IF;
      IF NEW.seq = (SELECT max(seq) FROM events WHERE tenant_id = NEW.tenant_id)
         AND EXISTS (SELECT 1 FROM events WHERE tenant_id = NEW.tenant_id AND seq = NEW.seq AND hash = NEW.hash) THEN
        RETURN NEW;
      END IF;
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
  END $$`;
