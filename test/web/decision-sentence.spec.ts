import { decisionSentence, timeLeft } from '../../web/src/format';

describe('decisionSentence', () => {
  const ann = { id: 'ann', name: 'Ann', via: 'web' };
  it('shows a respond as the answer the agent was given, not as a bare rejection', () => {
    expect(decisionSentence({ outcome: 'rejected', by: ann, response: 'Use staging' }, 'bob')).toBe(
      'answered instead by Ann via the web inbox: Use staging',
    );
    expect(decisionSentence({ outcome: 'rejected', by: ann, reason: 'Duplicate' }, 'bob')).toContain('rejected by Ann');
  });

  it('counts a 30-day hold in days', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(timeLeft('2026-01-31T00:00:00Z', now)).toBe('30 days left');
  });
});
