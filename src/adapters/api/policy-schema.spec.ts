import Ajv2020 from 'ajv/dist/2020';
import fc from 'fast-check';
import { PolicyDocument } from '../../domain/policy/policy-document';
import { ValidationError, ValidationFault } from '../../domain/shared/domain-error';
import { POLICY_JSON_SCHEMA, policyOpenApiComponents } from './policy-schema';

const ajv = new Ajv2020({ allErrors: true, strict: true });
const validate = ajv.compile(POLICY_JSON_SCHEMA);

/** The parser's verdict: null when it accepts, else its faults. */
function parserFaults(doc: unknown): ValidationFault[] | null {
  try {
    PolicyDocument.parse(doc);
    return null;
  } catch (e) {
    if (e instanceof ValidationError) return (e.details as { errors: ValidationFault[] }).errors;
    throw e;
  }
}

/** What the schema cannot say (see policy-schema.ts): the server alone refuses these. */
const SCHEMA_BLIND = /names the argument ".*" twice/;

describe('the policy JSON Schema', () => {
  it('is a valid draft 2020-12 schema whose own example the parser accepts', () => {
    expect(ajv.validateSchema(POLICY_JSON_SCHEMA)).toBe(true);
    const [example] = POLICY_JSON_SCHEMA.examples as unknown[];
    expect(validate(example)).toBe(true);
    expect(parserFaults(example)).toBeNull();
  });

  it.each<[string, unknown]>([
    ['an empty document', {}],
    [
      'defaults only',
      {
        defaults: {
          unknownTools: 'deny',
          timeoutSeconds: 86_400,
          approvers: ['requester'],
          trustAgentFlags: false,
          grants: 'none',
        },
      },
    ],
    [
      'every rule field',
      {
        rules: [
          {
            match: 'send_email(to=*@example.com, cc=*)',
            level: 'manual',
            when: { confidenceBelow: 0, estimatedCostAbove: 1e9 },
            requireRole: 'finance',
            approvers: ['admin', 'admin'],
            timeoutSeconds: 1,
            grants: 'agent',
            reason: 'Money',
          },
        ],
      },
    ],
    ['an empty when', { rules: [{ match: '*', level: 'notify', when: {} }] }],
    [
      'shell tools and shell rules',
      {
        defaults: { shellTools: ['shell', '*_sh', 'run?'] },
        rules: [
          { match: 'run(cmd=rm *)', level: 'deny', shell: true },
          { match: 'x', level: 'notify', shell: false },
        ],
      },
    ],
    ['no shell tools', { defaults: { shellTools: [] } }],
    [
      'people named as approvers, in escalation steps and in a quorum',
      {
        defaults: { approvers: ['admin', 'person:ann'] },
        rules: [
          {
            match: 'wire_money',
            level: 'confirm',
            approvers: ['person:Ann@Example.com', 'requester'],
            quorum: { count: 2, of: ['person:cfo', 'finance'] },
            escalate: [{ after: 60, approvers: ['person:ceo@example.com'], notify: ['push', 'email'] }],
          },
          { match: 'pay', level: 'manual', quorum: { count: 1, of: ['person:' + 'x'.repeat(320)] } },
        ],
      },
    ],
    [
      'chat approval allowed and refused',
      {
        rules: [
          { match: 'a', level: 'confirm', allowChatApproval: true, selfApproval: true, quorum: 1 },
          { match: 'b', level: 'manual', allowChatApproval: false, selfApproval: false, quorum: 2 },
        ],
      },
    ],
    [
      'a glob holding commas and = after the first argument',
      { rules: [{ match: 'f(q=a,b=c, d=e=f)', level: 'deny' }] },
    ],
    ['a glob with parentheses inside the argument list', { rules: [{ match: 'f(a=x)y)', level: 'deny' }] }],
    [
      'the longest pattern with the most wildcards',
      { rules: [{ match: '*'.repeat(64) + 'a'.repeat(448), level: 'deny' }] },
    ],
    ['1,000 rules', { rules: Array.from({ length: 1000 }, (_, i) => ({ match: `tool_${i}`, level: 'confirm' })) }],
  ])('accepts what the parser accepts: %s', (_, doc) => {
    expect(parserFaults(doc)).toBeNull();
    expect(validate(doc)).toBe(true);
  });

  it.each<[string, unknown]>([
    ['a document that is not an object', ['rules']],
    ['null', null],
    ['an unknown top-level field', { rule: [] }],
    ['defaults that are null', { defaults: null }],
    ['an unknown default', { defaults: { timeout: 5 } }],
    ['an unknown level', { defaults: { unknownTools: 'sometimes' } }],
    ['a timeout of 0', { defaults: { timeoutSeconds: 0 } }],
    ['a timeout over 30 days', { defaults: { timeoutSeconds: 2_592_001 } }],
    ['a fractional timeout', { defaults: { timeoutSeconds: 1.5 } }],
    ['a timeout as text', { defaults: { timeoutSeconds: '300' } }],
    ['no approvers', { defaults: { approvers: [] } }],
    ['auditors as approvers', { defaults: { approvers: ['auditor'] } }],
    ['agents as approvers', { rules: [{ match: '*', level: 'confirm', approvers: ['admin', 'agent'] }] }],
    ['a person naming no one', { defaults: { approvers: ['person:'] } }],
    ['a person with whitespace', { rules: [{ match: '*', level: 'confirm', approvers: ['person:ann smith'] }] }],
    ['a person with a control character', { defaults: { approvers: ['person:ann\u0000'] } }],
    ['a person over 320 characters', { defaults: { approvers: ['person:' + 'x'.repeat(321)] } }],
    ['a prefix in capitals', { defaults: { approvers: ['Person:ann'] } }],
    [
      'a person naming no one in a quorum',
      { rules: [{ match: '*', level: 'confirm', quorum: { count: 1, of: ['person:'] } }] },
    ],
    [
      'a person with whitespace in an escalation step',
      { rules: [{ match: '*', level: 'confirm', escalate: [{ after: 5, approvers: ['person:\tann'] }] }] },
    ],
    [
      'an unknown channel to notify',
      { rules: [{ match: '*', level: 'confirm', escalate: [{ after: 5, notify: ['sms'] }] }] },
    ],
    ['trustAgentFlags as text', { defaults: { trustAgentFlags: 'no' } }],
    ['shellTools as text', { defaults: { shellTools: 'shell' } }],
    ['a blank shell tool', { defaults: { shellTools: [' '] } }],
    ['a shell tool with an argument list', { defaults: { shellTools: ['shell(cmd=*)'] } }],
    ['over 100 shell tools', { defaults: { shellTools: Array.from({ length: 101 }, (_, i) => `t${i}`) } }],
    ['shell as text', { rules: [{ match: 'x(a=1)', level: 'deny', shell: 'yes' }] }],
    ['shell: true on a match without arguments', { rules: [{ match: 'x', level: 'deny', shell: true }] }],
    ['an unknown grant limit', { defaults: { grants: 'everyone' } }],
    ['rules that are not a list', { rules: { match: '*' } }],
    ['over 1,000 rules', { rules: Array.from({ length: 1001 }, () => ({ match: 'x', level: 'deny' })) }],
    ['a rule without match', { rules: [{ level: 'deny' }] }],
    ['a rule without level', { rules: [{ match: 'x' }] }],
    ['an unknown rule field', { rules: [{ match: 'x', level: 'deny', approver: ['admin'] }] }],
    ['an empty pattern', { rules: [{ match: '', level: 'deny' }] }],
    ['a blank pattern', { rules: [{ match: '  ', level: 'deny' }] }],
    ['")" without "("', { rules: [{ match: 'a)', level: 'deny' }] }],
    ['an argument list not closed', { rules: [{ match: 'f(a=1', level: 'deny' }] }],
    ['no tool name before "("', { rules: [{ match: '(a=1)', level: 'deny' }] }],
    ['an empty argument list', { rules: [{ match: 'f( )', level: 'deny' }] }],
    ['an argument without =', { rules: [{ match: 'f(x)', level: 'deny' }] }],
    ['")" in the tool name', { rules: [{ match: 'f)(a=1)', level: 'deny' }] }],
    ['a pattern over 512 characters', { rules: [{ match: 'a'.repeat(513), level: 'deny' }] }],
    ['65 wildcards', { rules: [{ match: '?'.repeat(65), level: 'deny' }] }],
    ['a confidence condition over 1', { rules: [{ match: '*', level: 'confirm', when: { confidenceBelow: 1.5 } }] }],
    ['a negative cost condition', { rules: [{ match: '*', level: 'confirm', when: { estimatedCostAbove: -1 } }] }],
    ['an unknown condition', { rules: [{ match: '*', level: 'confirm', when: { costAbove: 1 } }] }],
    ['an empty requireRole', { rules: [{ match: '*', level: 'confirm', requireRole: '' }] }],
    ['an empty reason', { rules: [{ match: '*', level: 'confirm', reason: '' }] }],
    ['allowChatApproval as text', { rules: [{ match: '*', level: 'confirm', allowChatApproval: 'yes' }] }],
    ['allowChatApproval: true on a manual rule', { rules: [{ match: '*', level: 'manual', allowChatApproval: true }] }],
    [
      'allowChatApproval: true with selfApproval: false',
      { rules: [{ match: '*', level: 'confirm', selfApproval: false, allowChatApproval: true }] },
    ],
    [
      'allowChatApproval: true with a quorum',
      { rules: [{ match: '*', level: 'confirm', quorum: { count: 1, of: ['admin'] }, allowChatApproval: true }] },
    ],
  ])('refuses what the parser refuses: %s', (_, doc) => {
    expect(parserFaults(doc)).not.toBeNull();
    expect(validate(doc)).toBe(false);
  });

  it('cannot see an argument named twice, which the parser refuses', () => {
    const doc = { rules: [{ match: 'f(a=1, a=2)', level: 'deny' }] };
    expect(parserFaults(doc)).toEqual([{ path: 'rules[0].match', message: expect.stringMatching(SCHEMA_BLIND) }]);
    expect(validate(doc)).toBe(true);
  });

  it('cannot see a quorum that names fewer people than its count and no role, which the parser refuses', () => {
    const doc = { rules: [{ match: 'f', level: 'confirm', quorum: { count: 2, of: ['person:cfo', 'person:CFO'] } }] };
    expect(parserFaults(doc)).toEqual([
      { path: 'rules[0].quorum.of', message: expect.stringMatching(/never be reached/) },
    ]);
    expect(validate(doc)).toBe(true);
  });

  /** Mostly a right value, sometimes one of the wrong ones, so both verdicts are common. */
  const mostly = <T, U>(right: fc.Arbitrary<T>, wrong: fc.Arbitrary<U>) =>
    fc.oneof({ weight: 12, arbitrary: right }, { weight: 1, arbitrary: wrong });
  /** A record of optional fields, now and then with a field no version of the document knows. */
  const fields = <T extends Record<string, fc.Arbitrary<unknown>>>(known: T) =>
    mostly(
      fc.record(known, { requiredKeys: [] }),
      fc.record({ ...known, unknownField: fc.constant(1) }, { requiredKeys: ['unknownField'] }),
    );

  const level = mostly(
    fc.constantFrom('deny', 'manual', 'confirm', 'notify', 'automatic'),
    fc.constantFrom('sometimes', '', 3),
  );
  const timeout = mostly(fc.integer({ min: 1, max: 2_592_000 }), fc.constantFrom(0, -1, 2_592_001, 1.5, '300', null));
  const approvers = mostly(
    fc.array(fc.constantFrom('approver', 'admin', 'requester', 'person:ann', 'person:Bo@Example.com'), {
      minLength: 1,
      maxLength: 3,
    }),
    fc.array(fc.constantFrom('admin', 'auditor', 'agent', '', 7, 'person:', 'person:a b', 'Person:ann'), {
      maxLength: 3,
    }),
  );
  const grants = mostly(fc.constantFrom('none', 'conversation', 'agent', 'tenant'), fc.constantFrom('everyone', true));
  /** Patterns from the characters that matter to the parser, so syntax faults are common. */
  const pattern = fc.oneof(
    fc.string({ unit: fc.constantFrom('a', 'b', '_', '*', '?', '(', ')', '=', ',', ' ', '.', '$'), maxLength: 14 }),
    fc.constantFrom(
      'get_*',
      'shell(cmd=rm *)',
      'f(a=1, b=2)',
      'f(a=1, a=2)',
      '*'.repeat(65),
      'x'.repeat(513),
      'x'.repeat(512),
    ),
    fc.integer(),
  );
  const unit = mostly(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(-0.5, 1.5, '0.5'));
  const when = fields({
    confidenceBelow: unit,
    estimatedCostAbove: mostly(fc.double({ min: 0, max: 1e6, noNaN: true }), fc.constantFrom(-1, '5')),
  });
  const text = mostly(fc.constantFrom('admin', 'Low confidence', ' '), fc.constantFrom('', 7));
  const rule = mostly(
    fields({
      match: pattern,
      level,
      when,
      requireRole: text,
      approvers,
      timeoutSeconds: timeout,
      grants,
      shell: mostly(fc.boolean(), fc.constant('yes')),
      selfApproval: mostly(fc.boolean(), fc.constant('no')),
      allowChatApproval: mostly(fc.boolean(), fc.constant('yes')),
      reason: text,
    }).map((r) => ({ match: 'x', level: 'deny', ...r })),
    fc.constantFrom(null, 'rule', [], {}),
  );
  const shellTools = mostly(
    fc.array(fc.constantFrom('shell', '*_sh', 'run?', 'shell'), { maxLength: 3 }),
    fc.constantFrom('shell', [''], [' '], ['f(a=1)'], [3], ['?'.repeat(65)]),
  );
  const defaults = mostly(
    fields({
      unknownTools: level,
      timeoutSeconds: timeout,
      approvers,
      trustAgentFlags: mostly(fc.boolean(), fc.constant('yes')),
      grants,
      shellTools,
    }),
    fc.constantFrom(null, 'confirm'),
  );
  const document = mostly(
    fields({ defaults, rules: mostly(fc.array(rule, { maxLength: 4 }), fc.constantFrom({}, 'all')) }),
    fc.oneof(fc.constant(null), fc.string(), fc.array(fc.anything(), { maxLength: 2 })),
  );

  it('gives the verdict the parser gives on generated documents (but for an argument named twice)', () => {
    const seen = { accepted: 0, refused: 0 };
    fc.assert(
      fc.property(document, (doc) => {
        const faults = parserFaults(doc);
        const schemaAccepts = validate(doc);
        if (faults === null) {
          seen.accepted++;
          return schemaAccepts === true;
        }
        seen.refused++;
        return schemaAccepts === faults.every((f) => SCHEMA_BLIND.test(f.message));
      }),
      { numRuns: 3000 },
    );
    // Both verdicts must be common, or the property says little.
    expect(seen.accepted).toBeGreaterThan(150);
    expect(seen.refused).toBeGreaterThan(150);
  });

  it('becomes OpenAPI components whose every reference resolves among them', () => {
    const components = policyOpenApiComponents();
    const refs = JSON.stringify(components).match(/"\$ref":"[^"]*"/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs)
      expect(Object.keys(components)).toContain(
        ref.replace(/^"\$ref":"#\/components\/schemas\//, '').replace(/"$/, ''),
      );
    expect(JSON.stringify(components)).not.toContain('$defs');
    expect(components.PolicyDefaultsInForce.required).toEqual([
      'unknownTools',
      'timeoutSeconds',
      'approvers',
      'trustAgentFlags',
      'grants',
      'selfApproval',
    ]);
  });
});
