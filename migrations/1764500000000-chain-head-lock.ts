import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `tollgate_append_events` took the chain head's lock with `INSERT … ON CONFLICT DO UPDATE`, which writes a
 * new version of the head row on every append, on top of the UPDATE that moves it: two dead tuples per
 * commit on one hot row. `SELECT … FOR UPDATE` locks without a new version; the row is inserted once.
 *
 * Also `tool_calls_pending_by_conversation`: commands load a conversation's pending calls (not every open
 * one: approved calls an agent never claims would otherwise pile up in every proposal's read).
 */
export class ChainHeadLock1764500000000 implements MigrationInterface {
  name = 'ChainHeadLock1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX tool_calls_pending_by_conversation ON tool_calls (tenant_id, conversation_id) WHERE status = 'pending'`,
    );
    await q.query(
      appendFunction(`
        SELECT h.seq, h.hash INTO v_seq, v_hash FROM audit_heads h WHERE h.tenant_id = p_tenant FOR UPDATE;
        IF NOT FOUND THEN
          INSERT INTO audit_heads (tenant_id, seq, hash) VALUES (p_tenant, 0, repeat('0', 64)) ON CONFLICT (tenant_id) DO NOTHING;
          SELECT h.seq, h.hash INTO v_seq, v_hash FROM audit_heads h WHERE h.tenant_id = p_tenant FOR UPDATE;
        END IF;`),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS tool_calls_pending_by_conversation`);
    await q.query(
      appendFunction(`
        INSERT INTO audit_heads AS h (tenant_id, seq, hash) VALUES (p_tenant, 0, repeat('0', 64))
          ON CONFLICT (tenant_id) DO UPDATE SET tenant_id = EXCLUDED.tenant_id
          RETURNING h.seq, h.hash INTO v_seq, v_hash;`),
    );
  }
}

function appendFunction(lockHead: string): string {
  return `
      CREATE OR REPLACE FUNCTION tollgate_append_events(p_tenant text, p_events jsonb)
      RETURNS TABLE (out_seq bigint, out_prev_hash text, out_hash text)
      LANGUAGE plpgsql AS $fn$
      DECLARE
        v_seq  bigint;
        v_hash text;
        v_new  text;
        e      jsonb;
      BEGIN
        ${lockHead}
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
}
