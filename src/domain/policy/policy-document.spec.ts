import fc from 'fast-check';
import { ValidationError, ValidationFault } from '../shared/domain-error';
import { PolicyDocument } from './policy-document';
import { MAX_PATTERN_LENGTH, MAX_PATTERN_WILDCARDS } from './tool-pattern';
import { SUPERVISION_LEVELS } from './supervision-level';

const BUILT_IN = {
  unknownTools: 'confirm',
  timeoutSeconds: 300,
  approvers: ['approver', 'admin'],
  trustAgentFlags: true,
  grants: 'tenant',
  selfApproval: true,
};

function faultsOf(raw: unknown): ValidationFault[] {
  try {
    PolicyDocument.parse(raw);
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return (e as ValidationError).faults;
  }
  throw new Error('the document was accepted');
}

describe('the empty policy document', () => {
  it('holds the built-in defaults and no rules', () => {
    expect(PolicyDocument.empty().toJSON()).toEqual({ defaults: BUILT_IN, rules: [] });
  });

  it('equals a parsed empty object', () => {
    expect(PolicyDocument.parse({}).equals(PolicyDocument.empty())).toBe(true);
  });
});

describe('parsing a valid policy document', () => {
  const contractExample = {
    defaults: { unknownTools: 'confirm', timeoutSeconds: 300, approvers: ['approver', 'admin'] },
    rules: [
      { match: 'get_*', level: 'automatic' },
      { match: 'shell(cmd=rm *)', level: 'deny' },
      {
        match: 'delete_source',
        level: 'confirm',
        requireRole: 'admin',
        approvers: ['requester', 'admin'],
        timeoutSeconds: 120,
      },
      { match: '*', when: { confidenceBelow: 0.6 }, level: 'confirm' },
    ],
  };

  it('accepts the example of the contract and keeps its rules as given', () => {
    const doc = PolicyDocument.parse(contractExample);
    expect(doc.toJSON()).toEqual({ defaults: BUILT_IN, rules: contractExample.rules });
    expect(doc.rules).toHaveLength(4);
    expect(doc.patterns.map(String)).toEqual(['get_*', 'shell(cmd=rm *)', 'delete_source', '*']);
  });

  it('fills every default left out with its built-in value', () => {
    const doc = PolicyDocument.parse({ defaults: { timeoutSeconds: 60 } });
    expect(doc.defaults).toEqual({ ...BUILT_IN, timeoutSeconds: 60 });
  });

  it('omits optional rule fields that were left out', () => {
    const [rule] = PolicyDocument.parse({ rules: [{ match: 'x', level: 'notify' }] }).toJSON().rules;
    expect(Object.keys(rule)).toEqual(['match', 'level']);
  });

  it('writes rule fields in one fixed order whatever order they came in', () => {
    const [rule] = PolicyDocument.parse({
      rules: [{ reason: 'r', timeoutSeconds: 5, level: 'deny', match: 'x', requireRole: 'admin' }],
    }).toJSON().rules;
    expect(Object.keys(rule)).toEqual(['match', 'level', 'requireRole', 'timeoutSeconds', 'reason']);
  });

  it('accepts both conditions and every optional field at once', () => {
    const rule = {
      match: 'pay(amount=*)',
      level: 'manual',
      when: { confidenceBelow: 1, estimatedCostAbove: 0 },
      requireRole: 'finance',
      approvers: ['requester'],
      timeoutSeconds: 86400,
      reason: 'money',
    };
    expect(PolicyDocument.parse({ rules: [rule] }).rules[0]).toEqual(rule);
  });

  it('accepts exactly 1000 rules', () => {
    const rules = Array.from({ length: 1000 }, (_, i) => ({ match: `tool_${i}`, level: 'confirm' }));
    expect(PolicyDocument.parse({ rules }).rules).toHaveLength(1000);
  });

  it('hands out a copy from toJSON, so changing it changes nothing', () => {
    const doc = PolicyDocument.parse({ rules: [{ match: 'x', level: 'deny' }] });
    const json = doc.toJSON();
    json.rules[0].level = 'automatic';
    json.defaults.approvers.push('anyone');
    expect(doc.rules[0].level).toBe('deny');
    expect(doc.defaults.approvers).toEqual(['approver', 'admin']);
  });

  it('is immutable through its getters', () => {
    const doc = PolicyDocument.parse({ rules: [{ match: 'x', level: 'deny' }] });
    expect(Object.isFrozen(doc.rules)).toBe(true);
    expect(Object.isFrozen(doc.rules[0])).toBe(true);
    expect(Object.isFrozen(doc.defaults.approvers)).toBe(true);
  });
});

describe('finding the rules for a tool name', () => {
  const doc = PolicyDocument.parse({
    rules: [
      { match: 'get_*', level: 'automatic' },
      { match: 'shell(cmd=rm *)', level: 'deny' },
      { match: '*', level: 'confirm' },
    ],
  });

  it('lists, in order, the rules whose tool part accepts the name, whatever their arguments', () => {
    expect(doc.rulesForTool('get_user')).toEqual([0, 2]);
    expect(doc.rulesForTool('shell')).toEqual([1, 2]);
  });

  it('gives the same answers once many distinct names have passed through its memo', () => {
    for (let i = 0; i < 3000; i++) expect(doc.rulesForTool(`get_${i}`)).toEqual([0, 2]);
    expect(doc.rulesForTool('shell')).toEqual([1, 2]);
  });

  it('finds through its index exactly the rules a test of every pattern finds', () => {
    // A small alphabet so that heads share prefixes, names equal patterns and wildcards meet.
    const text = fc.string({ unit: fc.constantFrom('a', 'b', '_', 'é', '😀'), maxLength: 5 });
    const glob = fc.string({ unit: fc.constantFrom('a', 'b', '_', 'é', '😀', '*', '?'), minLength: 1, maxLength: 6 });
    const match = fc.oneof(
      glob,
      fc.tuple(glob, text).map(([g, v]) => `${g}(x=${v}*)`),
    );
    fc.assert(
      fc.property(
        fc.array(match, { minLength: 1, maxLength: 40 }),
        fc.array(text, { minLength: 1, maxLength: 20 }),
        (matches, names) => {
          const d = PolicyDocument.parse({ rules: matches.map((m) => ({ match: m, level: 'confirm' })) });
          for (const name of names) {
            const brute = d.patterns.flatMap((p, i) => (p.matchesTool(name) ? [i] : []));
            expect(d.rulesForTool(name)).toEqual(brute);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('comparing policy documents', () => {
  it('finds documents equal when only the key order differs', () => {
    const a = PolicyDocument.parse({
      defaults: { timeoutSeconds: 10, unknownTools: 'deny' },
      rules: [{ match: 'x', level: 'deny' }],
    });
    const b = PolicyDocument.parse({
      rules: [{ level: 'deny', match: 'x' }],
      defaults: { unknownTools: 'deny', timeoutSeconds: 10 },
    });
    expect(a.equals(b)).toBe(true);
  });

  it('finds a default spelled out equal to the same default left out', () => {
    expect(PolicyDocument.parse({ defaults: { unknownTools: 'confirm' } }).equals(PolicyDocument.empty())).toBe(true);
  });

  it('finds documents different when a rule differs or the rules are reordered', () => {
    const one = { match: 'a', level: 'deny' };
    const two = { match: 'b', level: 'confirm' };
    expect(PolicyDocument.parse({ rules: [one, two] }).equals(PolicyDocument.parse({ rules: [two, one] }))).toBe(false);
    expect(
      PolicyDocument.parse({ rules: [one] }).equals(PolicyDocument.parse({ rules: [{ ...one, reason: 'no' }] })),
    ).toBe(false);
  });

  it('survives a round trip through toJSON for any valid document', () => {
    const roles = fc.array(fc.constantFrom('approver', 'admin', 'requester'), { minLength: 1, maxLength: 3 });
    const rule = fc.record(
      {
        match: fc.constantFrom('*', 'get_*', 'shell(cmd=rm *)', 'a?c', 'copy(from=/etc/*, to=*)'),
        level: fc.constantFrom(...SUPERVISION_LEVELS),
        when: fc.record(
          {
            confidenceBelow: fc.double({ min: 0, max: 1, noNaN: true }),
            estimatedCostAbove: fc.double({ min: 0, max: 1e6, noNaN: true }),
          },
          { requiredKeys: [] },
        ),
        requireRole: fc.constantFrom('admin', 'finance'),
        approvers: roles,
        timeoutSeconds: fc.integer({ min: 1, max: 86400 }),
        grants: fc.constantFrom('none', 'conversation', 'agent', 'tenant'),
        reason: fc.string({ minLength: 1 }),
      },
      { requiredKeys: ['match', 'level'] },
    );
    const defaults = fc.record(
      {
        unknownTools: fc.constantFrom(...SUPERVISION_LEVELS),
        timeoutSeconds: fc.integer({ min: 1, max: 86400 }),
        approvers: roles,
        trustAgentFlags: fc.boolean(),
        grants: fc.constantFrom('none', 'conversation', 'agent', 'tenant'),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.record({ defaults, rules: fc.array(rule, { maxLength: 5 }) }, { requiredKeys: [] }), (raw) => {
        const doc = PolicyDocument.parse(raw);
        const again = PolicyDocument.parse(doc.toJSON());
        expect(again.equals(doc)).toBe(true);
        expect(again.toJSON()).toEqual(doc.toJSON());
      }),
    );
  });
});

describe('restoring a stored policy document', () => {
  it('loads what a new document may no longer hold — auditors or unknown roles as approvers, oversized patterns — so a stored policy always loads', () => {
    const stored = {
      defaults: { approvers: ['auditor', 'sre'] },
      rules: [{ match: '*a'.repeat(4000) + '*', level: 'confirm', approvers: ['auditor'] }],
    };
    expect(() => PolicyDocument.parse(stored)).toThrow(ValidationError);
    const doc = PolicyDocument.restore(stored);
    expect(doc.defaults.approvers).toEqual(['auditor', 'sre']);
    expect(doc.rulesForTool('a'.repeat(4000))).toEqual([0]);
    expect(doc.rulesForTool('a'.repeat(3999))).toEqual([]);
  });

  it('keeps allowChatApproval as written, and loads a stored true the checks for new documents would refuse', () => {
    const rules = [
      { match: 'a', level: 'confirm', allowChatApproval: false },
      { match: 'b', level: 'confirm', allowChatApproval: true },
    ];
    expect(PolicyDocument.parse({ rules }).toJSON().rules).toEqual(rules);
    const stored = { rules: [{ match: '*', level: 'manual', allowChatApproval: true }] };
    expect(() => PolicyDocument.parse(stored)).toThrow(/allowChatApproval/);
    expect(PolicyDocument.restore(stored).rules[0].allowChatApproval).toBe(true);
  });

  it('keeps stepUp and requireVerifiedUser as written, and refuses what would make them mean nothing', () => {
    const rules = [
      { match: 'wire_money', level: 'confirm', stepUp: 'passkey' },
      { match: 'close_account', level: 'manual', stepUp: 'passkey', requireVerifiedUser: true },
      { match: 'read_*', level: 'automatic', requireVerifiedUser: true },
    ];
    expect(PolicyDocument.parse({ rules }).toJSON().rules).toEqual(rules);
    const faultOf = (rule: Record<string, unknown>) => {
      try {
        PolicyDocument.parse({ rules: [rule] });
      } catch (e) {
        return (e as ValidationError).faults;
      }
      return [];
    };
    expect(faultOf({ match: '*', level: 'confirm', stepUp: 'totp' })).toEqual([
      { path: 'rules[0].stepUp', message: 'must be one of passkey' },
    ]);
    expect(faultOf({ match: '*', level: 'automatic', stepUp: 'passkey' })).toEqual([
      { path: 'rules[0].stepUp', message: 'applies to calls a person decides (confirm, manual), not to automatic' },
    ]);
    expect(faultOf({ match: '*', level: 'confirm', stepUp: 'passkey', allowChatApproval: true })).toEqual([
      {
        path: 'rules[0].allowChatApproval',
        message: "cannot be true with stepUp: a chat client cannot sign with the person's passkey",
      },
    ]);
    expect(faultOf({ match: '*', level: 'confirm', requireVerifiedUser: 'yes' })).toEqual([
      { path: 'rules[0].requireVerifiedUser', message: 'must be true or false' },
    ]);
  });

  it('still refuses a stored document that was never valid', () => {
    expect(() => PolicyDocument.restore({ rules: [{ match: '*', level: 'block' }] })).toThrow(/rules\[0\]\.level/);
  });
});

describe('parsing an invalid policy document', () => {
  it.each<[string, unknown, string, RegExp?]>([
    ['a non-object', 'rules: []', '', /object/],
    ['null', null, '', /object/],
    ['an array', [], '', /object/],
    ['an unknown top-level field', { version: 2 }, 'version', /unknown field/],
    ['defaults that are not an object', { defaults: [] }, 'defaults', /object/],
    ['an unknown default', { defaults: { colour: 'red' } }, 'defaults.colour', /unknown field/],
    [
      'an unknown level for unknown tools',
      { defaults: { unknownTools: 'maybe' } },
      'defaults.unknownTools',
      /deny, manual, confirm, notify, automatic/,
    ],
    ['a timeout of zero', { defaults: { timeoutSeconds: 0 } }, 'defaults.timeoutSeconds', /1 to 2592000/],
    ['a timeout over 30 days', { defaults: { timeoutSeconds: 2592001 } }, 'defaults.timeoutSeconds', /1 to 2592000/],
    ['a fractional timeout', { defaults: { timeoutSeconds: 1.5 } }, 'defaults.timeoutSeconds', /integer/],
    ['a timeout given as text', { defaults: { timeoutSeconds: '300' } }, 'defaults.timeoutSeconds', /integer/],
    ['no approvers', { defaults: { approvers: [] } }, 'defaults.approvers', /non-empty/],
    ['an approver that is not a string', { defaults: { approvers: ['admin', 7] } }, 'defaults.approvers[1]', /string/],
    ['trustAgentFlags as text', { defaults: { trustAgentFlags: 'yes' } }, 'defaults.trustAgentFlags', /true or false/],
    ['rules that are not an array', { rules: {} }, 'rules', /array/],
    [
      'more than 1000 rules',
      { rules: Array.from({ length: 1001 }, () => ({ match: '*', level: 'deny' })) },
      'rules',
      /at most 1000/,
    ],
    ['a rule that is not an object', { rules: ['get_*'] }, 'rules[0]', /object/],
    [
      'allowChatApproval as text',
      { rules: [{ match: '*', level: 'confirm', allowChatApproval: 'yes' }] },
      'rules[0].allowChatApproval',
      /true or false/,
    ],
    [
      'allowChatApproval: true on a manual rule',
      { rules: [{ match: '*', level: 'manual', allowChatApproval: true }] },
      'rules[0].allowChatApproval',
      /confirm rules only, not to manual/,
    ],
    [
      'allowChatApproval: true beside selfApproval: false',
      { rules: [{ match: '*', level: 'confirm', selfApproval: false, allowChatApproval: true }] },
      'rules[0].allowChatApproval',
      /cannot be true with selfApproval: false/,
    ],
    [
      'allowChatApproval: true beside a quorum',
      { rules: [{ match: '*', level: 'confirm', quorum: 2, allowChatApproval: true }] },
      'rules[0].allowChatApproval',
      /cannot be true with a quorum/,
    ],
    ['a rule without match', { rules: [{ level: 'deny' }] }, 'rules[0].match', /required/],
    ['a rule without level', { rules: [{ match: '*' }] }, 'rules[0].level', /required/],
    ['a match that is not a string', { rules: [{ match: 5, level: 'deny' }] }, 'rules[0].match', /string/],
    ['a match with bad syntax', { rules: [{ match: 'shell(cmd=rm *', level: 'deny' }] }, 'rules[0].match', /\)/],
    ['an empty match', { rules: [{ match: '', level: 'deny' }] }, 'rules[0].match', /empty/],
    [
      'an unknown level',
      {
        rules: [
          { match: '*', level: 'deny' },
          { match: '*', level: 'block' },
        ],
      },
      'rules[1].level',
      /one of/,
    ],
    [
      'an unknown rule field',
      {
        rules: [
          { match: '*', level: 'deny' },
          { match: '*', level: 'deny', colour: 'red' },
        ],
      },
      'rules[1].colour',
      /unknown field/,
    ],
    ['when that is not an object', { rules: [{ match: '*', level: 'deny', when: 0.5 }] }, 'rules[0].when', /object/],
    [
      'an unknown condition',
      { rules: [{ match: '*', level: 'deny', when: { riskAbove: 3 } }] },
      'rules[0].when.riskAbove',
      /unknown field/,
    ],
    [
      'a confidence over 1',
      { rules: [{ match: '*', level: 'deny', when: { confidenceBelow: 1.5 } }] },
      'rules[0].when.confidenceBelow',
      /0 to 1/,
    ],
    [
      'a confidence given as text',
      { rules: [{ match: '*', level: 'deny', when: { confidenceBelow: '0.5' } }] },
      'rules[0].when.confidenceBelow',
      /number/,
    ],
    [
      'a negative cost',
      { rules: [{ match: '*', level: 'deny', when: { estimatedCostAbove: -1 } }] },
      'rules[0].when.estimatedCostAbove',
      /at least 0/,
    ],
    [
      'an infinite cost',
      { rules: [{ match: '*', level: 'deny', when: { estimatedCostAbove: Infinity } }] },
      'rules[0].when.estimatedCostAbove',
      /number/,
    ],
    [
      'an empty requireRole',
      { rules: [{ match: '*', level: 'deny', requireRole: '' }] },
      'rules[0].requireRole',
      /non-empty/,
    ],
    [
      'rule approvers that are not an array',
      { rules: [{ match: '*', level: 'deny', approvers: 'admin' }] },
      'rules[0].approvers',
      /array/,
    ],
    [
      'a rule timeout out of range',
      { rules: [{ match: '*', level: 'deny', timeoutSeconds: -5 }] },
      'rules[0].timeoutSeconds',
      /1 to 2592000/,
    ],
    [
      'a reason that is not a string',
      { rules: [{ match: '*', level: 'deny', reason: ['no'] }] },
      'rules[0].reason',
      /string/,
    ],
    [
      'auditors among the default approvers',
      { defaults: { approvers: ['admin', 'auditor'] } },
      'defaults.approvers[1]',
      /auditors change nothing/,
    ],
    [
      'auditors among a rule’s approvers',
      { rules: [{ match: '*', level: 'confirm', approvers: ['auditor'] }] },
      'rules[0].approvers[0]',
      /auditors change nothing/,
    ],
    [
      'agents among the approvers',
      { rules: [{ match: '*', level: 'confirm', approvers: ['requester', 'agent'] }] },
      'rules[0].approvers[1]',
      /agents cannot decide/,
    ],
    [
      'a typo among the approvers',
      { defaults: { approvers: ['aprover'] } },
      'defaults.approvers[0]',
      /"aprover": is not a role that may decide; use approver, admin, requester/,
    ],
    [
      'an unknown grants limit',
      { defaults: { grants: 'everyone' } },
      'defaults.grants',
      /none, conversation, agent, tenant/,
    ],
    [
      'a rule grants limit given as a list',
      { rules: [{ match: '*', level: 'confirm', grants: ['agent'] }] },
      'rules[0].grants',
      /one of/,
    ],
    [
      'the 8 KB glob that made proposals fail',
      { rules: [{ match: '*a'.repeat(4000) + '*', level: 'confirm' }] },
      'rules[0].match',
      new RegExp(`at most ${MAX_PATTERN_LENGTH} characters`),
    ],
    [
      'too many wildcards',
      { rules: [{ match: '*a'.repeat(MAX_PATTERN_WILDCARDS) + '*', level: 'confirm' }] },
      'rules[0].match',
      new RegExp(`at most ${MAX_PATTERN_WILDCARDS} wildcards`),
    ],
    [
      'too many wildcards in an argument pattern',
      { rules: [{ match: `shell(cmd=${'rm *'.repeat(MAX_PATTERN_WILDCARDS + 1)})`, level: 'deny' }] },
      'rules[0].match',
      /wildcards/,
    ],
    [
      'an argument pattern too long',
      { rules: [{ match: `shell(cmd=rm ${'x'.repeat(MAX_PATTERN_LENGTH)})`, level: 'deny' }] },
      'rules[0].match',
      /characters/,
    ],
    [
      'an optional field set to null',
      { rules: [{ match: '*', level: 'deny', reason: null }] },
      'rules[0].reason',
      /string/,
    ],
  ])('refuses %s with a fault at its path', (_what, raw, path, message) => {
    const faults = faultsOf(raw);
    expect(faults).toHaveLength(1);
    expect(faults[0].path).toBe(path);
    if (message) expect(faults[0].message).toMatch(message);
  });

  it('names every fault, not only the first', () => {
    const faults = faultsOf({
      extra: 1,
      defaults: { timeoutSeconds: 0 },
      rules: [
        { match: '*', level: 'deny' },
        { match: 'x(', level: 'nope', colour: 'red' },
      ],
    });
    expect(faults.map((f) => f.path).sort()).toEqual([
      'defaults.timeoutSeconds',
      'extra',
      'rules[1].colour',
      'rules[1].level',
      'rules[1].match',
    ]);
  });

  it('throws a ValidationError whose message names the paths', () => {
    expect(() => PolicyDocument.parse({ rules: [{ match: '*', level: 'block' }] })).toThrow(/rules\[0\]\.level/);
    expect(() => PolicyDocument.parse({ rules: [{ match: '*', level: 'block' }] })).toThrow(
      expect.objectContaining({ code: 'validation_failed', kind: 'invalid' }),
    );
  });
});
