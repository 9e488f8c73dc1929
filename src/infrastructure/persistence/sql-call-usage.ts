import { Injectable } from '@nestjs/common';
import {
  CallUsageReader,
  TransactionRequired,
  UsageScope,
  UsageWindow,
  WindowUsage,
} from '../../application/ports/call-usage.port';
import { TypeOrmUnitOfWork } from './unit-of-work';

/** A tool-name glob as a LIKE pattern: `*` any run, `?` one character, the rest literal (`%`, `_`, `\` escaped). */
export function likeOfGlob(glob: string): string {
  return glob
    .replace(/[\\%_]/g, (c) => `\\${c}`)
    .replace(/\*/g, '%')
    .replace(/\?/g, '_');
}

/**
 * Every window in one statement: the calls of the tenant proposed since `now - per` whose tool name the window's
 * glob matches, in its scope; the cost of those not refused (rejected, expired, cancelled) summed. The agent's
 * calls are those of its conversations.
 */
const USAGE = `
SELECT w.i::int AS i, count(t.status)::int AS calls,
       coalesce(sum(t.estimated_cost) FILTER (WHERE t.status NOT IN ('rejected', 'expired', 'cancelled')), 0)::float8 AS cost
FROM unnest($2::text[], $3::text[], $4::int[]) WITH ORDINALITY AS w(tool_like, scope, per, i)
LEFT JOIN LATERAL (
  SELECT tc.status, tc.estimated_cost FROM tool_calls tc
  WHERE tc.tenant_id = $1
    AND tc.created_at > $5::timestamptz - make_interval(secs => w.per)
    AND tc.tool_name LIKE w.tool_like
    AND (w.scope = 'tenant'
      OR (w.scope = 'conversation' AND tc.conversation_id = $6)
      OR (w.scope = 'agent' AND EXISTS (
            SELECT 1 FROM conversations c WHERE c.tenant_id = $1 AND c.id = tc.conversation_id AND c.agent_id = $7)))
) t ON true
GROUP BY w.i
ORDER BY w.i`;

/**
 * Counts for velocity and budget triggers. Each scope a window counts is locked first (a transaction-level
 * advisory lock, in a fixed order so two proposals never wait on each other crosswise) and stays locked until the
 * proposal commits: the next proposal in that scope, on any instance, counts after it.
 */
@Injectable()
export class SqlCallUsage implements CallUsageReader {
  constructor(private readonly uow: TypeOrmUnitOfWork) {}

  async usage(tenantId: string, scope: UsageScope, windows: readonly UsageWindow[], now: Date): Promise<WindowUsage[]> {
    if (windows.length === 0) return [];
    if (!this.uow.inTransaction) throw new TransactionRequired('velocity and budget triggers count under a lock');
    const keys = [
      ...new Set(
        windows.map((w) =>
          JSON.stringify([
            'tollgate-usage',
            tenantId,
            w.by,
            w.by === 'agent' ? scope.agentId : w.by === 'conversation' ? scope.conversationId : '',
          ]),
        ),
      ),
    ].sort();
    const manager = this.uow.manager();
    for (const key of keys) await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [key]);
    const rows: Array<{ i: number; calls: number; cost: number }> = await manager.query(USAGE, [
      tenantId,
      windows.map((w) => likeOfGlob(w.toolGlob)),
      windows.map((w) => w.by),
      windows.map((w) => w.per),
      now.toISOString(),
      scope.conversationId,
      scope.agentId,
    ]);
    return rows.map((r) => ({ calls: Number(r.calls), cost: Number(r.cost) }));
  }
}
