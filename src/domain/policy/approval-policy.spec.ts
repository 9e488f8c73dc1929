import fc from 'fast-check';
import {
  ApprovalPolicy,
  GrantFacts,
  PolicyContext,
  PolicyVerdict,
  ProposedCallFacts,
  ToolFlags,
} from './approval-policy';
import { PolicyDocument, PolicyRule } from './policy-document';
import { SUPERVISION_LEVELS, SupervisionLevel, strictness } from './supervision-level';
import { ToolPattern } from './tool-pattern';

/** The instant calls are judged at: no grant here expires. */
const NOW = new Date('2025-03-01T12:00:00.000Z');

type Rule = Partial<PolicyRule> & Pick<PolicyRule, 'match' | 'level'>;

interface Case {
  rules?: Rule[];
  defaults?: Record<string, unknown>;
  call?: Partial<ProposedCallFacts>;
  tool?: PolicyContext['tool'];
  grants?: GrantFacts[];
  /** null: a conversation without user. */
  roles?: string[] | null;
}

const CONVERSATION = { id: 'conv_1', agentId: 'agent_1' };

function evaluate({
  rules = [],
  defaults = {},
  call = {},
  tool,
  grants = [],
  roles = ['developer'],
}: Case): PolicyVerdict {
  return ApprovalPolicy.evaluate(
    { toolName: 'delete_source', arguments: {}, ...call },
    {
      policy: PolicyDocument.parse({ defaults, rules }),
      policyVersion: 7,
      tool,
      grants,
      conversation: { ...CONVERSATION, ...(roles && { user: { id: 'user_1', roles } }) },
      now: NOW,
    },
  );
}

const admin = (flags: ToolFlags) => ({ flags, registeredBy: 'admin' as const });
const agent = (flags: ToolFlags) => ({ flags, registeredBy: 'agent' as const });
const grant = (scope: GrantFacts['scope'], extra: Partial<GrantFacts> = {}): GrantFacts => ({
  id: 'grant_1',
  toolName: 'delete_source',
  scope,
  ...extra,
});

describe('evaluating a proposed call, in the order of the contract', () => {
  it.each<[string, Case, Partial<PolicyVerdict>]>([
    // 2. matching rules
    [
      'a matching rule decides over the tool flags',
      { rules: [{ match: 'delete_*', level: 'automatic' }], tool: admin({ destructive: true }) },
      { level: 'automatic', rule: 0, reason: 'Rule 0 (delete_*): automatic' },
    ],
    [
      'the strictest matching rule decides',
      {
        rules: [
          { match: '*', level: 'notify' },
          { match: 'delete_*', level: 'manual' },
          { match: 'delete_source', level: 'confirm' },
        ],
      },
      { level: 'manual', rule: 1 },
    ],
    [
      'ties go to the earlier rule',
      {
        rules: [
          { match: 'get_*', level: 'deny' },
          { match: 'delete_*', level: 'confirm' },
          { match: '*', level: 'confirm' },
        ],
      },
      { level: 'confirm', rule: 1 },
    ],
    [
      'a rule whose pattern does not match is ignored',
      { rules: [{ match: 'get_*', level: 'deny' }], tool: admin({ isReadOnly: true }) },
      { level: 'automatic', rule: null },
    ],
    [
      'a rule matches on arguments',
      {
        rules: [{ match: 'shell(cmd=rm *)', level: 'deny' }],
        call: { toolName: 'shell', arguments: { cmd: 'rm -rf /' } },
      },
      { level: 'deny', rule: 0, reason: 'Denied by policy rule 0 (shell(cmd=rm *))' },
    ],
    [
      'a rule on arguments ignores a call without them',
      { rules: [{ match: 'shell(cmd=rm *)', level: 'deny' }], call: { toolName: 'shell', arguments: {} } },
      { level: 'confirm', rule: null },
    ],
    [
      'a deny rule gives its own reason when it has one',
      { rules: [{ match: '*', level: 'deny', reason: 'Deleting sources is off this week' }] },
      { level: 'deny', reason: 'Deleting sources is off this week' },
    ],
    [
      'confidenceBelow matches a call less confident than the bound',
      { rules: [{ match: '*', level: 'manual', when: { confidenceBelow: 0.6 } }], call: { confidence: 0.59 } },
      { level: 'manual', rule: 0 },
    ],
    [
      'confidenceBelow does not match a call at the bound',
      { rules: [{ match: '*', level: 'manual', when: { confidenceBelow: 0.6 } }], call: { confidence: 0.6 } },
      { level: 'confirm', rule: null },
    ],
    [
      'confidenceBelow never matches a call without confidence',
      { rules: [{ match: '*', level: 'manual', when: { confidenceBelow: 1 } }] },
      { level: 'confirm', rule: null },
    ],
    [
      'estimatedCostAbove matches a dearer call',
      { rules: [{ match: '*', level: 'manual', when: { estimatedCostAbove: 10 } }], call: { estimatedCost: 10.01 } },
      { level: 'manual', rule: 0 },
    ],
    [
      'estimatedCostAbove does not match a call at the bound',
      { rules: [{ match: '*', level: 'manual', when: { estimatedCostAbove: 10 } }], call: { estimatedCost: 10 } },
      { level: 'confirm', rule: null },
    ],
    [
      'estimatedCostAbove never matches a call without a cost',
      { rules: [{ match: '*', level: 'manual', when: { estimatedCostAbove: 0 } }] },
      { level: 'confirm', rule: null },
    ],
    [
      'every condition of a rule must hold',
      {
        rules: [{ match: '*', level: 'manual', when: { confidenceBelow: 0.5, estimatedCostAbove: 10 } }],
        call: { confidence: 0.4, estimatedCost: 5 },
      },
      { level: 'confirm', rule: null },
    ],
    [
      'a rule with empty conditions always matches',
      { rules: [{ match: '*', level: 'notify', when: {} }] },
      { level: 'notify', rule: 0 },
    ],
    // 3. tool flags
    [
      'a read-only tool runs automatically',
      { tool: admin({ isReadOnly: true }) },
      { level: 'automatic', rule: null, reason: 'Tool flags: isReadOnly → automatic' },
    ],
    [
      'a destructive tool needs confirmation',
      { tool: admin({ destructive: true }) },
      { level: 'confirm', rule: null, reason: 'Tool flags: destructive → confirm' },
    ],
    [
      'a tool that requires approval needs confirmation',
      { tool: admin({ requiresApproval: true }) },
      { level: 'confirm', reason: 'Tool flags: requiresApproval → confirm' },
    ],
    [
      'read-only wins over destructive',
      { tool: admin({ isReadOnly: true, destructive: true }) },
      { level: 'automatic' },
    ],
    [
      'a registered tool without flags runs automatically',
      { tool: admin({}), defaults: { unknownTools: 'manual' } },
      { level: 'automatic' },
    ],
    [
      'registry flags count, annotations do not, for a registered tool',
      { tool: agent({}), call: { annotations: { destructive: true } } },
      { level: 'automatic' },
    ],
    [
      'annotations count for a tool not registered',
      { call: { annotations: { destructive: true } } },
      { level: 'confirm', reason: 'Tool flags (annotations): destructive → confirm' },
    ],
    [
      'annotations with every flag false still make the tool known',
      { call: { annotations: { isReadOnly: false } }, defaults: { unknownTools: 'deny' } },
      { level: 'automatic' },
    ],
    [
      'untrusted agent flags are not laxer than unknownTools',
      { tool: agent({ isReadOnly: true }), defaults: { trustAgentFlags: false } },
      { level: 'confirm', rule: null },
    ],
    [
      'untrusted annotations are not laxer than unknownTools',
      { call: { annotations: { isReadOnly: true } }, defaults: { trustAgentFlags: false, unknownTools: 'manual' } },
      { level: 'manual' },
    ],
    [
      'untrusted agent flags stricter than unknownTools stand',
      { tool: agent({ destructive: true }), defaults: { trustAgentFlags: false, unknownTools: 'notify' } },
      { level: 'confirm', reason: 'Tool flags: destructive → confirm' },
    ],
    [
      'admin flags are trusted even when agent flags are not',
      { tool: admin({ isReadOnly: true }), defaults: { trustAgentFlags: false } },
      { level: 'automatic' },
    ],
    ['agent flags are trusted by default', { tool: agent({ isReadOnly: true }) }, { level: 'automatic' }],
    // 4. unknown tools
    [
      'an unknown tool gets defaults.unknownTools',
      {},
      { level: 'confirm', rule: null, reason: 'Unknown tool: defaults.unknownTools = confirm' },
    ],
    ['an unknown tool follows a stricter default', { defaults: { unknownTools: 'manual' } }, { level: 'manual' }],
    // 5. standing grants
    [
      'a tenant grant turns confirm into automatic',
      { tool: admin({ destructive: true }), grants: [grant('tenant')] },
      {
        level: 'automatic',
        rule: null,
        grantId: 'grant_1',
        reason: 'Allowed by standing grant grant_1 (scope tenant)',
      },
    ],
    [
      'an agent grant covers the same agent',
      { grants: [grant('agent', { agentId: 'agent_1' })] },
      { level: 'automatic', grantId: 'grant_1' },
    ],
    [
      'an agent grant does not cover another agent',
      { grants: [grant('agent', { agentId: 'agent_2' })] },
      { level: 'confirm', grantId: undefined },
    ],
    [
      'a conversation grant covers the same conversation',
      { grants: [grant('conversation', { conversationId: 'conv_1' })] },
      { level: 'automatic', reason: 'Allowed by standing grant grant_1 (scope conversation)' },
    ],
    [
      'a conversation grant does not cover another conversation',
      { grants: [grant('conversation', { conversationId: 'conv_2' })] },
      { level: 'confirm', grantId: undefined },
    ],
    [
      'a grant for another tool does not cover the call',
      { grants: [grant('tenant', { toolName: 'delete_sources' })] },
      { level: 'confirm', grantId: undefined },
    ],
    [
      'a grant turns confirm from a rule into automatic and keeps the rule',
      { rules: [{ match: '*', level: 'confirm' }], grants: [grant('tenant')] },
      { level: 'automatic', rule: 0, grantId: 'grant_1' },
    ],
    [
      'a grant never loosens manual',
      { rules: [{ match: '*', level: 'manual' }], grants: [grant('tenant')] },
      { level: 'manual', grantId: undefined },
    ],
    [
      'a grant never loosens deny',
      { rules: [{ match: '*', level: 'deny' }], grants: [grant('tenant')] },
      { level: 'deny', grantId: undefined },
    ],
    [
      'a grant leaves notify alone',
      { rules: [{ match: '*', level: 'notify' }], grants: [grant('tenant')] },
      { level: 'notify', grantId: undefined },
    ],
    [
      'a grant never covers a call whose rule has selfApproval: false, and the reason says so',
      { rules: [{ match: '*', level: 'confirm', selfApproval: false }], grants: [grant('tenant')] },
      {
        level: 'confirm',
        rule: 0,
        grantId: undefined,
        selfApproval: false,
        reason:
          'Rule 0 (*): confirm; standing grant grant_1 not applied: separation of duties (selfApproval: false) needs a person to approve each call',
      },
    ],
    [
      'a grant never covers a call held by the tool flags when defaults.selfApproval is false',
      { tool: admin({ requiresApproval: true }), defaults: { selfApproval: false }, grants: [grant('tenant')] },
      { level: 'confirm', grantId: undefined, reason: expect.stringContaining('not applied: separation of duties') },
    ],
    [
      'a rule with selfApproval: true is covered even where the defaults say false',
      {
        rules: [{ match: '*', level: 'confirm', selfApproval: true }],
        defaults: { selfApproval: false },
        grants: [grant('tenant')],
      },
      { level: 'automatic', grantId: 'grant_1' },
    ],
    // 6. requireRole
    [
      'a user without the required role is denied',
      { rules: [{ match: '*', level: 'confirm', requireRole: 'admin' }] },
      { level: 'deny', rule: 0, reason: 'Permission denied: admin role required' },
    ],
    [
      'a user with the required role gets the rule level',
      { rules: [{ match: '*', level: 'confirm', requireRole: 'admin' }], roles: ['admin'] },
      { level: 'confirm', rule: 0 },
    ],
    [
      'a conversation without user holds no role',
      { rules: [{ match: '*', level: 'automatic', requireRole: 'requester' }], roles: null },
      { level: 'deny', reason: 'Permission denied: requester role required' },
    ],
    [
      'a missing role denies even what a grant let through',
      { rules: [{ match: '*', level: 'confirm', requireRole: 'admin' }], grants: [grant('tenant')] },
      { level: 'deny', grantId: undefined, reason: 'Permission denied: admin role required' },
    ],
    [
      'only the deciding rule requires a role',
      {
        rules: [
          { match: '*', level: 'notify', requireRole: 'admin' },
          { match: 'delete_*', level: 'confirm' },
        ],
      },
      { level: 'confirm', rule: 1 },
    ],
    [
      'a deny rule keeps its own reason when a role is missing too',
      { rules: [{ match: '*', level: 'deny', requireRole: 'admin', reason: 'never' }] },
      { level: 'deny', reason: 'never' },
    ],
  ])('%s', (_name, c, expected) => {
    const verdict = evaluate(c);
    // `grantId: undefined` in a case means the verdict carries no grantId at all.
    const { grantId, ...rest } = expected;
    expect(verdict).toMatchObject(rest);
    if ('grantId' in expected) expect(verdict.grantId).toBe(grantId);
  });
});

describe('whether a chat client may approve (chatApproval)', () => {
  it.each<[string, Case, boolean]>([
    ['a confirm call of a tool without flags', { rules: [{ match: '*', level: 'confirm' }] }, true],
    ['a confirm call held by requiresApproval', { tool: admin({ requiresApproval: true }) }, true],
    ['a destructive tool', { tool: admin({ destructive: true }) }, false],
    [
      'a destructive tool, even with allowChatApproval: true',
      { rules: [{ match: '*', level: 'confirm', allowChatApproval: true }], tool: admin({ destructive: true }) },
      false,
    ],
    ['a destructive annotation', { call: { annotations: { destructive: true } } }, false],
    ['selfApproval: false', { rules: [{ match: '*', level: 'confirm', selfApproval: false }] }, false],
    [
      'defaults.selfApproval false',
      { rules: [{ match: '*', level: 'confirm' }], defaults: { selfApproval: false } },
      false,
    ],
    ['a quorum', { rules: [{ match: '*', level: 'confirm', quorum: { count: 2 } }] }, false],
    ['a manual call', { rules: [{ match: '*', level: 'manual' }] }, false],
    ['allowChatApproval: false', { rules: [{ match: '*', level: 'confirm', allowChatApproval: false }] }, false],
  ])('%s: %s', (_name, c, allowed) => {
    const verdict = evaluate(c);
    if (allowed) expect(verdict).not.toHaveProperty('chatApproval');
    else expect(verdict.chatApproval).toBe(false);
  });

  it('is not said of a call no person decides', () => {
    expect(evaluate({ rules: [{ match: '*', level: 'automatic', allowChatApproval: false }] })).not.toHaveProperty(
      'chatApproval',
    );
  });
});

describe('the verdict of an evaluation', () => {
  it('records the policy version of the context', () => {
    expect(evaluate({}).policyVersion).toBe(7);
  });

  it('takes approvers, timeout and grants from the defaults when no rule decides', () => {
    expect(evaluate({ defaults: { approvers: ['admin'], timeoutSeconds: 60 } })).toMatchObject({
      approvers: ['admin'],
      timeoutSeconds: 60,
      grants: 'tenant',
    });
    expect(evaluate({ defaults: { grants: 'none' } })).toMatchObject({ grants: 'none' });
  });

  it('takes approvers, timeout and grants from the deciding rule when it has them', () => {
    const v = evaluate({
      defaults: { grants: 'none' },
      rules: [
        { match: '*', level: 'confirm', approvers: ['requester', 'admin'], timeoutSeconds: 120, grants: 'agent' },
      ],
    });
    expect(v).toMatchObject({ approvers: ['requester', 'admin'], timeoutSeconds: 120, grants: 'agent' });
  });

  it('falls back to the defaults for what the deciding rule leaves out', () => {
    const v = evaluate({ rules: [{ match: '*', level: 'confirm', timeoutSeconds: 120 }] });
    expect(v).toMatchObject({ approvers: ['approver', 'admin'], timeoutSeconds: 120 });
  });

  it('has no grantId property unless a grant decided', () => {
    expect(evaluate({})).not.toHaveProperty('grantId');
  });
});

// ---- properties where the steps combine ----

const TOOL_NAMES = ['get_user', 'delete_source', 'shell', 'send_mail'] as const;
const level = fc.constantFrom(...SUPERVISION_LEVELS);
const ruleArb: fc.Arbitrary<Rule> = fc.record(
  {
    match: fc.constantFrom('*', 'get_*', 'delete_source', 'shell(cmd=rm *)', 's*', '*_*', 'send_?ail', 'nothing'),
    level,
    when: fc.record(
      { confidenceBelow: fc.constantFrom(0.3, 0.6, 1), estimatedCostAbove: fc.constantFrom(0, 10) },
      { requiredKeys: [] },
    ),
    requireRole: fc.constantFrom('admin', 'requester'),
  },
  { requiredKeys: ['match', 'level'] },
);
const flags = fc.record(
  { isReadOnly: fc.boolean(), requiresApproval: fc.boolean(), destructive: fc.boolean() },
  { requiredKeys: [] },
);
const callArb: fc.Arbitrary<ProposedCallFacts> = fc.record(
  {
    toolName: fc.constantFrom(...TOOL_NAMES),
    arguments: fc.constantFrom({}, { cmd: 'rm -rf /' }, { cmd: 'ls' }),
    annotations: flags,
    confidence: fc.double({ min: 0, max: 1, noNaN: true }),
    estimatedCost: fc.constantFrom(0, 5, 10, 50),
  },
  { requiredKeys: ['toolName', 'arguments'] },
);
const grantArb: fc.Arbitrary<GrantFacts> = fc.record({
  id: fc.constantFrom('grant_a', 'grant_b'),
  toolName: fc.constantFrom(...TOOL_NAMES),
  scope: fc.constantFrom('conversation', 'agent', 'tenant'),
  conversationId: fc.constantFrom('conv_1', 'conv_2'),
  agentId: fc.constantFrom('agent_1', 'agent_2'),
});
const contextArb = fc.record({
  rules: fc.array(ruleArb, { maxLength: 6 }),
  defaults: fc.record({ unknownTools: level, trustAgentFlags: fc.boolean() }, { requiredKeys: [] }),
  tool: fc.option(fc.record({ flags, registeredBy: fc.constantFrom('admin' as const, 'agent' as const) }), {
    nil: undefined,
  }),
  grants: fc.array(grantArb, { maxLength: 3 }),
  user: fc.option(fc.record({ id: fc.constant('user_1'), roles: fc.subarray(['admin', 'requester', 'developer']) }), {
    nil: undefined,
  }),
});
type Setup = typeof contextArb extends fc.Arbitrary<infer T> ? T : never;

function run(call: ProposedCallFacts, s: Setup, changes: Partial<Setup> = {}): PolicyVerdict {
  const { rules, defaults, tool, grants, user } = { ...s, ...changes };
  return ApprovalPolicy.evaluate(call, {
    policy: PolicyDocument.parse({ defaults, rules }),
    policyVersion: 1,
    tool,
    grants,
    conversation: { ...CONVERSATION, user },
    now: NOW,
  });
}

/** Written apart from the implementation: does this rule match this call? */
function ruleMatches(rule: Rule, call: ProposedCallFacts): boolean {
  const { confidenceBelow, estimatedCostAbove } = rule.when ?? {};
  if (confidenceBelow !== undefined && !(call.confidence !== undefined && call.confidence < confidenceBelow))
    return false;
  if (
    estimatedCostAbove !== undefined &&
    !(call.estimatedCost !== undefined && call.estimatedCost > estimatedCostAbove)
  )
    return false;
  return ToolPattern.parse(rule.match).matches(call.toolName, call.arguments);
}

const laxerThan = (a: SupervisionLevel, b: SupervisionLevel) => strictness(a) > strictness(b);

describe('evaluation order, for any policy, tool, grants and user', () => {
  it('adding a matching deny rule anywhere always yields deny', () => {
    fc.assert(
      fc.property(callArb, contextArb, fc.nat(), fc.constantFrom('*', 'exact'), (call, s, at, match) => {
        const rules = [...s.rules];
        rules.splice(at % (rules.length + 1), 0, { match: match === '*' ? '*' : call.toolName, level: 'deny' });
        expect(run(call, s, { rules }).level).toBe('deny');
      }),
    );
  });

  it('a grant never loosens manual or deny, and changes nothing but confirm into automatic', () => {
    fc.assert(
      fc.property(callArb, contextArb, (call, s) => {
        const without = run(call, s, { grants: [] });
        const withGrants = run(call, s);
        if (withGrants.grantId === undefined) {
          // Only separation of duties may name a grant it did not apply.
          if (withGrants.reason !== without.reason) {
            expect(withGrants.selfApproval).toBe(false);
            expect(withGrants.reason).toMatch(/; standing grant \S+ not applied: separation of duties/);
          }
          expect({ ...withGrants, reason: without.reason }).toEqual(without);
        } else {
          expect(without.level).toBe('confirm');
          expect(without.selfApproval).toBeUndefined();
          // An automatic call has no chat approval to allow or refuse.
          const { chatApproval: _held, ...rest } = without;
          expect(withGrants).toEqual({
            ...rest,
            level: 'automatic',
            grantId: withGrants.grantId,
            reason: withGrants.reason,
          });
        }
      }),
    );
  });

  it('the result level is never laxer than the strictest matching rule, unless a grant lets confirm through', () => {
    fc.assert(
      fc.property(callArb, contextArb, (call, s) => {
        const matching = s.rules.filter((r) => ruleMatches(r, call));
        fc.pre(matching.length > 0);
        const strictest = matching.map((r) => r.level).reduce((a, b) => (strictness(b) < strictness(a) ? b : a));
        const v = run(call, s);
        if (v.grantId !== undefined) expect(strictest).toBe('confirm');
        else expect(laxerThan(v.level, strictest)).toBe(false);
      }),
    );
  });

  it('the deciding rule is the first matching rule of the strictest level', () => {
    fc.assert(
      fc.property(callArb, contextArb, (call, s) => {
        const matching = s.rules.map((r, i) => [r, i] as const).filter(([r]) => ruleMatches(r, call));
        const first =
          matching.length === 0
            ? null
            : matching.reduce((a, b) => (strictness(b[0].level) < strictness(a[0].level) ? b : a))[1];
        expect(run(call, s).rule).toBe(first);
      }),
    );
  });

  it('without a matching rule, untrusted flags never make a call laxer than defaults.unknownTools', () => {
    fc.assert(
      fc.property(callArb, contextArb, level, (call, s, unknownTools) => {
        fc.pre(s.tool?.registeredBy !== 'admin');
        const v = run(call, s, { rules: [], grants: [], defaults: { unknownTools, trustAgentFlags: false } });
        expect(laxerThan(v.level, unknownTools)).toBe(false);
      }),
    );
  });

  it('a missing required role always ends in deny', () => {
    fc.assert(
      fc.property(callArb, contextArb, (call, s) => {
        const v = run(call, s);
        const role = v.rule === null ? undefined : s.rules[v.rule].requireRole;
        if (role !== undefined && !s.user?.roles.includes(role)) expect(v.level).toBe('deny');
      }),
    );
  });
});

describe('ApprovalPolicy: passkey step-up and verified users', () => {
  const judge = (rules: Rule[], opts: { grants?: GrantFacts[]; user?: { verified?: boolean } | null } = {}) =>
    ApprovalPolicy.evaluate(
      { toolName: 'delete_source', arguments: {} },
      {
        policy: PolicyDocument.parse({ rules }),
        policyVersion: 7,
        grants: opts.grants ?? [],
        conversation: {
          ...CONVERSATION,
          ...(opts.user !== null && { user: { id: 'user_1', roles: ['developer'], ...opts.user } }),
        },
        now: NOW,
      },
    );

  it('a held call of a stepUp rule carries stepUp, and no chat client may approve it', () => {
    for (const level of ['confirm', 'manual'] as const) {
      const v = judge([{ match: '*', level, stepUp: 'passkey' }]);
      expect(v).toMatchObject({ level, stepUp: 'passkey', chatApproval: false });
    }
  });

  it('a standing grant never covers a stepUp call, and the reason says so', () => {
    const v = judge([{ match: '*', level: 'confirm', stepUp: 'passkey' }], { grants: [grant('tenant')] });
    expect(v).toMatchObject({ level: 'confirm', stepUp: 'passkey' });
    expect(v.grantId).toBeUndefined();
    expect(v.reason).toBe(
      'Rule 0 (*): confirm; standing grant grant_1 not applied: the rule asks for a passkey (stepUp: passkey) on each approval',
    );
  });

  it('a call the rule does not hold carries no stepUp', () => {
    const v = judge([{ match: '*', level: 'confirm', stepUp: 'passkey', requireRole: 'admin' }]);
    expect(v.level).toBe('deny');
    expect(v.stepUp).toBeUndefined();
  });

  it('requireVerifiedUser denies an asserted user and a conversation without one, and lets a verified one through', () => {
    const rules: Rule[] = [{ match: '*', level: 'confirm', requireVerifiedUser: true }];
    expect(judge(rules, { user: {} })).toMatchObject({
      level: 'deny',
      reason: expect.stringContaining('requires a verified user'),
    });
    expect(judge(rules, { user: null })).toMatchObject({
      level: 'deny',
      reason: expect.stringContaining('the conversation has none'),
    });
    expect(judge(rules, { user: { verified: true } })).toMatchObject({ level: 'confirm', rule: 0 });
  });

  it('lets the requester approve a stepUp call only when the user was verified', () => {
    const only: Rule[] = [{ match: '*', level: 'confirm', stepUp: 'passkey', approvers: ['requester'] }];
    expect(judge(only, { user: { verified: true } })).toMatchObject({ level: 'confirm', approvers: ['requester'] });
    expect(judge(only, { user: {} })).toMatchObject({
      level: 'deny',
      reason: expect.stringContaining('lets only the requester approve with a passkey'),
    });
    const shared: Rule[] = [{ match: '*', level: 'confirm', stepUp: 'passkey', approvers: ['requester', 'admin'] }];
    expect(judge(shared, { user: {} })).toMatchObject({
      level: 'confirm',
      approvers: ['admin'],
      reason: expect.stringContaining('requester not among the approvers'),
    });
    // Without a step-up the requester decides as before.
    expect(judge([{ match: '*', level: 'confirm', approvers: ['requester'] }], { user: {} })).toMatchObject({
      level: 'confirm',
      approvers: ['requester'],
    });
  });

  it('requireVerifiedUser outranks a standing grant: the call is denied, not allowed', () => {
    const v = judge([{ match: '*', level: 'confirm', requireVerifiedUser: true }], {
      grants: [grant('tenant')],
      user: {},
    });
    expect(v).toMatchObject({ level: 'deny' });
    expect(v.grantId).toBeUndefined();
  });
});
