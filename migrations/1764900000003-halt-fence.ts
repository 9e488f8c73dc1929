import { MigrationInterface, QueryRunner } from 'typeorm';
import { APPEND_FUNCTION as APPEND_FUNCTION_BEFORE } from './1764900000002-chain-head-at';

/**
 * A halt fences the chain: no call is proposed or claimed once a halt that covers it is committed.
 *
 * A proposal or a claim reads its conversation and the halts in force, then writes in one statement. A halt
 * committed between that read and that write was not seen: the optimistic save still matched the conversation's
 * version (a halt changes only conversations that hold open calls), so a call could be proposed, approved by the
 * policy and claimed after the halt, and run.
 *
 * Every write of a tenant appends to its chain, and `tollgate_append_events` takes the chain head's row lock first.
 * A halt appends its `HaltStarted` in the transaction that inserts its row, so once the head's lock is had, the halt
 * is committed or not started; each statement of a plpgsql function takes a fresh snapshot under READ COMMITTED,
 * so the check below, made after the lock, sees every halt committed before this append. An append that records
 * a `ToolCallProposed` or a `ToolCallExecuted` covered by a halt (the tenant's, its agent's, its conversation's)
 * fails with 40001: the command runs again from a fresh read, sees the halt and is refused as a halt refuses it.
 * Nothing else is fenced: results, decisions and cancellations are recorded during a halt as before.
 */
export class HaltFence1764900000003 implements MigrationInterface {
  name = 'HaltFence1764900000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(APPEND_FUNCTION);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(APPEND_FUNCTION_BEFORE);
  }
}

const APPEND_FUNCTION = `
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
    -- After the head's lock: every halt committed before this append is seen (see the migration's comment).
    IF EXISTS (
      SELECT 1 FROM jsonb_array_elements(p_events) x
        JOIN halts h ON h.tenant_id = p_tenant
         AND ((h.scope = 'tenant' AND h.scope_id = '')
           OR (h.scope = 'conversation' AND h.scope_id = x->>'conversationId')
           OR (h.scope = 'agent' AND h.scope_id = x->'actor'->>'id'))
       WHERE x->>'type' IN ('ToolCallProposed', 'ToolCallExecuted')
    ) THEN
      RAISE EXCEPTION 'a halt came into force after this work read its conversation' USING ERRCODE = '40001';
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
