import fc from 'fast-check';
import { ApprovalPolicy, GrantScope, ProposedCallFacts } from '../policy/approval-policy';
import { PolicyDocument } from '../policy/policy-document';
import { Actor } from '../shared/actor';
import { Grant, usesFault } from './grant.aggregate';

const T0 = new Date('2026-03-01T10:00:00.000Z');
const ANN: Actor = { id: 'ann', kind: 'person', via: 'web', name: 'Ann', roles: ['admin'] };
const BOT: Actor = { id: 'bot', kind: 'agent', via: 'api', roles: ['agent'] };
const CONVERSATION = { id: 'conv_1', agentId: 'agent_1' };

function make(o: { effect?: 'allow' | 'deny'; uses?: number; scope?: GrantScope; args?: Record<string, string> } = {}) {
  return Grant.create({
    id: o.effect === 'deny' ? 'deny_1' : 'grant_1',
    tenantId: 't1',
    toolName: 'run_cmd',
    scope: o.scope ?? 'conversation',
    conversationId: CONVERSATION.id,
    agentId: CONVERSATION.agentId,
    by: ANN,
    toolCallId: 'tc_1',
    at: T0,
    ...(o.args ? { args: o.args } : {}),
    ...(o.effect ? { effect: o.effect } : {}),
    ...(o.uses !== undefined ? { uses: o.uses } : {}),
  });
}

function verdict(level: string, grants: Grant[], call: Partial<ProposedCallFacts> = {}, conversation = CONVERSATION) {
  return ApprovalPolicy.evaluate(
    { toolName: 'run_cmd', arguments: { cmd: 'rm -rf /tmp/x' }, ...call },
    {
      policy: PolicyDocument.parse({ rules: [{ match: '*', level }] }),
      policyVersion: 1,
      grants: grants.map((g) => g.facts()),
      denies: grants.flatMap((g) => g.denyFacts() ?? []),
      conversation,
      now: T0,
    },
  );
}

describe('standing denies', () => {
  it('a deny is recorded as one (GrantCreated effect deny) and never reads as an allow', () => {
    const d = make({ effect: 'deny' });
    expect(d.effect).toBe('deny');
    expect(d.pullEvents()[0].data).toMatchObject({ grantId: 'deny_1', effect: 'deny' });
    expect(d.facts().revoked).toBe(true);
    expect(make().denyFacts()).toBeUndefined();
  });

  it('denies a covered call at proposal, before a grant or a rule could let it through', () => {
    for (const level of ['automatic', 'notify', 'confirm', 'manual']) {
      const v = verdict(level, [make(), make({ effect: 'deny' })]);
      expect(v).toMatchObject({
        level: 'deny',
        denyId: 'deny_1',
        reason: 'Denied by standing deny deny_1 (scope conversation)',
      });
      expect(v.grantId).toBeUndefined();
    }
    // A call the policy denies anyway keeps its own reason.
    expect(verdict('deny', [make({ effect: 'deny' })]).denyId).toBeUndefined();
  });

  it('covers only its scope and its argument globs', () => {
    const d = make({ effect: 'deny', args: { cmd: 'rm *' } });
    expect(verdict('confirm', [d]).level).toBe('deny');
    expect(verdict('confirm', [d], { arguments: { cmd: 'ls' } }).level).toBe('confirm');
    expect(verdict('confirm', [d], {}, { id: 'conv_2', agentId: 'agent_1' }).level).toBe('confirm');
  });

  it('a revoked deny no longer denies', () => {
    const d = make({ effect: 'deny' });
    d.revoke(ANN, T0, 'too broad');
    expect(verdict('confirm', [d]).level).toBe('confirm');
  });

  it('property: with a covering deny the verdict is deny, without one it is what the rules say', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('automatic', 'notify', 'confirm', 'manual', 'deny'),
        fc.constantFrom<GrantScope>('conversation', 'agent', 'tenant'),
        fc.boolean(),
        (level, scope, withDeny) => {
          const grants = withDeny ? [make({ effect: 'deny', scope })] : [];
          const v = verdict(level, grants);
          expect(v.level).toBe(withDeny ? 'deny' : level);
        },
      ),
    );
  });
});

describe('limited grants (uses)', () => {
  it('takes 1 to 1000 uses', () => {
    expect(usesFault(1)).toBeUndefined();
    expect(usesFault(1000)).toBeUndefined();
    for (const bad of [0, 1001, 1.5, '1']) expect(usesFault(bad)).toContain('whole number');
  });

  it('records its uses, counts them down with one GrantUsed per call, and is spent at zero', () => {
    const g = make({ uses: 2 });
    expect(g.pullEvents()[0].data).toMatchObject({ uses: 2 });
    expect(g.statusAt(T0)).toBe('active');
    g.used(['tc_2', 'tc_3'], 0, BOT, T0, 'conv_1');
    expect(g.pullEvents().map((e) => [e.type, e.toolCallId, e.data])).toEqual([
      ['GrantUsed', 'tc_2', { grantId: 'grant_1', uses: 2, usesLeft: 1 }],
      ['GrantUsed', 'tc_3', { grantId: 'grant_1', uses: 2, usesLeft: 0 }],
    ]);
    expect(g.statusAt(T0)).toBe('spent');
  });

  it('a deny takes no uses; an unlimited grant records none', () => {
    expect(make({ effect: 'deny', uses: 1 }).snapshot().uses).toBeUndefined();
    const g = make();
    g.pullEvents();
    g.used(['tc_2'], 0, BOT, T0, 'conv_1');
    expect(g.pullEvents()).toEqual([]);
  });
});
