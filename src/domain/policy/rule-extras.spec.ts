import fc from 'fast-check';
import { ValidationError } from '../shared/domain-error';
import { ApprovalPolicy, PolicyVerdict } from './approval-policy';
import type { ProposedCallFacts, RuleUsage } from './call-facts';
import { analysePolicy, globCovers } from './policy-analysis';
import { PolicyDocument } from './policy-document';
import { ToolPattern } from './tool-pattern';

// Issue 28's rule fields: triggers, shadow rules, decisions, redact, decisionTimeout, governance, and the analysis.

function verdict(doc: unknown, call: Partial<ProposedCallFacts> = {}): PolicyVerdict {
  return ApprovalPolicy.evaluate(
    { toolName: 'delete_row', arguments: {}, ...call },
    {
      policy: PolicyDocument.parse(doc),
      policyVersion: 1,
      grants: [],
      conversation: { id: 'c', agentId: 'a', user: { id: 'u', roles: [] } },
      now: new Date('2026-11-28T12:00:00Z'),
    },
  );
}

function faults(doc: unknown): string[] {
  try {
    PolicyDocument.parse(doc);
    return [];
  } catch (e) {
    return (e as ValidationError).faults.map((f) => `${f.path}: ${f.message}`);
  }
}

const usage = (entries: Array<[number, RuleUsage]>) => new Map(entries);

describe('velocity and budget triggers', () => {
  const rate = {
    defaults: { unknownTools: 'automatic' },
    rules: [{ match: 'delete_*', level: 'confirm', when: { rateAbove: { count: 20, per: '1h', by: 'agent' } } }],
  };

  it('hold once the count with this call is above the limit, and say the count', () => {
    expect(verdict(rate, { usage: usage([[0, { calls: 19 }]]) }).level).toBe('automatic');
    const held = verdict(rate, { usage: usage([[0, { calls: 20 }]]) });
    expect(held.level).toBe('confirm');
    expect(held.reason).toBe('Rule 0 (delete_*): confirm (rateAbove: 21 calls in 1h by agent, above 20)');
  });

  it('fail closed: a count not made is a count crossed', () => {
    const held = verdict(rate);
    expect(held.level).toBe('confirm');
    expect(held.reason).toContain('not counted, held as crossed');
  });

  it('sum this call’s cost with those before it', () => {
    const doc = {
      defaults: { unknownTools: 'automatic' },
      rules: [{ match: 'pay', level: 'manual', when: { costAbove: { total: 500, per: '1d', by: 'tenant' } } }],
    };
    const at = (before: number, cost?: number) =>
      verdict(doc, { toolName: 'pay', estimatedCost: cost, usage: usage([[0, { cost: before }]]) }).level;
    expect(at(400, 100)).toBe('automatic');
    expect(at(400, 100.01)).toBe('manual');
    expect(at(600)).toBe('manual');
  });

  it('hold exactly when calls before + 1 > count (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 1000 }), (count, before) => {
        const doc = { ...rate, rules: [{ ...rate.rules[0], when: { rateAbove: { count, per: 60, by: 'tenant' } } }] };
        const level = verdict(doc, { usage: usage([[0, { calls: before }]]) }).level;
        return (level === 'confirm') === before + 1 > count;
      }),
    );
  });

  it('refuse windows and scopes out of bounds', () => {
    expect(
      faults({ rules: [{ match: 'x', level: 'confirm', when: { rateAbove: { count: 1, per: '40d', by: 'agent' } } }] }),
    ).toEqual([
      'rules[0].when.rateAbove.per: must be whole seconds from 1 to 2678400 (a number, or a string such as "90s", "2m", "1h", "7d")',
    ]);
    expect(
      faults({ rules: [{ match: 'x', level: 'confirm', when: { costAbove: { total: 1, per: 60, by: 'team' } } }] }),
    ).toEqual(['rules[0].when.costAbove.by: must be one of agent, conversation, tenant']);
    expect(faults({ rules: [{ match: 'x', level: 'confirm', when: { rateAbove: { count: 1 } } }] })).toEqual([
      'rules[0].when.rateAbove.per: is required',
      'rules[0].when.rateAbove.by: is required',
    ]);
  });
});

describe('shadow rules', () => {
  const doc = {
    defaults: { unknownTools: 'automatic' },
    rules: [
      { match: 'delete_*', level: 'deny', mode: 'shadow' },
      { match: 'delete_row', level: 'confirm' },
    ],
  };

  it('never decide, and are recorded when they would have', () => {
    const v = verdict(doc);
    expect(v.level).toBe('confirm');
    expect(v.rule).toBe(1);
    expect(v.shadow).toEqual({ rule: 0, level: 'deny', reason: 'Denied by policy rule 0 (delete_*)' });
    expect(verdict(doc, { toolName: 'delete_file' })).toMatchObject({ level: 'automatic', shadow: { rule: 0 } });
    expect(verdict(doc, { toolName: 'read' }).shadow).toBeUndefined();
  });

  it('are not recorded when an enforced rule would decide anyway', () => {
    const laxShadow = {
      rules: [
        { match: 'delete_row', level: 'deny' },
        { match: 'delete_*', level: 'automatic', mode: 'shadow' },
      ],
    };
    expect(verdict(laxShadow).shadow).toBeUndefined();
  });

  it('keep `mode: shadow` when written back and drop `mode: enforce`', () => {
    expect(PolicyDocument.parse(doc).toJSON().rules[0].mode).toBe('shadow');
    expect(PolicyDocument.parse({ rules: [{ match: 'x', level: 'deny', mode: 'enforce' }] }).toJSON().rules[0]).toEqual(
      {
        match: 'x',
        level: 'deny',
      },
    );
  });
});

describe('what people may decide', () => {
  it('is carried by the verdict of held calls only', () => {
    const held = verdict({
      rules: [
        {
          match: 'delete_row',
          level: 'confirm',
          allowedDecisions: ['approve', 'reject', 'approve'],
          rejectReasons: ['Wrong table', ' Too many rows '],
          rejectFreeText: true,
        },
      ],
    });
    expect(held).toMatchObject({
      allowedDecisions: ['approve', 'reject'],
      rejectReasons: ['Wrong table', 'Too many rows'],
      rejectFreeText: true,
    });
  });

  it('refuses fields that could never apply', () => {
    expect(faults({ rules: [{ match: 'x', level: 'automatic', allowedDecisions: ['approve'] }] })).toEqual([
      'rules[0].allowedDecisions: applies to calls a person decides (confirm, manual), not to automatic',
    ]);
    expect(faults({ rules: [{ match: 'x', level: 'confirm', rejectFreeText: true }] })).toEqual([
      'rules[0].rejectFreeText: applies with rejectReasons: without them any reason may be written',
    ]);
    expect(
      faults({ rules: [{ match: 'x', level: 'confirm', allowedDecisions: ['approve'], rejectReasons: ['No'] }] }),
    ).toEqual(['rules[0].rejectReasons: needs "reject" among allowedDecisions']);
    expect(faults({ rules: [{ match: 'x', level: 'confirm', allowedDecisions: ['veto'] }] })).toEqual([
      'rules[0].allowedDecisions: must be a non-empty list of approve, edit, reject, always_allow, respond',
    ]);
    expect(faults({ rules: [{ match: 'x', level: 'confirm', rejectReasons: ['No', 'No'] }] })).toEqual([
      'rules[0].rejectReasons: must not repeat a reason',
    ]);
  });
});

describe('decisionTimeout', () => {
  it('takes seconds or a duration up to 30 days, kept as timeoutSeconds', () => {
    expect(verdict({ rules: [{ match: 'delete_row', level: 'confirm', decisionTimeout: '7d' }] }).timeoutSeconds).toBe(
      604_800,
    );
    expect(PolicyDocument.parse({ defaults: { decisionTimeout: '30d' } }).defaults.timeoutSeconds).toBe(2_592_000);
    expect(faults({ defaults: { decisionTimeout: '31d' } })).toHaveLength(1);
    expect(faults({ rules: [{ match: 'x', level: 'confirm', timeoutSeconds: 60, decisionTimeout: 60 }] })).toEqual([
      'rules[0].decisionTimeout: is another way to write timeoutSeconds: give one of them',
    ]);
  });

  it('reads every duration as the seconds it says (property)', () => {
    const units = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
    fc.assert(
      fc.property(
        fc.constantFrom(...(Object.keys(units) as Array<keyof typeof units>)),
        fc.integer({ min: 1, max: 30 }),
        (unit, n) => {
          const doc = PolicyDocument.parse({ defaults: { decisionTimeout: `${n}${unit}` } });
          return doc.defaults.timeoutSeconds === n * units[unit];
        },
      ),
    );
  });
});

describe('redact and governance', () => {
  it('gathers the paths of defaults and of every rule naming the tool, whatever its level', () => {
    const doc = PolicyDocument.parse({
      defaults: { redact: ['password'] },
      rules: [
        { match: 'http_*', level: 'automatic', redact: ['headers.authorization', '*token*'] },
        { match: 'http_get(url=https://*)', level: 'deny', redact: ['cookie'], mode: 'shadow' },
        { match: 'db_*', level: 'confirm', redact: ['dsn'] },
      ],
    });
    expect(doc.redactionsFor('http_get')).toEqual(['password', 'headers.authorization', '*token*', 'cookie']);
    expect(doc.redactionsFor('db_query')).toEqual(['password', 'dsn']);
    expect(doc.redactionsFor('other')).toEqual(['password']);
    expect(faults({ defaults: { redact: ['a..b'] } })).toEqual([
      'defaults.redact[0]: must be a dotted path without empty segments, as in headers.authorization',
    ]);
  });

  it('reads governance: a quorum of 1 is left out', () => {
    expect(PolicyDocument.parse({ governance: { quorum: 2 } }).governance).toEqual({ quorum: 2 });
    expect(PolicyDocument.parse({ governance: { quorum: 1 } }).toJSON()).not.toHaveProperty('governance');
    expect(faults({ governance: { quorum: 11 } })).toEqual(['governance.quorum: must be an integer from 1 to 10']);
  });
});

describe('the policy analysis', () => {
  const analyse = (rules: unknown[]) => analysePolicy(PolicyDocument.parse({ rules }));

  it('finds rules that never decide, and why', () => {
    const found = analyse([
      { match: 'delete_*', level: 'deny' },
      { match: 'delete_row', level: 'confirm' },
      { match: 'get_*', level: 'automatic' },
      { match: 'get_user(id=1*)', level: 'automatic' },
      { match: 'get_user', level: 'confirm', when: { confidenceBelow: 0.5 } },
    ]);
    expect(found.map((f) => [f.kind, f.rule, f.by])).toEqual([
      ['unreachable', 1, 0],
      ['unreachable', 3, 2],
      ['order', 4, 2],
    ]);
    expect(found[0].message).toContain('is stricter');
  });

  it('does not call a rule dead when the wider one has a condition or is a shadow', () => {
    expect(
      analyse([
        { match: '*', level: 'deny', when: { confidenceBelow: 0.1 } },
        { match: 'x', level: 'confirm', mode: 'shadow' },
        { match: 'x', level: 'confirm' },
      ]).filter((f) => f.kind === 'unreachable'),
    ).toEqual([]);
  });

  it('covers with certainty only: a literal a glob accepts, as the pattern matcher does (property)', () => {
    const name = fc.stringMatching(/^[a-c_]{0,6}$/);
    const glob = fc.stringMatching(/^[a-c_*?]{1,6}$/);
    fc.assert(
      fc.property(glob, name, (g, n) => {
        fc.pre(n.length > 0);
        return globCovers(g, n) === ToolPattern.parse(g).matchesTool(n);
      }),
    );
  });
});
