import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  AuditEvent,
  AuditFilter,
  AuditLog,
  DecisionStats,
  ExecutionWithoutApproval,
  RunWithoutResult,
  VerifyResult,
} from '../../application/ports/audit-log.port';
import { eventHash, eventJsonFromRow, GENESIS_HASH } from './event-store';

const RUNS_WITHOUT_RESULT_LIMIT = 1000;
import { EventRow } from './orm-entities';

const VERIFY_BATCH = 5000;
/** Events hashed between two turns of the event loop during verify (≈ 50 ms here), so other requests go on. */
const YIELD_EVERY = 500;

export const COLUMNS = `e.tenant_id, e.seq, e.id, e.type, e.at, e.recorded_at, e.instance_id, e.correlation_id, e.conversation_id,
  e.tool_call_id, e.tool_name, e.actor, e.data, e.prev_hash, e.hash`;

export interface RawEvent {
  tenant_id: string;
  seq: string;
  id: string;
  type: string;
  at: Date;
  recorded_at: Date;
  instance_id: string;
  correlation_id: string | null;
  conversation_id: string | null;
  tool_call_id: string | null;
  tool_name: string | null;
  actor: Record<string, unknown>;
  data: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}

export function fromRaw(r: RawEvent): EventRow {
  return Object.assign(new EventRow(), {
    tenantId: r.tenant_id,
    seq: String(r.seq),
    id: r.id,
    type: r.type,
    at: new Date(r.at),
    recordedAt: new Date(r.recorded_at),
    instanceId: r.instance_id,
    correlationId: r.correlation_id,
    conversationId: r.conversation_id,
    toolCallId: r.tool_call_id,
    toolName: r.tool_name,
    actor: r.actor,
    data: r.data,
    prevHash: r.prev_hash,
    hash: r.hash,
  });
}

/** The WHERE clause of an audit selection; every branch is served by an index led by tenant_id. */
/** A time window as the seq range it spans (`at` rises with `seq`), so pages walk a seq range, not the whole key. */
export interface SeqRange {
  lo: number;
  hi: number;
}

function where(f: AuditFilter, range?: SeqRange | null): { sql: string; params: unknown[] } {
  const params: unknown[] = [f.tenantId];
  const c = ['e.tenant_id = $1'];
  if (f.conversationId !== undefined) c.push(`e.conversation_id = $${params.push(f.conversationId)}`);
  if (f.toolCallId !== undefined) c.push(`e.tool_call_id = $${params.push(f.toolCallId)}`);
  if (f.toolName !== undefined) c.push(`e.tool_name = $${params.push(f.toolName)}`);
  if (f.actor !== undefined) c.push(`(e.actor->>'id') = $${params.push(f.actor)}`);
  // One type as `=`: the planner then uses events_by_type, which it will not for ANY().
  if (f.types?.length === 1) c.push(`e.type = $${params.push(f.types[0])}`);
  else if (f.types?.length) c.push(`e.type = ANY($${params.push(f.types)}::text[])`);
  if (f.from) c.push(`e.at >= $${params.push(f.from)}`);
  if (f.to) c.push(`e.at < $${params.push(f.to)}`);
  if (f.afterSeq !== undefined) c.push(`e.seq > $${params.push(f.afterSeq)}`);
  if (range) c.push(`e.seq BETWEEN $${params.push(range.lo)} AND $${params.push(range.hi)}`);
  return { sql: c.join(' AND '), params };
}

/**
 * The SQL of one page of `list`, exported so tests and the benchmark EXPLAIN exactly what the service sends.
 * `events` is partitioned by month of `at` (migration 1764700000000): with `from`/`to` the `at` conditions let
 * PostgreSQL scan only the months of the window; without them every month is scanned, each by its own index
 * in seq order, merged.
 */
export function pageQuery(
  filter: AuditFilter,
  limit: number,
  range?: SeqRange | null,
): { sql: string; params: unknown[] } {
  const w = where(filter, range);
  return {
    sql: `SELECT ${COLUMNS} FROM events e WHERE ${w.sql} ORDER BY e.seq LIMIT $${w.params.push(limit)}`,
    params: w.params,
  };
}

/** The seq bounds of a time window (see `seqRange`); undefined without a window. Pruned to the window's months too. */
export function seqRangeQuery(f: AuditFilter): { sql: string; params: unknown[] } | undefined {
  if (!f.from && !f.to) return undefined;
  const params: unknown[] = [f.tenantId];
  const c = ['tenant_id = $1'];
  if (f.from) c.push(`at >= $${params.push(f.from)}`);
  if (f.to) c.push(`at < $${params.push(f.to)}`);
  return {
    sql: `SELECT min(seq) AS lo, max(seq) AS hi FROM (SELECT seq FROM events WHERE ${c.join(' AND ')} OFFSET 0) s`,
    params,
  };
}

function window(tenantId: string, from?: Date, to?: Date) {
  const params: unknown[] = [tenantId];
  const c = ['tenant_id = $1'];
  if (from) c.push(`at >= $${params.push(from)}`);
  if (to) c.push(`at < $${params.push(to)}`);
  return { sql: c.join(' AND '), params };
}

@Injectable()
export class SqlAuditLog implements AuditLog {
  constructor(private readonly dataSource: DataSource) {}

  async list(filter: AuditFilter, limit: number, range?: SeqRange | null): Promise<AuditEvent[]> {
    if (range === undefined) range = await this.seqRange(filter);
    if (range === null && (filter.from || filter.to)) return []; // nothing in the window
    const page = pageQuery(filter, limit, range);
    const rows: RawEvent[] = await this.dataSource.query(page.sql, page.params);
    return rows.map((r) => eventJsonFromRow(fromRaw(r)));
  }

  async *scan(filter: AuditFilter, batchSize: number): AsyncIterable<AuditEvent[]> {
    // Keyset batches: each is one short query, so an export of millions holds one batch in memory at a time.
    let afterSeq = filter.afterSeq;
    const range = await this.seqRange(filter); // once per export, not per batch
    if (range === null && (filter.from || filter.to)) return;
    for (;;) {
      const batch = await this.list({ ...filter, afterSeq }, batchSize, range);
      if (batch.length === 0) return;
      yield batch;
      if (batch.length < batchSize) return;
      afterSeq = batch[batch.length - 1].seq;
    }
  }

  /**
   * The seq range of a time window, from events_by_time alone; undefined without a window, null when the
   * window is empty. The `at` conditions stay in the page query, so this only narrows the scan.
   */
  private async seqRange(f: AuditFilter): Promise<SeqRange | null | undefined> {
    const q = seqRangeQuery(f);
    if (!q) return undefined;
    const [r] = await this.dataSource.query(q.sql, q.params);
    return r.lo === null ? null : { lo: Number(r.lo), hi: Number(r.hi) };
  }

  /**
   * Recomputes the chain up to the head as it stood when verify began: events appended meanwhile are left for
   * the next run instead of looking like a tail that does not match its head. Hashing yields to the event loop
   * every few hundred events, and the next batch is read while this one is hashed.
   */
  async verify(tenantId: string): Promise<VerifyResult> {
    const head = await this.head(tenantId);
    const start = await this.chainStart(tenantId);
    if (!('expectedSeq' in start)) return start;
    let { expectedSeq, prevHash } = start;
    let checked = 0;
    const read = (from: number): Promise<EventRow[]> =>
      this.dataSource
        .query(
          `SELECT ${COLUMNS} FROM events e WHERE e.tenant_id = $1 AND e.seq >= $2 AND e.seq <= $3 ORDER BY e.seq LIMIT $4`,
          [tenantId, from, head.seq, VERIFY_BATCH],
        )
        .then((raw: RawEvent[]) => raw.map(fromRaw));
    let next: Promise<EventRow[]> | null = expectedSeq <= head.seq ? read(expectedSeq) : null;
    while (next) {
      const rows = await next;
      const last = rows.length > 0 ? Number(rows[rows.length - 1].seq) : head.seq;
      next = rows.length === VERIFY_BATCH && last < head.seq ? read(last + 1) : null;
      next?.catch(() => undefined); // a failure found below leaves it unread; its own error is raised when awaited
      for (let i = 0; i < rows.length; i++) {
        if (i > 0 && i % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
        const { hash, ...event } = eventJsonFromRow(rows[i]);
        const bad = (problem: string): VerifyResult => ({ ok: false, checked, firstBadSeq: event.seq, problem });
        if (event.seq !== expectedSeq)
          return { ok: false, checked, firstBadSeq: expectedSeq, problem: `event ${expectedSeq} is missing` };
        if (event.prevHash !== prevHash) return bad('prevHash does not match the hash of the event before it');
        if (eventHash(prevHash, event) !== hash)
          return bad('the event does not hash to its recorded hash: it was altered');
        prevHash = hash;
        expectedSeq += 1;
        checked += 1;
      }
    }
    // The head row must agree with the last event, or events were removed from the end.
    if (head.seq !== expectedSeq - 1 || (checked > 0 && head.hash !== prevHash)) {
      return {
        ok: false,
        checked,
        firstBadSeq: expectedSeq,
        problem: `the chain head says seq ${head.seq}, the table ends at ${expectedSeq - 1}`,
      };
    }
    return { ok: true, checked };
  }

  /**
   * Where the chain starts: seq 1 from 64 zeros, or — after a retention purge — the first kept event,
   * whose prevHash must be the one an AuditPurged event recorded for exactly the events before it.
   */
  private async chainStart(tenantId: string): Promise<{ expectedSeq: number; prevHash: string } | VerifyResult> {
    const [first] = await this.dataSource.query(
      `SELECT seq, prev_hash FROM events WHERE tenant_id = $1 ORDER BY seq LIMIT 1`,
      [tenantId],
    );
    if (!first || Number(first.seq) === 1) return { expectedSeq: 1, prevHash: GENESIS_HASH };
    const seq = Number(first.seq);
    const [anchor] = await this.dataSource.query(
      `SELECT seq FROM events WHERE tenant_id = $1 AND type = 'AuditPurged' AND (data->>'lastPurgedSeq')::bigint = $2 AND data->>'lastPurgedHash' = $3 LIMIT 1`,
      [tenantId, seq - 1, first.prev_hash],
    );
    if (!anchor)
      return {
        ok: false,
        checked: 0,
        firstBadSeq: 1,
        problem: `events 1 to ${seq - 1} are missing and no retention purge accounts for them`,
      };
    return { expectedSeq: seq, prevHash: first.prev_hash };
  }

  async head(tenantId: string): Promise<{ seq: number; hash: string }> {
    const [row] = await this.dataSource.query(`SELECT seq, hash FROM audit_heads WHERE tenant_id = $1`, [tenantId]);
    return row ? { seq: Number(row.seq), hash: row.hash } : { seq: 0, hash: GENESIS_HASH };
  }

  async decisionStats(tenantId: string, from?: Date, to?: Date): Promise<DecisionStats> {
    const w = window(tenantId, from, to);
    // People decide through ToolCallApproved / ToolCallRejected with a `via` other than `policy`.
    const [r] = await this.dataSource.query(
      `WITH ev AS (SELECT type, data FROM events WHERE ${w.sql} AND type IN
          ('ToolCallApproved','ToolCallRejected','ToolCallExpired','ToolCallCancelled','ToolCallAutoApproved')),
        people AS (SELECT (data->>'latencyMs')::double precision AS latency FROM ev
          WHERE type = 'ToolCallApproved' OR (type = 'ToolCallRejected' AND data->>'via' <> 'policy'))
       SELECT
         count(*) FILTER (WHERE type = 'ToolCallApproved') AS approved,
         count(*) FILTER (WHERE type = 'ToolCallRejected' AND data->>'via' <> 'policy') AS rejected,
         count(*) FILTER (WHERE type = 'ToolCallRejected' AND data->>'via' = 'policy') AS denied,
         count(*) FILTER (WHERE type = 'ToolCallExpired') AS expired,
         count(*) FILTER (WHERE type = 'ToolCallCancelled') AS cancelled,
         count(*) FILTER (WHERE type = 'ToolCallAutoApproved') AS auto,
         (SELECT avg(latency) FROM people) AS avg_latency,
         (SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY latency) FROM people) AS p95_latency
       FROM ev`,
      w.params,
    );
    const num = (v: unknown) => (v === null || v === undefined ? null : Math.round(Number(v)));
    return {
      approvedCount: Number(r.approved),
      rejectedCount: Number(r.rejected),
      timeoutCount: Number(r.expired),
      cancelledCount: Number(r.cancelled),
      autoApprovedCount: Number(r.auto),
      deniedCount: Number(r.denied),
      avgApprovalLatencyMs: num(r.avg_latency),
      p95ApprovalLatencyMs: num(r.p95_latency),
    };
  }

  async pendingApprovals(tenantId: string, now: Date): Promise<number> {
    const [r] = await this.dataSource.query(
      `SELECT count(*) AS n FROM tool_calls WHERE tenant_id = $1 AND status = 'pending' AND expires_at > $2`,
      [tenantId, now],
    );
    return Number(r.n);
  }

  async executionsWithoutApproval(tenantId: string, from?: Date, to?: Date): Promise<ExecutionWithoutApproval[]> {
    const params: unknown[] = [tenantId];
    const c = [`x.tenant_id = $1`, `x.type = 'ToolCallExecuted'`];
    if (from) c.push(`x.at >= $${params.push(from)}`);
    if (to) c.push(`x.at < $${params.push(to)}`);
    // A standing grant is a person's approval given in advance; anything else must have a ToolCallApproved.
    const rows: Array<{
      tool_call_id: string;
      tool_name: string;
      seq: string;
      level: string;
      destructive: boolean | null;
    }> = await this.dataSource.query(
      `SELECT x.tool_call_id, x.tool_name, x.seq, p.data->'policy'->>'level' AS level, (p.data->'toolFlags'->>'destructive')::boolean AS destructive
         FROM events x
         JOIN events p ON p.tenant_id = x.tenant_id AND p.tool_call_id = x.tool_call_id AND p.type = 'ToolCallProposed'
        WHERE ${c.join(' AND ')}
          AND (p.data->'policy'->>'level' IN ('confirm', 'manual') OR (p.data->'toolFlags'->>'destructive')::boolean IS TRUE)
          AND NOT EXISTS (SELECT 1 FROM events a WHERE a.tenant_id = x.tenant_id AND a.tool_call_id = x.tool_call_id
                            AND (a.type = 'ToolCallApproved' OR (a.type = 'ToolCallAutoApproved' AND a.data ? 'grantId')))
        ORDER BY x.seq`,
      params,
    );
    return rows.map((r) => ({
      toolCallId: r.tool_call_id,
      toolName: r.tool_name,
      seq: Number(r.seq),
      level: r.level,
      destructive: r.destructive === true,
    }));
  }

  /** The first this many (a finding each); a trail with more has a problem no longer list shows better. */
  async runsWithoutResult(tenantId: string, claimedBefore: Date, from?: Date, to?: Date): Promise<RunWithoutResult[]> {
    const params: unknown[] = [tenantId, claimedBefore];
    const c = [`x.tenant_id = $1`, `x.type = 'ToolCallExecuted'`, `x.at < $2`];
    if (from) c.push(`x.at >= $${params.push(from)}`);
    if (to) c.push(`x.at < $${params.push(to)}`);
    const rows: Array<{ tool_call_id: string; tool_name: string; seq: string; at: Date }> = await this.dataSource.query(
      `SELECT x.tool_call_id, x.tool_name, x.seq, x.at FROM events x
        WHERE ${c.join(' AND ')}
          AND NOT EXISTS (SELECT 1 FROM events r WHERE r.tenant_id = x.tenant_id AND r.tool_call_id = x.tool_call_id
                            AND r.type = 'ToolCallCompleted')
        ORDER BY x.seq
        LIMIT ${RUNS_WITHOUT_RESULT_LIMIT}`,
      params,
    );
    return rows.map((r) => ({
      toolCallId: r.tool_call_id,
      toolName: r.tool_name,
      seq: Number(r.seq),
      claimedAt: new Date(r.at),
    }));
  }

  async countByType(tenantId: string, types: string[], from?: Date, to?: Date): Promise<Record<string, number>> {
    const w = window(tenantId, from, to);
    const rows: Array<{ type: string; n: string }> = await this.dataSource.query(
      `SELECT type, count(*) AS n FROM events WHERE ${w.sql} AND type = ANY($${w.params.push(types)}::text[]) GROUP BY type`,
      w.params,
    );
    return Object.fromEntries(types.map((t) => [t, Number(rows.find((r) => r.type === t)?.n ?? 0)]));
  }
}
