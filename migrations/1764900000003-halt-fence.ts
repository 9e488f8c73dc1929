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

/** After the head's lock: the halts committed before this append (see the comment above). */
const FENCE = `
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
    END IF;`;

/** 1764900000002's function with the fence after its lock of the head (and before its first append). */
const APPEND_FUNCTION = withFence(APPEND_FUNCTION_BEFORE);

function withFence(fn: string): string {
  const lockTaken = `FOR UPDATE;
    END IF;`;
  if (fn.split(lockTaken).length !== 2)
    throw new Error('tollgate_append_events: the lock of the head is not where the fence goes');
  return fn.replace(lockTaken, `${lockTaken}${FENCE}`);
}
