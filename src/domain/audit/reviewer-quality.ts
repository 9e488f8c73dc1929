/**
 * How people decide (issue 28, part 9): per person who decided held calls in a window, their decisions, approve
 * rate and time to decide, and whether their approvals look like rubber-stamping (HITL-03). Pure: the rows come
 * from the audit trail and the server's record of when each person was first shown a call (call_views).
 */

/** A decision is "quick" when made within this long of the card being shown. */
export const QUICK_DECISION_MS = 2_000;

/** HITL-03 thresholds: at least `minApprovals` approvals in the window, and at least `minQuickShare` of them quick. */
export const RUBBER_STAMPING = { minApprovals: 10, minQuickShare: 0.5 } as const;

/** One person's decision on one held call, as recorded. */
export interface ReviewerDecision {
  personId: string;
  outcome: 'approved' | 'rejected';
  /** When the call asked for a person (its creation). */
  requestedAt: Date;
  /** When the decision was recorded. */
  decidedAt: Date;
  /** When this person was first shown the call's card, by the server's record; absent when never recorded. */
  firstSeenAt?: Date;
}

export interface ReviewerStats {
  personId: string;
  decisions: number;
  approvals: number;
  rejections: number;
  /** approvals / decisions, 0 to 1 (a person listed has decided at least once). */
  approveRate: number;
  /** Time to decide, in whole milliseconds. */
  medianDecideMs: number;
  p90DecideMs: number;
  /** Decisions (approvals and rejections) made within QUICK_DECISION_MS of being shown. */
  quickDecisions: number;
  /** Approvals made within QUICK_DECISION_MS of being shown. */
  quickApprovals: number;
}

/**
 * Time to decide: from when the card was shown to this person — the later of the request and their first
 * recorded view, a view after the decision not counting — to the decision; never negative.
 */
export function timeToDecide(d: Pick<ReviewerDecision, 'requestedAt' | 'decidedAt' | 'firstSeenAt'>): number {
  const decided = d.decidedAt.getTime();
  const seen = d.firstSeenAt && d.firstSeenAt.getTime() <= decided ? d.firstSeenAt.getTime() : -Infinity;
  return Math.max(0, decided - Math.max(d.requestedAt.getTime(), seen));
}

/** The p-th percentile (0 ≤ p ≤ 1) of ascending values, interpolated as PostgreSQL's percentile_cont; null when empty. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const at = p * (sorted.length - 1);
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

/** Per person, in order of their ids; no decisions, no rows. */
export function reviewerStats(decisions: readonly ReviewerDecision[]): ReviewerStats[] {
  const byPerson = new Map<string, { approvals: number; quick: number; quickApprovals: number; times: number[] }>();
  for (const d of decisions) {
    const s = byPerson.get(d.personId) ?? { approvals: 0, quick: 0, quickApprovals: 0, times: [] };
    const ms = timeToDecide(d);
    const quick = ms < QUICK_DECISION_MS;
    s.times.push(ms);
    if (quick) s.quick++;
    if (d.outcome === 'approved') {
      s.approvals++;
      if (quick) s.quickApprovals++;
    }
    byPerson.set(d.personId, s);
  }
  return [...byPerson.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([personId, s]) => {
      const times = s.times.sort((a, b) => a - b);
      return {
        personId,
        decisions: times.length,
        approvals: s.approvals,
        rejections: times.length - s.approvals,
        approveRate: s.approvals / times.length,
        medianDecideMs: Math.round(percentile(times, 0.5)!),
        p90DecideMs: Math.round(percentile(times, 0.9)!),
        quickDecisions: s.quick,
        quickApprovals: s.quickApprovals,
      };
    });
}

/** HITL-03: many approvals, a large share of them made within QUICK_DECISION_MS of the card being shown. */
export function rubberStamps(s: Pick<ReviewerStats, 'approvals' | 'quickApprovals'>): boolean {
  return s.approvals >= RUBBER_STAMPING.minApprovals && s.quickApprovals >= RUBBER_STAMPING.minQuickShare * s.approvals;
}
