import fc from 'fast-check';
import {
  percentile,
  QUICK_DECISION_MS,
  ReviewerDecision,
  reviewerStats,
  rubberStamps,
  RUBBER_STAMPING,
  timeToDecide,
} from './reviewer-quality';

const t0 = new Date('2026-11-01T10:00:00Z').getTime();
const at = (ms: number) => new Date(t0 + ms);

function decision(
  personId: string,
  outcome: 'approved' | 'rejected',
  decideMs: number,
  seenMs?: number,
): ReviewerDecision {
  return {
    personId,
    outcome,
    requestedAt: at(0),
    decidedAt: at((seenMs ?? 0) + decideMs),
    ...(seenMs !== undefined ? { firstSeenAt: at(seenMs) } : {}),
  };
}

describe('reviewer quality', () => {
  it('times a decision from the later of the request and the first view before it', () => {
    expect(timeToDecide({ requestedAt: at(0), decidedAt: at(5000) })).toBe(5000);
    expect(timeToDecide({ requestedAt: at(0), decidedAt: at(5000), firstSeenAt: at(4000) })).toBe(1000);
    // A view recorded before the request (impossible, clock skew) does not lengthen it.
    expect(timeToDecide({ requestedAt: at(1000), decidedAt: at(5000), firstSeenAt: at(0) })).toBe(4000);
    // A view after the decision (decided in Slack, opened later) is not when the card was shown.
    expect(timeToDecide({ requestedAt: at(0), decidedAt: at(5000), firstSeenAt: at(9000) })).toBe(5000);
  });

  it('has no rows for an empty window, and percentiles of nothing are null', () => {
    expect(reviewerStats([])).toEqual([]);
    expect(percentile([], 0.5)).toBeNull();
  });

  it('interpolates the median and p90 as percentile_cont does', () => {
    expect(percentile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(percentile([10], 0.9)).toBe(10);
    expect(percentile([0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100], 0.9)).toBe(90);
  });

  it('counts each person apart: decisions, approvals, rate, quick ones', () => {
    const stats = reviewerStats([
      decision('bob', 'approved', 500),
      decision('ann', 'approved', 30_000, 10_000),
      decision('bob', 'rejected', 1500),
      decision('bob', 'approved', 8000),
      decision('ann', 'rejected', 1000, 60_000),
    ]);
    expect(stats).toEqual([
      {
        personId: 'ann',
        decisions: 2,
        approvals: 1,
        rejections: 1,
        approveRate: 0.5,
        medianDecideMs: 15_500,
        p90DecideMs: 27_100,
        quickDecisions: 1,
        quickApprovals: 0,
      },
      {
        personId: 'bob',
        decisions: 3,
        approvals: 2,
        rejections: 1,
        approveRate: 2 / 3,
        medianDecideMs: 1500,
        p90DecideMs: 6700,
        quickDecisions: 2,
        quickApprovals: 1,
      },
    ]);
  });

  it('flags rubber-stamping only at the documented thresholds', () => {
    const n = RUBBER_STAMPING.minApprovals;
    const half = Math.ceil(n * RUBBER_STAMPING.minQuickShare);
    expect(rubberStamps({ approvals: n, quickApprovals: half })).toBe(true);
    expect(rubberStamps({ approvals: n, quickApprovals: half - 1 })).toBe(false);
    expect(rubberStamps({ approvals: n - 1, quickApprovals: n - 1 })).toBe(false);
    expect(rubberStamps({ approvals: 0, quickApprovals: 0 })).toBe(false);
  });

  const decisions = fc.array(
    fc.record({
      personId: fc.constantFrom('ann', 'bob', 'cy'),
      outcome: fc.constantFrom('approved' as const, 'rejected' as const),
      decideMs: fc.integer({ min: 0, max: 3_600_000 }),
      seenMs: fc.option(fc.integer({ min: -10_000, max: 3_600_000 }), { nil: undefined }),
    }),
    { maxLength: 60 },
  );

  it('property: the counts add up, and median ≤ p90 within the times seen', () => {
    fc.assert(
      fc.property(decisions, (ds) => {
        const rows = ds.map((d) => ({
          personId: d.personId,
          outcome: d.outcome,
          requestedAt: at(0),
          decidedAt: at(Math.max(0, d.seenMs ?? 0) + d.decideMs),
          ...(d.seenMs !== undefined ? { firstSeenAt: at(d.seenMs) } : {}),
        }));
        const stats = reviewerStats(rows);
        expect(stats.reduce((n, s) => n + s.decisions, 0)).toBe(rows.length);
        for (const s of stats) {
          const mine = rows.filter((r) => r.personId === s.personId);
          const times = mine.map(timeToDecide);
          expect(s.decisions).toBe(mine.length);
          expect(s.approvals + s.rejections).toBe(s.decisions);
          expect(s.approveRate).toBeGreaterThanOrEqual(0);
          expect(s.approveRate).toBeLessThanOrEqual(1);
          expect(s.medianDecideMs).toBeLessThanOrEqual(s.p90DecideMs);
          expect(s.medianDecideMs).toBeGreaterThanOrEqual(Math.min(...times));
          expect(s.p90DecideMs).toBeLessThanOrEqual(Math.max(...times));
          expect(s.quickDecisions).toBe(times.filter((t) => t < QUICK_DECISION_MS).length);
          expect(s.quickApprovals).toBeLessThanOrEqual(Math.min(s.quickDecisions, s.approvals));
        }
      }),
    );
  });

  it('property: every time to decide is at least 0 and at most decidedAt − requestedAt', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e7 }), fc.option(fc.integer({ min: -1e7, max: 2e7 })), (dec, seen) => {
        const ms = timeToDecide({
          requestedAt: at(0),
          decidedAt: at(dec),
          ...(seen !== null ? { firstSeenAt: at(seen) } : {}),
        });
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThanOrEqual(dec);
      }),
    );
  });
});
