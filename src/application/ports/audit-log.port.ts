import type { AuditPurge, PurgedRange } from '../../domain/audit/audit-purge.aggregate';
/** The audit trail as auditors read it (CONTRACT §9). Implemented over the events table. */
export const AUDIT_LOG = Symbol('AuditLog');

/** An event exactly as stored and hashed; `hash = sha256hex(prevHash + JCS(event without hash))`. */
export interface AuditEvent {
  seq: number;
  id: string;
  type: string;
  at: string;
  recordedAt: string;
  tenant: string;
  instanceId: string;
  correlationId?: string;
  conversationId?: string;
  toolCallId?: string;
  toolName?: string;
  actor: Record<string, unknown>;
  data: Record<string, unknown>;
  prevHash: string;
  hash: string;
}

export interface AuditFilter {
  tenantId: string;
  conversationId?: string;
  toolCallId?: string;
  toolName?: string;
  /** The actor's id (a person's sub, an agent's sub, `policy`, `system`). */
  actor?: string;
  types?: string[];
  /** `at` ≥ from */
  from?: Date;
  /** `at` < to */
  to?: Date;
  /** Only events after this seq (the cursor). */
  afterSeq?: number;
}

export interface VerifyResult {
  ok: boolean;
  checked: number;
  firstBadSeq?: number;
  /** What is wrong at firstBadSeq, for a person reading the answer. */
  problem?: string;
}

export interface DecisionStats {
  approvedCount: number;
  rejectedCount: number;
  timeoutCount: number;
  cancelledCount: number;
  autoApprovedCount: number;
  deniedCount: number;
  avgApprovalLatencyMs: number | null;
  p95ApprovalLatencyMs: number | null;
}

export interface ExecutionWithoutApproval {
  toolCallId: string;
  toolName: string;
  seq: number;
  level: string;
  destructive: boolean;
}

export interface AuditLog {
  /** One page in seq order: at most `limit` events matching the filter. */
  list(filter: AuditFilter, limit: number): Promise<AuditEvent[]>;
  /** The whole selection in seq order, a batch at a time, never all in memory. */
  scan(filter: AuditFilter, batchSize: number): AsyncIterable<AuditEvent[]>;
  /** Recomputes the tenant's hash chain from the first event. */
  verify(tenantId: string): Promise<VerifyResult>;
  /** The newest event of the tenant's chain (seq 0 and 64 zeros when empty). */
  head(tenantId: string): Promise<{ seq: number; hash: string }>;
  decisionStats(tenantId: string, from?: Date, to?: Date): Promise<DecisionStats>;
  pendingApprovals(tenantId: string, now: Date): Promise<number>;
  /** Confirm/manual-level or destructive calls that ran without a person's approval, in the window. */
  executionsWithoutApproval(tenantId: string, from?: Date, to?: Date): Promise<ExecutionWithoutApproval[]>;
  countByType(tenantId: string, types: string[], from?: Date, to?: Date): Promise<Record<string, number>>;
  /** Calls claimed in the window, before `claimedBefore`, whose outcome is not on record. */
  runsWithoutResult(tenantId: string, claimedBefore: Date, from?: Date, to?: Date): Promise<RunWithoutResult[]>;
}

export interface RunWithoutResult {
  toolCallId: string;
  toolName: string;
  /** The ToolCallExecuted event. */
  seq: number;
  claimedAt: Date;
}

export const AUDIT_RETENTION = Symbol('AuditRetention');

/** The write side of retention, inside the unit of work. */
export interface AuditRetentionStore {
  /** Deletes the tenant's oldest events with `at` before the cut-off, as a prefix in seq order; null when none. */
  purgeBefore(tenantId: string, before: Date): Promise<PurgedRange | null>;
  /** Appends the purge's AuditPurged event to the chain. */
  save(purge: AuditPurge): Promise<void>;
}
