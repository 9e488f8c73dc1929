import fc from 'fast-check';
import { Actor } from '../shared/actor';
import { CHANGE_TTL_MS, PendingChange, quorumFault } from './pending-change.aggregate';

const T0 = new Date('2026-03-01T10:00:00.000Z');
const admin = (id: string, name?: string): Actor => ({ id, kind: 'person', via: 'api', name, roles: ['admin'] });
const ANN = admin('ann', 'Ann');
const BOB = admin('bob', 'Bob');
const CAT = admin('cat');
const later = (ms: number) => new Date(T0.getTime() + ms);

function propose(quorum = 2, by: Actor = ANN): PendingChange {
  return PendingChange.propose({
    tenantId: 't1',
    id: 'chg_1',
    kind: 'policy_update',
    summary: 'Policy version 2',
    payload: { document: { rules: [] } },
    payloadDigest: 'd'.repeat(64),
    baseVersion: 1,
    by,
    at: T0,
    quorum,
  });
}

const types = (c: PendingChange) => c.pullEvents().map((e) => e.type);

describe('PendingChange', () => {
  it('is proposed pending, with the proposer as its first approval, and records ChangeProposed', () => {
    const c = propose();
    const s = c.snapshot();
    expect(s).toMatchObject({ status: 'pending', needed: 2, baseVersion: 1, expiresAt: later(CHANGE_TTL_MS) });
    expect(s.approvals).toEqual([{ by: { id: 'ann', name: 'Ann' }, at: T0 }]);
    const [e] = c.pullEvents();
    expect(e).toMatchObject({
      type: 'ChangeProposed',
      actor: ANN,
      data: { changeId: 'chg_1', kind: 'policy_update', payloadDigest: 'd'.repeat(64), needed: 2 },
    });
    expect(JSON.stringify(e.data)).not.toContain('rules'); // the payload itself stays out of the trail
  });

  it('refuses the proposer approving their own change (self_approval)', () => {
    const c = propose();
    expect(() => c.approve(ANN, later(1))).toThrow(expect.objectContaining({ code: 'self_approval' }));
    expect(c.snapshot().approvals).toHaveLength(1);
  });

  it('a second distinct admin makes a quorum of 2 ready; applying records both people', () => {
    const c = propose();
    c.pullEvents();
    expect(c.approve(BOB, later(1))).toEqual({ ready: true });
    c.applied(BOB, later(2));
    const events = c.pullEvents();
    expect(events.map((e) => e.type)).toEqual(['ChangeApproved', 'ChangeApplied']);
    expect(events[1].data).toMatchObject({ proposedBy: { id: 'ann' }, approvedBy: [{ id: 'bob', name: 'Bob' }] });
    expect(c.snapshot().status).toBe('applied');
    expect(() => c.approve(CAT, later(3))).toThrow(expect.objectContaining({ code: 'change_not_pending' }));
  });

  it('counts an admin once and needs every distinct approval of a larger quorum', () => {
    const c = propose(3);
    expect(c.approve(BOB, later(1))).toEqual({ ready: false });
    expect(() => c.approve(BOB, later(2))).toThrow(expect.objectContaining({ code: 'already_approved' }));
    expect(() => c.applied(BOB, later(2))).toThrow();
    expect(c.approve(CAT, later(3))).toEqual({ ready: true });
  });

  it('only admins decide, and never agents', () => {
    const c = propose();
    const approver: Actor = { id: 'al', kind: 'person', via: 'api', roles: ['approver'] };
    const agent: Actor = { id: 'bot', kind: 'agent', via: 'api', roles: ['agent', 'admin'] };
    for (const who of [approver, agent]) {
      expect(() => c.approve(who, later(1))).toThrow(expect.objectContaining({ code: 'forbidden' }));
      expect(() => c.reject(who, later(1))).toThrow(expect.objectContaining({ code: 'forbidden' }));
    }
    expect(() => propose(2, agent)).toThrow(expect.objectContaining({ code: 'forbidden' }));
  });

  it('is rejected by any admin, the proposer included, and then ends', () => {
    const c = propose();
    c.pullEvents();
    c.reject(ANN, later(1), 'wrong file');
    expect(c.snapshot()).toMatchObject({ status: 'rejected', rejectedBy: { id: 'ann' }, reason: 'wrong file' });
    expect(types(c)).toEqual(['ChangeRejected']);
    expect(() => c.approve(BOB, later(2))).toThrow(expect.objectContaining({ code: 'change_not_pending' }));
    expect(() => c.reject(BOB, later(2))).toThrow(expect.objectContaining({ code: 'change_not_pending' }));
  });

  it('expires at its deadline: ChangeExpired once, and no approval after it', () => {
    const c = propose();
    c.pullEvents();
    expect(c.expireIfDue(later(CHANGE_TTL_MS - 1))).toBe(false);
    expect(c.statusAt(later(CHANGE_TTL_MS))).toBe('expired');
    expect(() => c.approve(BOB, later(CHANGE_TTL_MS))).toThrow(expect.objectContaining({ code: 'change_not_pending' }));
    expect(c.expireIfDue(later(CHANGE_TTL_MS))).toBe(true);
    expect(c.expireIfDue(later(CHANGE_TTL_MS + 1))).toBe(false);
    expect(types(c)).toEqual(['ChangeExpired']);
    expect(c.snapshot().status).toBe('expired');
  });

  it('is superseded by the service when what it was made against moved on', () => {
    const c = propose();
    c.pullEvents();
    c.supersede(later(1), 'policy_moved_on', 'version 3 is in force');
    const [e] = c.pullEvents();
    expect(e).toMatchObject({ type: 'ChangeRejected', actor: { id: 'system' }, data: { code: 'policy_moved_on' } });
    expect(c.snapshot().status).toBe('rejected');
  });

  it('takes a quorum of 2 to 10 only', () => {
    for (const q of [0, 1, 11, 2.5, '2', null]) expect(quorumFault(q)).toBeDefined();
    for (const q of [2, 5, 10]) expect(quorumFault(q)).toBeUndefined();
    expect(() => propose(1)).toThrow(expect.objectContaining({ code: 'validation_failed' }));
  });

  it('property: whatever admins try in whatever order, it applies only with `needed` distinct admins, proposer first', () => {
    const people = ['ann', 'bob', 'cat', 'dan', 'eve'];
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 5 }),
        fc.array(fc.record({ who: fc.constantFrom(...people), act: fc.constantFrom('approve', 'reject') }), {
          maxLength: 12,
        }),
        (quorum, steps) => {
          const c = propose(quorum);
          let t = 1;
          let appliedAt = -1;
          for (const [i, step] of steps.entries()) {
            const by = admin(step.who);
            try {
              if (step.act === 'reject') c.reject(by, later(t++));
              else if (c.approve(by, later(t++)).ready) {
                c.applied(by, later(t++));
                appliedAt = i;
              }
            } catch (e) {
              expect((e as { code?: string }).code).toMatch(/^(self_approval|already_approved|change_not_pending)$/);
            }
          }
          const s = c.snapshot();
          const ids = s.approvals.map((a) => a.by.id);
          expect(ids[0]).toBe('ann');
          expect(new Set(ids).size).toBe(ids.length);
          const applied = c.pullEvents().filter((e) => e.type === 'ChangeApplied');
          expect(applied.length).toBe(s.status === 'applied' ? 1 : 0);
          if (s.status === 'applied') expect(ids.length).toBe(quorum);
          else expect(appliedAt).toBe(-1);
          expect(ids.length).toBeLessThanOrEqual(quorum);
        },
      ),
    );
  });
});
