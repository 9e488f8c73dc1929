import { Actor } from '../shared/actor';
import { PolicyDocument } from './policy-document';
import { TenantPolicy } from './tenant-policy.aggregate';
import { PolicyVersionInForceError } from './tenant-policy.errors';
import { PolicyUpdated } from './tenant-policy.events';

const ann: Actor = { id: 'ann', kind: 'person', via: 'api' };
const at = new Date('2026-01-05T10:00:00Z');
const strict = PolicyDocument.parse({ rules: [{ match: 'delete_*', level: 'deny' }] });
const lax = PolicyDocument.parse({ rules: [{ match: 'delete_*', level: 'automatic' }] });

function atVersion2(): TenantPolicy {
  const p = TenantPolicy.initial('t1');
  p.replace(strict, ann, at);
  p.replace(lax, ann, at);
  p.pullEvents();
  return p;
}

describe('TenantPolicy.rollBack', () => {
  it("makes a new version holding the earlier version's document, recorded as PolicyUpdated with rolledBackFrom", () => {
    const p = atVersion2();
    p.rollBack({ version: 1, document: strict }, ann, at, 'too lax');
    expect(p.policyVersion).toBe(3);
    expect(p.document.equals(strict)).toBe(true);
    const [event] = p.pullEvents() as PolicyUpdated[];
    expect(event.type).toBe('PolicyUpdated');
    expect(event.data).toEqual({
      version: 3,
      previousVersion: 2,
      document: strict.toJSON(),
      source: 'rollback',
      rolledBackFrom: 1,
      reason: 'too lax',
    });
  });

  it('refuses the version in force with already_in_force, recording nothing', () => {
    const p = atVersion2();
    expect(() => p.rollBack({ version: 2, document: lax }, ann, at)).toThrow(PolicyVersionInForceError);
    expect(p.pullEvents()).toEqual([]);
    expect(p.policyVersion).toBe(2);
  });

  it('refuses an earlier version whose document is the one in force', () => {
    const p = atVersion2();
    p.replace(strict, ann, at); // version 3 repeats version 1
    p.pullEvents();
    const refusal = (() => {
      try {
        p.rollBack({ version: 1, document: strict }, ann, at);
      } catch (e) {
        return e as PolicyVersionInForceError;
      }
    })();
    expect(refusal).toMatchObject({
      code: 'already_in_force',
      kind: 'conflict',
      message: expect.stringContaining('same document as version 3'),
    });
  });
});
