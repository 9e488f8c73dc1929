import fc from 'fast-check';
import { ApprovalPolicy, GrantScope, ProposedCallFacts } from '../policy/approval-policy';
import { PolicyDocument } from '../policy/policy-document';
import { Actor } from '../shared/actor';
import { expiresInFault, Grant, grantArgsFaults, MAX_GRANT_SECONDS } from './grant.aggregate';
import { mayListGrants, mayRevokeGrant } from './rules/grant-authority';

const T0 = new Date('2026-03-01T10:00:00.000Z');
const ANN: Actor = { id: 'ann', kind: 'person', via: 'web', name: 'Ann', roles: ['admin'] };
const BOB: Actor = { id: 'bob', kind: 'person', via: 'cli', roles: ['approver'] };
const CONVERSATION = { id: 'conv_1', agentId: 'agent_1' };

function make(
  opts: { scope?: GrantScope; expiresIn?: number; args?: Record<string, string>; toolName?: string; id?: string } = {},
): Grant {
  return Grant.create({
    id: opts.id ?? 'grant_1',
    tenantId: 't1',
    toolName: opts.toolName ?? 'run_cmd',
    scope: opts.scope ?? 'conversation',
    conversationId: CONVERSATION.id,
    agentId: CONVERSATION.agentId,
    by: ANN,
    toolCallId: 'tc_1',
    at: T0,
    expiresIn: opts.expiresIn,
    args: opts.args,
  });
}

const seconds = (n: number) => new Date(T0.getTime() + n * 1000);

/** The policy's verdict on one `confirm` call with these grants, as the propose command weighs them at `now`. */
function verdict(grants: Grant[], call: Partial<ProposedCallFacts>, now: Date) {
  return ApprovalPolicy.evaluate(
    { toolName: 'run_cmd', arguments: {}, ...call },
    {
      policy: PolicyDocument.parse({ rules: [{ match: '*', level: 'confirm' }] }),
      policyVersion: 1,
      grants: grants.filter((g) => g.statusAt(now) === 'active').map((g) => g.facts()),
      conversation: CONVERSATION,
      now,
    },
  );
}

describe('a grant with a lifetime', () => {
  it('records its expiresAt in GrantCreated and in its state', () => {
    const g = make({ expiresIn: 3600 });
    expect(g.snapshot().expiresAt).toEqual(seconds(3600));
    expect(g.pullEvents().map((e) => [e.type, e.data])).toEqual([
      [
        'GrantCreated',
        {
          grantId: 'grant_1',
          scope: 'conversation',
          scopeId: 'conv_1',
          createdBy: 'ann',
          via: 'web',
          expiresAt: '2026-03-01T11:00:00.000Z',
        },
      ],
    ]);
  });

  it('is active until its expiresAt and expired from that instant on', () => {
    const g = make({ expiresIn: 60 });
    expect(g.statusAt(seconds(59.999))).toBe('active');
    expect(g.statusAt(seconds(60))).toBe('expired');
  });

  it('without expiresIn never expires', () => {
    expect(make().statusAt(seconds(10 * MAX_GRANT_SECONDS))).toBe('active');
  });

  it.each([
    [0, 'must be from 1 to 7776000 seconds (90 days)'],
    [-5, 'must be from 1 to 7776000 seconds (90 days)'],
    [MAX_GRANT_SECONDS + 1, 'must be from 1 to 7776000 seconds (90 days)'],
    [1.5, 'must be a whole number of seconds'],
    ['3600', 'must be a whole number of seconds'],
  ])('a lifetime of %p is refused: %s', (value, message) => {
    expect(expiresInFault(value)).toBe(message);
  });

  it('a lifetime from one second to 90 days is accepted', () => {
    expect([1, 3600, MAX_GRANT_SECONDS].map(expiresInFault)).toEqual([undefined, undefined, undefined]);
  });
});

describe('revoking a grant', () => {
  it('records GrantRevoked with who, the channel and the reason, and the grant is revoked from then on', () => {
    const g = make({ scope: 'tenant' });
    g.pullEvents();
    expect(g.revoke(BOB, seconds(5), 'too wide')).toBe(true);
    const [e] = g.pullEvents();
    expect({ type: e.type, actor: e.actor, toolName: e.toolName, at: e.at, data: e.data }).toEqual({
      type: 'GrantRevoked',
      actor: BOB,
      toolName: 'run_cmd',
      at: seconds(5),
      data: { grantId: 'grant_1', scope: 'tenant', scopeId: null, revokedBy: 'bob', via: 'cli', reason: 'too wide' },
    });
    expect(g.snapshot().revocation).toEqual({ at: seconds(5), by: { id: 'bob', via: 'cli' }, reason: 'too wide' });
    expect(g.statusAt(seconds(5))).toBe('revoked');
  });

  it('a second time changes nothing and records nothing: the first revocation stands', () => {
    const g = make();
    g.revoke(BOB, seconds(5), 'first');
    g.pullEvents();
    expect(g.revoke(ANN, seconds(9), 'second')).toBe(false);
    expect(g.pullEvents()).toEqual([]);
    expect(g.snapshot().revocation).toMatchObject({ by: { id: 'bob' }, reason: 'first' });
  });

  it('an expired grant may still be revoked, and then shows as revoked', () => {
    const g = make({ expiresIn: 1 });
    expect(g.revoke(ANN, seconds(10))).toBe(true);
    expect(g.statusAt(seconds(10))).toBe('revoked');
  });
});

describe('who may list and revoke grants', () => {
  it.each<[string[], GrantScope, boolean]>([
    [['admin'], 'tenant', true],
    [['admin'], 'agent', true],
    [['admin'], 'conversation', true],
    [['approver'], 'conversation', true],
    [['approver'], 'agent', false],
    [['approver'], 'tenant', false],
    [['auditor'], 'conversation', false],
    [[], 'conversation', false],
    [['agent', 'admin'], 'conversation', false],
  ])('roles %j revoking a %s grant: %p', (roles, scope, may) => {
    expect(mayRevokeGrant({ roles }, scope)).toBe(may);
  });

  it.each<[string[], boolean]>([
    [['approver'], true],
    [['admin'], true],
    [['auditor'], true],
    [[], false],
    [['agent'], false],
    [['agent', 'auditor'], false],
  ])('roles %j listing grants: %p', (roles, may) => {
    expect(mayListGrants({ roles })).toBe(may);
  });
});

describe('a grant with an argument pattern', () => {
  it('covers only the calls whose arguments match every glob, in the policy rules’ glob language', () => {
    const g = make({ args: { cmd: 'ls *' } });
    expect(verdict([g], { arguments: { cmd: 'ls -la' } }, T0)).toMatchObject({
      level: 'automatic',
      grantId: 'grant_1',
    });
    expect(verdict([g], { arguments: { cmd: 'rm -rf /' } }, T0)).toMatchObject({ level: 'confirm' });
    expect(verdict([g], { arguments: { cmd: 'ls; rm -rf /' } }, T0)).toMatchObject({ level: 'confirm' });
    expect(verdict([g], { arguments: {} }, T0)).toMatchObject({ level: 'confirm' });
    expect(verdict([g], { arguments: { command: 'ls' } }, T0)).toMatchObject({ level: 'confirm' });
  });

  it('matches a value that is not a string as its JSON text, as rules do', () => {
    const g = make({ args: { n: '1?' } });
    expect(verdict([g], { arguments: { n: 12 } }, T0).level).toBe('automatic');
    expect(verdict([g], { arguments: { n: 123 } }, T0).level).toBe('confirm');
  });

  it('with several globs needs them all', () => {
    const g = make({ args: { cmd: 'git *', cwd: '/srv/app*' } });
    expect(verdict([g], { arguments: { cmd: 'git status', cwd: '/srv/app' } }, T0).level).toBe('automatic');
    expect(verdict([g], { arguments: { cmd: 'git status', cwd: '/etc' } }, T0).level).toBe('confirm');
  });

  it('records its args in GrantCreated', () => {
    expect(make({ args: { cmd: 'ls *' } }).pullEvents()[0].data).toMatchObject({ args: { cmd: 'ls *' } });
  });

  it.each<[string, unknown, string]>([
    ['not an object', 'ls *', 'args: must be an object of argument name → glob'],
    ['an array', ['ls *'], 'args: must be an object of argument name → glob'],
    ['empty', {}, 'args: must name at least one argument; leave it out to cover any arguments'],
    ['a glob that is not a string', { cmd: 3 }, 'args.cmd: must be a non-empty glob string'],
    ['an empty glob', { cmd: '' }, 'args.cmd: must be a non-empty glob string'],
    [
      'a bad argument name',
      { 'c md': 'x' },
      'args.c md: argument names are letters, digits, _, $, . and - (at most 128)',
    ],
    ['a glob with surrounding spaces', { cmd: ' ls' }, 'args.cmd: must not start or end with whitespace'],
    [
      'a glob that would read as two arguments',
      { cmd: 'ls, path=/etc' },
      'args.cmd: must not hold a comma followed by name=',
    ],
  ])('is refused when %s', (_what, args, fault) => {
    expect(grantArgsFaults(args).map((f) => `${f.path}: ${f.message}`)).toEqual([fault]);
  });

  it('accepts globs with commas, parentheses and = that are not a new argument', () => {
    expect(grantArgsFaults({ q: 'a,b', expr: 'f(x)=1', cmd: 'ls *' })).toEqual([]);
    const g = make({ args: { q: 'a,b', expr: 'f(x)=1' } });
    expect(verdict([g], { arguments: { q: 'a,b', expr: 'f(x)=1' } }, T0).level).toBe('automatic');
  });
});

describe('a revoked or expired grant never covers (property)', () => {
  const arbGrant = fc.record({
    id: fc.constantFrom('g1', 'g2', 'g3', 'g4'),
    scope: fc.constantFrom<GrantScope>('conversation', 'agent', 'tenant'),
    expiresIn: fc.option(fc.integer({ min: 1, max: 1000 }), { nil: undefined }),
    revokedAfter: fc.option(fc.integer({ min: 0, max: 1000 }), { nil: undefined }),
    args: fc.option(fc.constantFrom<Record<string, string>>({ cmd: 'ls *' }, { cmd: '*' }, { path: '/tmp/*' }), {
      nil: undefined,
    }),
  });

  it('whatever the grants, their lifetimes, revocations and arguments, and whenever the call comes', () => {
    fc.assert(
      fc.property(
        fc.array(arbGrant, { maxLength: 6 }),
        fc.integer({ min: 0, max: 2000 }),
        fc.constantFrom({ cmd: 'ls -la' }, { cmd: 'rm -rf /' }, { path: '/tmp/x' }, {}),
        (specs, at, args) => {
          const now = seconds(at);
          const grants = specs.map((s, i) => {
            const g = make({ id: `${s.id}_${i}`, scope: s.scope, expiresIn: s.expiresIn, args: s.args });
            if (s.revokedAfter !== undefined && s.revokedAfter <= at) g.revoke(ANN, seconds(s.revokedAfter));
            return g;
          });
          const v = verdict(grants, { arguments: args }, now);
          if (v.grantId === undefined) return;
          const used = grants.find((g) => g.id === v.grantId)!;
          const s = used.snapshot();
          expect(s.revocation).toBeUndefined();
          expect(s.expiresAt === undefined || s.expiresAt.getTime() > now.getTime()).toBe(true);
          if (s.args)
            for (const [name, glob] of Object.entries(s.args))
              expect(
                name in args &&
                  (glob === '*' || (args as Record<string, string>)[name].startsWith(glob.replace('*', ''))),
              ).toBe(true);
        },
      ),
    );
  });

  it('a revoked grant handed to the policy anyway does not cover', () => {
    fc.assert(
      fc.property(fc.constantFrom<GrantScope>('conversation', 'agent', 'tenant'), (scope) => {
        const g = make({ scope });
        g.revoke(ANN, T0);
        const v = ApprovalPolicy.evaluate(
          { toolName: 'run_cmd', arguments: {} },
          {
            policy: PolicyDocument.parse({ rules: [{ match: '*', level: 'confirm' }] }),
            policyVersion: 1,
            grants: [g.facts()],
            conversation: CONVERSATION,
            now: T0,
          },
        );
        expect(v.level).toBe('confirm');
      }),
    );
  });

  it('an expired grant handed to the policy anyway does not cover: the policy judges expiry itself, at `now`', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<GrantScope>('conversation', 'agent', 'tenant'),
        fc.integer({ min: 1, max: 3600 }),
        fc.integer({ min: -5, max: 5 }),
        (scope, expiresIn, offset) => {
          const g = make({ scope, expiresIn });
          const now = new Date(T0.getTime() + (expiresIn + offset) * 1000);
          const v = ApprovalPolicy.evaluate(
            { toolName: 'run_cmd', arguments: {} },
            {
              policy: PolicyDocument.parse({ rules: [{ match: '*', level: 'confirm' }] }),
              policyVersion: 1,
              grants: [g.facts()],
              conversation: CONVERSATION,
              now,
            },
          );
          // Up to the instant it expires the grant covers; from then on (as statusAt says) it does not.
          expect(v.level).toBe(offset < 0 ? 'automatic' : 'confirm');
          expect(g.statusAt(now)).toBe(offset < 0 ? 'active' : 'expired');
        },
      ),
    );
  });
});
