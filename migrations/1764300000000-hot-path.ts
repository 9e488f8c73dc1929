import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The approval hot path in fewer round trips (issue 4):
 * - `tollgate_append_events` appends a batch of events to a tenant's hash chain in one statement. The
 *   service sends each event's canonical JSON split around `prevHash` and `seq`; the function takes the
 *   chain head lock, fills both in, hashes (`sha256(prevHash || JCS(event))`, the same formula verify
 *   uses) and moves the head. The head row stays locked for only that statement and the commit.
 * - `tollgate_expect(ok, message)` fails the statement with SQLSTATE 40001 (retry) unless `ok`: a save checks
 *   its conversation's version in the same statement that appends its events, so nothing is written when stale.
 * - `tool_calls_open` finds a conversation's open calls without reading its whole history.
 */
export class HotPath1764300000000 implements MigrationInterface {
  name = 'HotPath1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX tool_calls_open ON tool_calls (tenant_id, conversation_id) WHERE status IN ('pending', 'approved', 'executed')`,
    );
    await q.query(`
      CREATE FUNCTION tollgate_append_events(p_tenant text, p_events jsonb)
      RETURNS TABLE (out_seq bigint, out_prev_hash text, out_hash text)
      LANGUAGE plpgsql AS $fn$
      DECLARE
        v_seq  bigint;
        v_hash text;
        v_new  text;
        e      jsonb;
      BEGIN
        INSERT INTO audit_heads AS h (tenant_id, seq, hash) VALUES (p_tenant, 0, repeat('0', 64))
          ON CONFLICT (tenant_id) DO UPDATE SET tenant_id = EXCLUDED.tenant_id
          RETURNING h.seq, h.hash INTO v_seq, v_hash;
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
      $fn$`);
    await q.query(`
      CREATE FUNCTION tollgate_expect(p_ok boolean, p_message text) RETURNS boolean
      LANGUAGE plpgsql AS $fn$
      BEGIN
        IF p_ok IS NOT TRUE THEN
          RAISE EXCEPTION '%', p_message USING ERRCODE = '40001';
        END IF;
        RETURN true;
      END
      $fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION IF EXISTS tollgate_expect(boolean, text)`);
    await q.query(`DROP FUNCTION IF EXISTS tollgate_append_events(text, jsonb)`);
    await q.query(`DROP INDEX IF EXISTS tool_calls_open`);
  }
}
