import { Query } from '@nestjs/cqrs';
import { AuditEvent, AuditFilter, DecisionStats, VerifyResult } from '../../ports/audit-log.port';
import type { ReviewerStats } from '../../../domain/audit/reviewer-quality';

type Window = { from?: Date; to?: Date };

/** What verify answers; with a checkpoint, also the checkpoint it was held against. */
export type VerifyAnswer = VerifyResult & {
  checkpoint?: CheckpointClaims & {
    kid: string;
    purged?: true;
    /** `request`: the one given; `sink`: the latest the scheduler wrote to the file sink (TOLLGATE_CHECKPOINT_SINK). */
    source: 'request' | 'sink';
    /** For `sink`: the checkpoint's file name in the tenant's directory. */
    name?: string;
  };
  /** Without a checkpoint given: why none from the sink was used (no sink, an https sink, none written yet). */
  noCheckpoint?: string;
};

export interface CheckpointClaims {
  tenant: string;
  seq: number;
  hash: string;
  at: string;
}

/** The chain's head, signed: `jws` holds the other fields. */
export interface AuditCheckpoint extends CheckpointClaims {
  jws: string;
}

/** Decision counts in the window; `pendingApprovals` is now, whatever the window. */
export interface AuditMetrics extends DecisionStats {
  pendingApprovals: number;
}

export interface GapFinding {
  code: 'HITL-EXEC' | 'HITL-01' | 'HITL-02' | 'HITL-03' | 'RUN-01';
  severity: 'critical' | 'high' | 'medium';
  toolName?: string;
  toolCallId?: string;
  /** HITL-03: the person whose approvals look rubber-stamped. */
  personId?: string;
  detail: string;
}

/** A page of the tenant's audit trail in seq order; the cursor is the last seq seen. */
export class ListAuditEventsQuery extends Query<{ events: AuditEvent[]; nextCursor: string | null }> {
  constructor(
    readonly filter: AuditFilter,
    readonly limit: number,
  ) {
    super();
  }
}

/** The same selection as a stream of batches, for NDJSON and CSV exports. */
export class ExportAuditEventsQuery extends Query<AsyncIterable<AuditEvent[]>> {
  constructor(readonly filter: AuditFilter) {
    super();
  }
}

/** Recomputes the chain; with a checkpoint (a compact JWS from AuditCheckpointQuery), also checks the chain still reaches it. */
export class VerifyAuditTrailQuery extends Query<VerifyAnswer> {
  constructor(
    readonly tenantId: string,
    readonly checkpoint?: string,
  ) {
    super();
  }
}

export class AuditCheckpointQuery extends Query<AuditCheckpoint> {
  constructor(readonly tenantId: string) {
    super();
  }
}

export class AuditMetricsQuery extends Query<AuditMetrics> {
  constructor(
    readonly tenantId: string,
    readonly window: Window,
  ) {
    super();
  }
}

export class AuditGapsQuery extends Query<{ findings: GapFinding[] }> {
  constructor(
    readonly tenantId: string,
    readonly window: Window,
  ) {
    super();
  }
}

/** One person's decisions in the window (issue 28, part 9); `rubberStamping` is HITL-03's test. */
export interface ReviewerRow extends ReviewerStats {
  rubberStamping: boolean;
  /**
   * Decisions with no view of the card recorded before them (by a link, from the list without opening the card, by
   * a client that never fetched the call): timed from the request, which may flatter them.
   */
  unviewedDecisions: number;
  /** unviewedDecisions / decisions, 0 to 1: a channel that records no view shows here. */
  unviewedShare: number;
}

export interface AuditReviewers {
  reviewers: ReviewerRow[];
  /** More decisions were in the window than one answer weighs (REVIEWER_DECISIONS_LIMIT): narrow it. */
  truncated: boolean;
  thresholds: { quickMs: number; minApprovals: number; minQuickShare: number };
}

/** Per person who decided held calls in the window: counts, approve rate, time to decide. */
export class AuditReviewersQuery extends Query<AuditReviewers> {
  constructor(
    readonly tenantId: string,
    readonly window: Window,
  ) {
    super();
  }
}
