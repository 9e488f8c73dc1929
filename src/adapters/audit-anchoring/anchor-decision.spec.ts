import fc from 'fast-check';
import { anchorDecision } from './anchor-decision';

const h = (c: string) => c.repeat(64);

describe('anchorDecision: whether the scheduler signs a new checkpoint', () => {
  it('anchors a chain never anchored once it has events, and skips an empty one', () => {
    expect(anchorDecision({ seq: 3 }, undefined, undefined)).toEqual({ kind: 'anchor' });
    expect(anchorDecision({ seq: 0 }, undefined, undefined)).toEqual({ kind: 'skip' });
  });

  it('anchors new events after the last checkpoint when the chain still reaches it', () => {
    expect(anchorDecision({ seq: 9 }, { seq: 5, hash: h('a') }, h('a'))).toEqual({ kind: 'anchor' });
  });

  it('skips a tenant with no new events since the last checkpoint', () => {
    expect(anchorDecision({ seq: 5 }, { seq: 5, hash: h('a') }, h('a'))).toEqual({ kind: 'skip' });
  });

  it('refuses to sign over a chain cut before the last checkpoint', () => {
    const d = anchorDecision({ seq: 4 }, { seq: 5, hash: h('a') }, undefined);
    expect(d).toMatchObject({ kind: 'refuse', problem: expect.stringContaining('removed from its end') });
  });

  it('refuses to sign over a chain rewritten up to the last checkpoint, even with new events after it', () => {
    const d = anchorDecision({ seq: 12 }, { seq: 5, hash: h('a') }, h('b'));
    expect(d).toMatchObject({ kind: 'refuse', problem: expect.stringContaining('rewritten') });
  });

  it('anchors past a checkpoint whose event a retention purge removed (verify judges the purge)', () => {
    expect(anchorDecision({ seq: 12 }, { seq: 5, hash: h('a') }, 'missing')).toEqual({ kind: 'anchor' });
  });

  it('property: it anchors only when the head moved past the last checkpoint and never over a changed hash', () => {
    fc.assert(
      fc.property(fc.nat(1000), fc.nat(1000), fc.constantFrom(h('a'), h('b'), 'missing' as const), (head, last, at) => {
        const d = anchorDecision({ seq: head }, { seq: last, hash: h('a') }, at);
        if (d.kind === 'anchor') expect(head).toBeGreaterThan(last);
        if (last > 0 && at === h('b')) expect(d.kind).toBe('refuse');
        if (last > 0 && head < last) expect(d.kind).toBe('refuse');
      }),
    );
  });
});
