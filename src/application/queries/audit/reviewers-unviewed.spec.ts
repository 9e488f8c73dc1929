import { AuditReviewersHandler } from './audit.handlers';
import { AuditReviewersQuery } from './audit.queries';
import type { CallViews } from '../../ports/call-views.port';
import type { ReviewerDecision } from '../../../domain/audit/reviewer-quality';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 10, 0, s));

function handler(decisions: ReviewerDecision[]) {
  const views: CallViews = { seen: async () => undefined, decisions: async () => decisions };
  return new AuditReviewersHandler(views);
}

describe('reviewers: decisions made with no view of the card recorded', () => {
  it('are counted per person as unviewedDecisions / unviewedShare; a view after the decision does not count', async () => {
    const d = (personId: string, firstSeenAt?: Date): ReviewerDecision => ({
      personId,
      outcome: 'approved',
      requestedAt: at(0),
      decidedAt: at(30),
      ...(firstSeenAt ? { firstSeenAt } : {}),
    });
    const answer = await handler([
      d('cara', at(5)),
      d('cara', at(10)),
      d('link', undefined),
      d('link', undefined),
      d('link', at(40)), // opened after deciding (by link): not a view of the decision
      d('link', at(20)),
    ]).execute(new AuditReviewersQuery('t', {}));
    const by = Object.fromEntries(answer.reviewers.map((r) => [r.personId, r]));
    expect(by.cara).toMatchObject({ decisions: 2, unviewedDecisions: 0, unviewedShare: 0 });
    expect(by.link).toMatchObject({ decisions: 4, unviewedDecisions: 3, unviewedShare: 0.75 });
  });
});
