import fc from 'fast-check';
import { ValidationError } from '../shared/domain-error';
import { ApprovalPolicy, GrantFacts, PolicyVerdict } from './approval-policy';
import { MAX_QUORUM, PolicyDocument } from './policy-document';

/** The instant calls are judged at: no grant here expires. */
const NOW = new Date('2025-03-01T12:00:00.000Z');

// `selfApproval` and `quorum` in the policy document, and what the policy's verdict carries for them.

function verdict(doc: unknown, grants: GrantFacts[] = []): PolicyVerdict {
  return ApprovalPolicy.evaluate(
    { toolName: 'wire_money', arguments: { amount: 10 } },
    {
      policy: PolicyDocument.parse(doc),
      policyVersion: 4,
      grants,
      conversation: { id: 'conv_1', agentId: 'agent_1', user: { id: 'u', roles: [] } },
      now: NOW,
    },
  );
}

const tenantGrant: GrantFacts = { id: 'grant_1', toolName: 'wire_money', scope: 'tenant' };

function faults(doc: unknown): string[] {
  try {
    PolicyDocument.parse(doc);
    return [];
  } catch (e) {
    return (e as ValidationError).faults.map((f) => `${f.path}: ${f.message}`);
  }
}

describe('selfApproval', () => {
  it('is true in the built-in defaults and absent from the verdict then', () => {
    expect(PolicyDocument.empty().defaults.selfApproval).toBe(true);
    expect(verdict({ rules: [{ match: 'wire_money', level: 'confirm' }] }).selfApproval).toBeUndefined();
  });

  it('comes from the rule, else the defaults', () => {
    expect(verdict({ rules: [{ match: 'wire_money', level: 'confirm', selfApproval: false }] }).selfApproval).toBe(
      false,
    );
    expect(
      verdict({ defaults: { selfApproval: false }, rules: [{ match: 'wire_money', level: 'confirm' }] }).selfApproval,
    ).toBe(false);
    expect(
      verdict({
        defaults: { selfApproval: false },
        rules: [{ match: 'wire_money', level: 'confirm', selfApproval: true }],
      }).selfApproval,
    ).toBeUndefined();
  });

  it('must be a boolean', () => {
    expect(faults({ defaults: { selfApproval: 'no' } })).toEqual(['defaults.selfApproval: must be true or false']);
    expect(faults({ rules: [{ match: 'x', level: 'confirm', selfApproval: 0 }] })).toEqual([
      'rules[0].selfApproval: must be true or false',
    ]);
  });
});

describe('quorum', () => {
  it('normalises a count to the object form and keeps `of` without duplicates', () => {
    expect(PolicyDocument.parse({ rules: [{ match: 'x', level: 'confirm', quorum: 2 }] }).rules[0].quorum).toEqual({
      count: 2,
    });
    expect(
      PolicyDocument.parse({
        rules: [{ match: 'x', level: 'confirm', quorum: { count: 2, of: ['admin', 'admin', 'finance'] } }],
      }).rules[0].quorum,
    ).toEqual({
      count: 2,
      of: ['admin', 'finance'],
    });
  });

  it('leaves `quorum: 1` out, so the document equals the one without it', () => {
    const one = PolicyDocument.parse({ rules: [{ match: 'x', level: 'confirm', quorum: 1 }] });
    expect(one.equals(PolicyDocument.parse({ rules: [{ match: 'x', level: 'confirm' }] }))).toBe(true);
  });

  it.each([
    [0, 'rules[0].quorum: must be an integer from 1 to 10'],
    [MAX_QUORUM + 1, 'rules[0].quorum: must be an integer from 1 to 10'],
    [1.5, 'rules[0].quorum: must be an integer from 1 to 10'],
    [{}, 'rules[0].quorum.count: is required'],
    [{ count: 2, of: [] }, 'rules[0].quorum.of: must be a non-empty array of role names'],
    [
      { count: 2, of: ['auditor'] },
      'rules[0].quorum.of: agents and auditors never decide: they cannot count towards a quorum',
    ],
    [{ count: 2, by: ['admin'] }, 'rules[0].quorum.by: unknown field'],
  ])('refuses %j with a fault at its path', (quorum, fault) => {
    expect(faults({ rules: [{ match: 'x', level: 'confirm', quorum }] })).toContain(fault);
  });

  it('applies only to levels a person decides', () => {
    expect(faults({ rules: [{ match: 'x', level: 'automatic', quorum: 2 }] })).toEqual([
      'rules[0].quorum: applies to calls a person decides (confirm, manual), not to automatic',
    ]);
    expect(faults({ rules: [{ match: 'x', level: 'manual', quorum: 2 }] })).toEqual([]);
  });

  it('is carried by the verdict, and a standing grant does not stand in for it', () => {
    const v = verdict({ rules: [{ match: 'wire_money', level: 'confirm', quorum: { count: 2, of: ['admin'] } }] }, [
      tenantGrant,
    ]);
    expect(v).toMatchObject({ level: 'confirm', quorum: { count: 2, of: ['admin'] } });
    expect(v.grantId).toBeUndefined();
  });

  it('without a quorum the same grant still turns confirm into automatic', () => {
    expect(verdict({ rules: [{ match: 'wire_money', level: 'confirm' }] }, [tenantGrant])).toMatchObject({
      level: 'automatic',
      grantId: 'grant_1',
    });
  });

  it('property: any valid count round-trips through parse and restore, and the verdict needs exactly that many', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: MAX_QUORUM }), fc.boolean(), (count, withOf) => {
        const quorum = withOf ? { count, of: ['admin'] } : count;
        const doc = PolicyDocument.parse({ rules: [{ match: 'wire_money', level: 'confirm', quorum }] });
        expect(PolicyDocument.restore(doc.toJSON()).equals(doc)).toBe(true);
        expect(verdict(doc.toJSON()).quorum?.count).toBe(count);
      }),
    );
  });
});
