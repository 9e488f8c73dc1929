/** The rollback and simulation handlers with in-memory ports: what they record, and that simulating records nothing. */
import { PolicyDocument, PolicyDocumentJson } from '../../../domain/policy/policy-document';
import type { SupervisionLevel } from '../../../domain/policy/supervision-level';
import type { Actor, Principal } from '../../../domain/shared/actor';
import { inMemoryPorts, InMemoryPorts } from '../../../../test/support/in-memory-ports';
import { RollBackPolicyCommand } from '../../commands/roll-back-policy/roll-back-policy.command';
import { RollBackPolicyHandler } from '../../commands/roll-back-policy/roll-back-policy.handler';
import { ProposeToolCallsCommand } from '../../commands/propose-tool-calls/propose-tool-calls.command';
import { ProposeToolCallsHandler } from '../../commands/propose-tool-calls/propose-tool-calls.handler';
import { PutPolicyCommand } from '../../commands/put-policy/put-policy.command';
import { PutPolicyHandler } from '../../commands/put-policy/put-policy.handler';
import { StartConversationCommand } from '../../commands/start-conversation/start-conversation.command';
import { StartConversationHandler } from '../../commands/start-conversation/start-conversation.handler';
import { RepositoryPolicyInputs } from '../../policy-inputs/repository-policy-inputs';
import {
  PolicyHistory,
  PolicyVersionRecord,
  PolicyVersionSummary,
  RecordedToolCall,
  RecordedToolCalls,
} from '../../ports/policy-history.port';
import { SimulatePolicyHandler } from './simulate-policy.handler';
import { SimulatePolicyQuery } from './simulate-policy.query';

const TENANT = 't1';
const T0 = new Date('2025-03-01T12:00:00.000Z');
const agent: Principal = { id: 'bot', tenant: TENANT, roles: ['agent'] };
const root: Actor = { id: 'root', kind: 'person', via: 'api', roles: ['admin'] };
const STRICT = { rules: [{ match: 'delete_*', level: 'deny' }] };
const LAX = { rules: [{ match: '*', level: 'automatic' }] };

/** The versions as the PolicyUpdated events recorded them: what policy_versions holds. */
class EventHistory implements PolicyHistory {
  constructor(private readonly ports: InMemoryPorts) {}
  private versions(tenantId: string): PolicyVersionRecord[] {
    return this.ports.uow.events
      .filter((e) => e.type === 'PolicyUpdated' && e.tenantId === tenantId)
      .map((e) => {
        const d = e.data as { version: number; document: PolicyDocumentJson };
        return {
          version: d.version,
          createdAt: e.at,
          createdBy: e.actor.id,
          document: PolicyDocument.restore(d.document),
        };
      });
  }
  async list(tenantId: string, page: { before?: number; limit: number }): Promise<PolicyVersionSummary[]> {
    return this.versions(tenantId)
      .filter((v) => v.version < (page.before ?? Infinity))
      .reverse()
      .slice(0, page.limit)
      .map((v) => ({
        version: v.version,
        createdAt: v.createdAt,
        createdBy: v.createdBy,
        rules: v.document.rules.length,
      }));
  }
  async get(tenantId: string, version: number): Promise<PolicyVersionRecord | null> {
    return this.versions(tenantId).find((v) => v.version === version) ?? null;
  }
}

/** The calls as their ToolCallProposed events recorded them, with their conversation as it is now. */
class EventRecordedCalls implements RecordedToolCalls {
  constructor(private readonly ports: InMemoryPorts) {}
  async proposedSince(tenantId: string, since: Date, limit: number): Promise<RecordedToolCall[]> {
    const proposed = this.ports.uow.events
      .filter((e) => e.type === 'ToolCallProposed' && e.tenantId === tenantId && e.at >= since)
      .reverse()
      .slice(0, limit);
    return Promise.all(
      proposed.map(async (e) => {
        const conv = (await this.ports.conversations.findById(tenantId, e.conversationId!))!;
        const d = e.data as {
          arguments: Record<string, unknown>;
          policy: { level: SupervisionLevel; rule: number | null; policyVersion: number; reason: string };
        };
        return {
          id: e.toolCallId!,
          conversationId: conv.id,
          agentId: conv.agentId,
          user: conv.user && { id: conv.user.id, roles: [...(conv.user.roles ?? [])] },
          toolName: e.toolName!,
          arguments: d.arguments,
          createdAt: e.at,
          policy: d.policy,
        };
      }),
    );
  }
}

function setup() {
  const ports = inMemoryPorts(T0);
  const { uow, conversations, tools, policies, grants, halts, clock, ids, receipts } = ports;
  const history = new EventHistory(ports);
  const put = new PutPolicyHandler(uow, policies, clock);
  const rollBack = new RollBackPolicyHandler(uow, policies, history, clock);
  const simulate = new SimulatePolicyHandler(
    policies,
    tools,
    grants,
    conversations,
    new EventRecordedCalls(ports),
    clock,
  );
  const start = new StartConversationHandler(uow, conversations, clock, ids);
  const propose = new ProposeToolCallsHandler(
    uow,
    conversations,
    new RepositoryPolicyInputs(policies, tools, grants, halts, conversations),
    clock,
    ids,
    receipts,
  );
  return {
    ...ports,
    put: (doc: unknown) => put.execute(new PutPolicyCommand(TENANT, root, doc)),
    rollBack: (version: number, reason?: string) =>
      rollBack.execute(new RollBackPolicyCommand(TENANT, root, version, reason)),
    simulate: (doc: unknown, over: SimulatePolicyQuery['over']) =>
      simulate.execute(new SimulatePolicyQuery(TENANT, doc, over)),
    async propose(toolName: string) {
      const { conversation } = await start.execute(
        new StartConversationCommand(agent, { user: { id: 'rita', roles: ['admin'] } }),
      );
      return (await propose.execute(new ProposeToolCallsCommand(agent, conversation.id, [{ toolName, arguments: {} }])))
        .toolCalls[0];
    },
  };
}

describe('RollBackPolicyHandler', () => {
  it("makes a new version with the earlier version's document, recorded as PolicyUpdated with rolledBackFrom", async () => {
    const t = setup();
    await t.put(STRICT);
    await t.put(LAX);
    const mark = t.uow.mark();
    const p = await t.rollBack(1, 'too lax');
    expect(p).toMatchObject({ version: 3, rules: STRICT.rules, updatedBy: 'root' });
    expect(t.uow.since(mark)).toEqual([
      expect.objectContaining({
        type: 'PolicyUpdated',
        data: expect.objectContaining({
          version: 3,
          previousVersion: 2,
          source: 'rollback',
          rolledBackFrom: 1,
          reason: 'too lax',
        }),
      }),
    ]);
    expect(t.policies.versions(TENANT)).toBe(3);
  });

  it('refuses an unknown version with not_found and the version in force with already_in_force, recording nothing', async () => {
    const t = setup();
    await t.put(STRICT);
    const mark = t.uow.mark();
    await expect(t.rollBack(5)).rejects.toMatchObject({ code: 'not_found' });
    await expect(t.rollBack(1)).rejects.toMatchObject({ code: 'already_in_force' });
    expect(t.uow.since(mark)).toEqual([]);
  });
});

describe('SimulatePolicyHandler', () => {
  it('judges recorded calls by the candidate beside what they got, newest first, and records nothing', async () => {
    const t = setup();
    await t.put(LAX);
    const first = await t.propose('delete_a');
    t.clock.advance(1_000);
    const second = await t.propose('get_b');
    const mark = t.uow.mark();
    const r = await t.simulate(STRICT, { days: 1, limit: 10 });
    expect(r).toMatchObject({
      policyVersion: 1,
      over: 'recorded',
      since: new Date(T0.getTime() + 1_000 - 86_400_000).toISOString(),
      truncated: false,
    });
    expect(r.results.map((x) => [x.toolCallId, x.then.level, x.now.level, x.changed])).toEqual([
      [second.id, 'automatic', 'confirm', true], // an unknown tool under the candidate: defaults.unknownTools
      [first.id, 'automatic', 'deny', true],
    ]);
    expect((await t.simulate(STRICT, { days: 1, limit: 1 })).truncated).toBe(true);
    expect(t.uow.since(mark)).toEqual([]);
    expect(t.policies.versions(TENANT)).toBe(1);
  });

  it('refuses an invalid candidate with validation_failed naming the path, and a conversation that does not exist', async () => {
    const t = setup();
    await expect(
      t.simulate({ rules: [{ match: 'x', level: 'sometimes' }] }, { calls: [{ toolName: 'x', arguments: {} }] }),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      faults: [{ path: 'rules[0].level', message: expect.any(String) }],
    });
    await expect(
      t.simulate(LAX, { calls: [{ toolName: 'x', arguments: {}, conversationId: 'nope' }] }),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      faults: [{ path: 'calls[0].conversationId', message: 'no conversation nope' }],
    });
  });
});
