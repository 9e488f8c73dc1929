import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CallViews, MAX_CALLS_PER_VIEW, MAX_VIEWERS_PER_CALL } from '../../application/ports/call-views.port';
import type { ReviewerDecision } from '../../domain/audit/reviewer-quality';

/** call_views (issue 28, part 9): insert-once rows, and the decisions of a window joined with them. */
@Injectable()
export class SqlCallViews implements CallViews {
  private readonly log = new Logger('CallViews');

  constructor(private readonly dataSource: DataSource) {}

  async seen(tenantId: string, callIds: readonly string[], personId: string, at: Date): Promise<void> {
    const ids = [...new Set(callIds)].filter((id) => id.length <= 256).slice(0, MAX_CALLS_PER_VIEW);
    if (ids.length === 0 || personId.length === 0 || personId.length > 256) return;
    try {
      await this.dataSource.query(
        `INSERT INTO call_views (tenant_id, call_id, person_id, first_seen_at)
         SELECT $1, c.id, $3, $4 FROM unnest($2::text[]) AS c(id)
          WHERE (SELECT count(*) FROM call_views v WHERE v.tenant_id = $1 AND v.call_id = c.id) < ${MAX_VIEWERS_PER_CALL}
         ON CONFLICT DO NOTHING`,
        [tenantId, ids, personId, at],
      );
    } catch (e) {
      // A view not recorded makes a decision look quicker, never a request fail.
      this.log.warn(`could not record a view of ${ids.length} call(s): ${(e as Error).message}`);
    }
  }

  async decisions(tenantId: string, window: { from?: Date; to?: Date }, limit: number): Promise<ReviewerDecision[]> {
    const params: unknown[] = [tenantId];
    const c = [
      'e.tenant_id = $1',
      `e.type IN ('ToolCallApproved', 'ToolCallApprovalRecorded', 'ToolCallRejected')`,
      `NOT (e.type = 'ToolCallRejected' AND e.data->>'via' = 'policy')`,
    ];
    if (window.from) c.push(`e.at >= $${params.push(window.from)}`);
    if (window.to) c.push(`e.at < $${params.push(window.to)}`);
    const rows: Array<{
      person: string | null;
      type: string;
      at: Date;
      requested_at: Date | null;
      latency_ms: string | null;
      first_seen_at: Date | null;
    }> = await this.dataSource.query(
      `SELECT d.person, d.type, d.at, t.created_at AS requested_at, d.latency_ms, v.first_seen_at
         FROM (SELECT e.seq, e.type, e.at, e.tool_call_id, e.data->>'latencyMs' AS latency_ms,
                      COALESCE(e.data->>'approvedBy', e.data->>'rejectedBy') AS person
                 FROM events e WHERE ${c.join(' AND ')} ORDER BY e.seq LIMIT $${params.push(limit)}) d
         LEFT JOIN tool_calls t ON t.tenant_id = $1 AND t.id = d.tool_call_id
         LEFT JOIN call_views v ON v.tenant_id = $1 AND v.call_id = d.tool_call_id AND v.person_id = d.person
        ORDER BY d.seq`,
      params,
    );
    return rows.flatMap((r) => {
      if (!r.person) return [];
      const decidedAt = new Date(r.at);
      // The call row gives the request time; should it be gone, the decision's own latency does.
      const requestedAt = r.requested_at
        ? new Date(r.requested_at)
        : new Date(decidedAt.getTime() - Math.max(0, Number(r.latency_ms ?? 0)));
      return [
        {
          personId: r.person,
          outcome: r.type === 'ToolCallRejected' ? ('rejected' as const) : ('approved' as const),
          requestedAt,
          decidedAt,
          ...(r.first_seen_at ? { firstSeenAt: new Date(r.first_seen_at) } : {}),
        },
      ];
    });
  }
}
