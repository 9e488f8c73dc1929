/**
 * Query handlers against in-memory fakes of the ports (test/support/in-memory-ports.ts). Waiting is
 * driven by the fake clock and the fake waiters: no real timers.
 */
import type { CommandBus } from '@nestjs/cqrs';
import { inMemoryPorts } from '../../../test/support/in-memory-ports';
import type { ConversationUser, Decider, ProposedCall } from '../../domain/conversation/conversation.aggregate';
import type { Actor, Principal } from '../../domain/shared/actor';
import { DecideToolCallCommand } from '../commands/decide-tool-call/decide-tool-call.command';
import { DecideToolCallHandler } from '../commands/decide-tool-call/decide-tool-call.handler';
import { ExpireToolCallsCommand } from '../commands/expire-tool-calls/expire-tool-calls.command';
import { ExpireToolCallsHandler } from '../commands/expire-tool-calls/expire-tool-calls.handler';
import { HaltCommand } from '../commands/halt/halt.command';
import { HaltHandler } from '../commands/halt/halt.handler';
import { ProposeToolCallsCommand } from '../commands/propose-tool-calls/propose-tool-calls.command';
import { RepositoryPolicyInputs } from '../policy-inputs/repository-policy-inputs';
import { ProposeToolCallsHandler } from '../commands/propose-tool-calls/propose-tool-calls.handler';
import { PutPolicyCommand } from '../commands/put-policy/put-policy.command';
import { PutPolicyHandler } from '../commands/put-policy/put-policy.handler';
import { RegisterToolCommand } from '../commands/register-tool/register-tool.command';
import { RegisterToolHandler } from '../commands/register-tool/register-tool.handler';
import { StartConversationCommand } from '../commands/start-conversation/start-conversation.command';
import { StartConversationHandler } from '../commands/start-conversation/start-conversation.handler';
import { WakeWaitersHandler } from '../events/wake-waiters.handler';
import { EventsCommitted } from '../ports/stored-event';
import { ConversationAccessHandler, ToolCallAccessHandler } from './access/access.handler';
import { ConversationAccessQuery, ToolCallAccessQuery } from './access/access.query';
import { GetConversationHandler } from './get-conversation/get-conversation.handler';
import { GetConversationQuery } from './get-conversation/get-conversation.query';
import { GetPolicyHandler } from './get-policy/get-policy.handler';
import { GetPolicyQuery } from './get-policy/get-policy.query';
import { GetStatusHandler } from './get-status/get-status.handler';
import { GetStatusQuery } from './get-status/get-status.query';
import { GetToolCallHandler } from './get-tool-call/get-tool-call.handler';
import { GetToolCallQuery } from './get-tool-call/get-tool-call.query';
import { GetToolHandler } from './get-tool/get-tool.handler';
import { GetToolQuery } from './get-tool/get-tool.query';

// ---------------------------------------------------------------- fixtures

const T0 = new Date('2025-03-01T12:00:00.000Z');
const iso = (seconds: number) => new Date(T0.getTime() + seconds * 1000).toISOString();
const TENANT = 't1';

const agent: Principal = { id: 'agent-1', tenant: TENANT, roles: ['agent'] };
const otherAgent: Principal = { id: 'agent-2', tenant: TENANT, roles: ['agent'] };
const root: Principal = { id: 'root', tenant: TENANT, roles: ['admin'] };
const rootActor: Actor = { id: 'root', kind: 'person', via: 'api', roles: ['admin'] };
const alice: Decider = { id: 'alice', tenant: TENANT, roles: ['approver'], name: 'Alice', via: 'web' };
const audrey: Principal = { id: 'audrey', tenant: TENANT, roles: ['auditor'] };
const RITA: ConversationUser = { id: 'rita', roles: ['member'], name: 'Rita' };
const rita: Principal = { id: 'rita', tenant: TENANT, roles: ['member'] };
const sam: Principal = { id: 'sam', tenant: TENANT, roles: ['member'] };
const foreignAdmin: Principal = { id: 'root', tenant: 't2', roles: ['admin'] };
const foreignAgent: Principal = { id: 'agent-1', tenant: 't2', roles: ['agent'] };

const POLICY = {
  defaults: { unknownTools: 'confirm', timeoutSeconds: 300 },
  rules: [
    { match: 'get_*', level: 'automatic' },
    { match: 'quick_*', level: 'confirm', timeoutSeconds: 30 },
    { match: 'refund_*', level: 'confirm', approvers: ['requester', 'admin'] },
  ],
};

const call = (toolName: string, args: Record<string, unknown> = {}): ProposedCall => ({ toolName, arguments: args });

function setup(opts: { wakeOnCommit?: boolean } = {}) {
  const ports = inMemoryPorts(T0);
  const { uow, conversations, tools, policies, grants, halts, clock, ids, waiters, receipts } = ports;
  if (opts.wakeOnCommit !== false)
    uow.afterCommit((events) => new WakeWaitersHandler(waiters).handle(new EventsCommitted(events)));
  const expire = new ExpireToolCallsHandler(uow, conversations, clock);
  const expiries: ExpireToolCallsCommand[] = [];
  const bus = {
    execute: (c: ExpireToolCallsCommand) => {
      expiries.push(c);
      return expire.execute(c);
    },
  } as unknown as CommandBus;
  const h = {
    start: new StartConversationHandler(uow, conversations, clock, ids),
    propose: new ProposeToolCallsHandler(
      uow,
      conversations,
      new RepositoryPolicyInputs(policies, tools, grants, halts, conversations),
      clock,
      ids,
      receipts,
    ),
    decide: new DecideToolCallHandler(uow, conversations, grants, clock, ids),
    halt: new HaltHandler(uow, halts, conversations, clock),
    putPolicy: new PutPolicyHandler(uow, policies, clock),
    registerTool: new RegisterToolHandler(uow, tools, clock),
    getToolCall: new GetToolCallHandler(conversations, waiters, clock, bus),
    getConversation: new GetConversationHandler(conversations, halts),
    getPolicy: new GetPolicyHandler(policies),
    getStatus: new GetStatusHandler(halts),
    getTool: new GetToolHandler(tools),
    conversationAccess: new ConversationAccessHandler(conversations),
    toolCallAccess: new ToolCallAccessHandler(conversations),
  };
  return {
    ...ports,
    h,
    expiries,
    async conversation(user: ConversationUser | null = RITA, by: Principal = agent): Promise<string> {
      return (await h.start.execute(new StartConversationCommand(by, user ? { user } : {}))).conversation.id;
    },
    async proposeOne(conversationId: string, c: ProposedCall, by: Principal = agent) {
      return (await h.propose.execute(new ProposeToolCallsCommand(by, conversationId, [c]))).toolCalls[0];
    },
    decide: (by: Decider, id: string, decision: 'approve' | 'reject' | 'always_allow' = 'approve') =>
      h.decide.execute(new DecideToolCallCommand(by, id, { decision })),
    get: (id: string, waitSeconds = 0, by: Principal = root) =>
      h.getToolCall.execute(new GetToolCallQuery(by, id, waitSeconds)),
  };
}

async function withPolicy(opts?: { wakeOnCommit?: boolean }) {
  const t = setup(opts);
  await t.h.putPolicy.execute(new PutPolicyCommand(TENANT, rootActor, POLICY));
  const conv = await t.conversation();
  return { ...t, conv };
}

/** Settles `p` into a probe whose state can be read synchronously after the microtask queue drains. */
function probe<T>(p: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  p.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error) => Object.assign(state, { settled: true, error }),
  );
  return state;
}
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

// ---------------------------------------------------------------- get tool call (long-poll)

describe('GetToolCallHandler', () => {
  it('answers at once for a decided call, even when asked to wait', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('get_weather'));
    const view = await t.get(c.id, 60);
    expect(view).toMatchObject({ id: c.id, status: 'approved', decision: { by: { via: 'policy' } } });
    expect(t.waiters.timeouts).toEqual([]);
    expect(t.waiters.watching).toBe(0);
  });

  it('without a wait, answers a pending call at once, still pending', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('deploy_app'));
    expect(await t.get(c.id, 0)).toMatchObject({ status: 'pending', approval: { expiresAt: iso(300) } });
    expect(t.waiters.timeouts).toEqual([]);
  });

  it('with a wait, answers as soon as a committed decision wakes the waiters', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('deploy_app'));
    const answer = probe(t.get(c.id, 60));
    await t.waiters.untilBlocked();
    await flush();
    expect(answer.settled).toBe(false);

    t.clock.advance(2_000);
    await t.decide(alice, c.id);
    await flush();
    expect(answer).toMatchObject({
      settled: true,
      value: { status: 'approved', decision: { by: { id: 'alice' }, at: iso(2) } },
    });
    expect(t.waiters.watching).toBe(0);
  });

  it('with a wait, a decision is seen only once the waiters are woken', async () => {
    const t = await withPolicy({ wakeOnCommit: false });
    const c = await t.proposeOne(t.conv, call('deploy_app'));
    const answer = probe(t.get(c.id, 60));
    await t.waiters.untilBlocked();
    await t.decide(alice, c.id);
    await flush();
    expect(answer.settled).toBe(false); // nobody told the waiter

    t.waiters.wake(TENANT, c.id);
    await flush();
    expect(answer).toMatchObject({ settled: true, value: { status: 'approved' } });
  });

  it('a wake for another call, or a spurious wake, does not answer a pending call', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('deploy_app'));
    const answer = probe(t.get(c.id, 60));
    await t.waiters.untilBlocked();
    t.waiters.wake(TENANT, 'tc_other');
    t.waiters.wake('t2', c.id);
    await flush();
    expect(answer.settled).toBe(false);
    t.waiters.wake(TENANT, c.id); // nothing changed: it reads, finds it pending, waits again
    await flush();
    expect(answer.settled).toBe(false);
    expect(t.waiters.blocked).toBe(1);
    await t.decide(alice, c.id, 'reject');
    await flush();
    expect(answer).toMatchObject({ settled: true, value: { status: 'rejected' } });
  });

  it('with a wait, returns the call expired once the clock passes expiresAt (check on read), recording the expiry', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('quick_fix')); // expires after 30 s
    const mark = t.uow.mark();
    const answer = probe(t.get(c.id, 60));
    await t.waiters.untilBlocked();
    // Waits no later than just past expiresAt (a lost wake-up is the batch re-check's job, not the handler's).
    expect(t.waiters.timeouts[0]).toBe(30_001);

    t.clock.advance(29_000);
    await flush();
    expect(answer.settled).toBe(false);
    expect(t.waiters.blocked).toBe(1);

    t.clock.advance(2_000);
    await flush();
    await flush();
    expect(answer).toMatchObject({
      settled: true,
      value: { status: 'expired', decision: { outcome: 'expired', by: { id: 'system', via: 'system' }, at: iso(31) } },
    });
    expect(t.uow.types(mark)).toEqual(['ToolCallExpired']);
    expect(t.expiries).toEqual([new ExpireToolCallsCommand({ tenantId: TENANT, conversationId: t.conv })]);
  });

  it('the last wait before expiry ends just past expiresAt', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('quick_fix'));
    t.clock.advance(28_000);
    const answer = probe(t.get(c.id, 60));
    await t.waiters.untilBlocked();
    expect(t.waiters.timeouts).toEqual([2_001]);
    t.clock.advance(2_001);
    await flush();
    await flush();
    expect(answer).toMatchObject({ settled: true, value: { status: 'expired' } });
  });

  it('a plain read shows a call past expiresAt as expired even before the sweeper passes', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('deploy_app'));
    t.clock.advance(300_000);
    const mark = t.uow.mark();
    expect(await t.get(c.id)).toMatchObject({ status: 'expired' });
    expect(t.uow.types(mark)).toEqual(['ToolCallExpired']);
    expect(await t.get(c.id)).toMatchObject({ status: 'expired' });
    expect(t.uow.types(mark)).toEqual(['ToolCallExpired']); // expired once
  });

  it('with a wait that runs out, answers the call still pending', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('deploy_app'));
    const answer = probe(t.get(c.id, 2));
    await t.waiters.untilBlocked();
    expect(t.waiters.timeouts).toEqual([2_000]);
    t.clock.advance(1_999);
    await flush();
    expect(answer.settled).toBe(false);
    t.clock.advance(1);
    await flush();
    expect(answer).toMatchObject({ settled: true, value: { status: 'pending' } });
    expect(t.waiters.watching).toBe(0);
  });

  it('at shutdown, a waiting read answers at once with the call as it stands', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('deploy_app'));
    const answer = probe(t.get(c.id, 60));
    await t.waiters.untilBlocked();
    t.waiters.shutdown();
    await flush();
    expect(answer).toMatchObject({ settled: true, value: { status: 'pending' } });
    expect(await t.get(c.id, 60)).toMatchObject({ status: 'pending' });
  });

  it('is open to the conversation’s agent, its requester, approvers, admins and auditors, and not found for anyone else', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('deploy_app'));
    for (const who of [agent, rita, alice, root, audrey]) expect(await t.get(c.id, 0, who)).toMatchObject({ id: c.id });
    for (const who of [otherAgent, sam, foreignAdmin, foreignAgent])
      await expect(t.get(c.id, 0, who)).rejects.toMatchObject({ code: 'not_found' });
    await expect(t.get('tc_missing')).rejects.toMatchObject({ code: 'not_found' });
    expect(t.waiters.watching).toBe(0);
  });
});

// ---------------------------------------------------------------- access

describe('ToolCallAccessHandler and ConversationAccessHandler', () => {
  async function pending(toolName = 'deploy_app') {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call(toolName));
    const access = (p: Principal) => t.h.toolCallAccess.execute(new ToolCallAccessQuery(p, c.id));
    const convAccess = (p: Principal) => t.h.conversationAccess.execute(new ConversationAccessQuery(p, t.conv));
    return { ...t, id: c.id, access, convAccess };
  }

  it('a call of another tenant is not found, whatever the caller’s roles', async () => {
    const t = await pending();
    await expect(t.access(foreignAdmin)).rejects.toMatchObject({ code: 'not_found' });
    await expect(t.access(foreignAgent)).rejects.toMatchObject({ code: 'not_found' });
    await expect(t.convAccess(foreignAdmin)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('a conversation is not visible to another agent, nor to a person who is neither its requester nor an approver, admin or auditor', async () => {
    const t = await pending();
    for (const who of [otherAgent, sam]) {
      await expect(t.access(who)).rejects.toMatchObject({ code: 'not_found' });
      await expect(t.convAccess(who)).rejects.toMatchObject({ code: 'not_found' });
    }
  });

  it('an unknown tool call or conversation is not found', async () => {
    const t = await pending();
    await expect(t.h.toolCallAccess.execute(new ToolCallAccessQuery(root, 'tc_missing'))).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(
      t.h.conversationAccess.execute(new ConversationAccessQuery(root, 'conv_missing')),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  it('approvers and admins may decide a pending call; the owning agent owns it but may never decide', async () => {
    const t = await pending();
    expect(await t.access(alice)).toEqual({ isAgent: false, isOwningAgent: false, mayDecide: true });
    expect(await t.access(root)).toEqual({ isAgent: false, isOwningAgent: false, mayDecide: true });
    expect(await t.access(agent)).toEqual({ isAgent: true, isOwningAgent: true, mayDecide: false });
    expect(await t.access({ ...agent, roles: ['agent', 'admin'] })).toEqual({
      isAgent: true,
      isOwningAgent: true,
      mayDecide: false,
    });
  });

  it('an auditor sees the call but may not decide it', async () => {
    const t = await pending();
    expect(await t.access(audrey)).toEqual({ isAgent: false, isOwningAgent: false, mayDecide: false });
  });

  it('the requester sees the call, and may decide it only when its approvers list requester', async () => {
    const t = await pending();
    expect(await t.access(rita)).toEqual({ isAgent: false, isOwningAgent: false, mayDecide: false });
    const refund = await t.proposeOne(await t.conversation(), call('refund_customer'));
    expect(await t.h.toolCallAccess.execute(new ToolCallAccessQuery(rita, refund.id))).toMatchObject({
      mayDecide: true,
    });
    expect(await t.h.toolCallAccess.execute(new ToolCallAccessQuery(sam, refund.id)).catch((e) => e.code)).toBe(
      'not_found',
    );
  });

  it('conversation access says who owns it and never grants a decision', async () => {
    const t = await pending();
    expect(await t.convAccess(agent)).toEqual({ isAgent: true, isOwningAgent: true, mayDecide: false });
    expect(await t.convAccess(alice)).toEqual({ isAgent: false, isOwningAgent: false, mayDecide: false });
    expect(await t.convAccess(rita)).toEqual({ isAgent: false, isOwningAgent: false, mayDecide: false });
  });
});

// ---------------------------------------------------------------- conversation, policy, status, tool

describe('GetConversationHandler', () => {
  it('shows the conversation with its calls: blocked while one is pending, active once decided, halted while a halt covers it', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('deploy_app'));
    const read = () => t.h.getConversation.execute(new GetConversationQuery(root, t.conv));
    expect(await read()).toMatchObject({
      id: t.conv,
      agentId: 'agent-1',
      user: RITA,
      status: 'blocked',
      pendingCount: 1,
      toolCalls: [{ id: c.id, status: 'pending' }],
    });
    await t.decide(alice, c.id);
    expect(await read()).toMatchObject({ status: 'active', pendingCount: 0, toolCalls: [{ status: 'approved' }] });
    await t.h.halt.execute(new HaltCommand(root, { scope: 'agent', id: 'agent-1' }, 'incident'));
    expect(await read()).toMatchObject({ status: 'halted', toolCalls: [{ status: 'cancelled' }] });
  });

  it('another tenant’s conversation is not found', async () => {
    const t = await withPolicy();
    await expect(t.h.getConversation.execute(new GetConversationQuery(foreignAdmin, t.conv))).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});

describe('GetPolicyHandler', () => {
  it('a tenant with no policy yet gets version 0, the built-in defaults and no rules', async () => {
    const t = setup();
    expect(await t.h.getPolicy.execute(new GetPolicyQuery(TENANT))).toEqual({
      version: 0,
      defaults: {
        unknownTools: 'confirm',
        timeoutSeconds: 300,
        approvers: ['approver', 'admin'],
        trustAgentFlags: true,
        grants: 'tenant',
        selfApproval: true,
      },
      rules: [],
      updatedAt: null,
      updatedBy: null,
    });
  });

  it('shows the current version of the tenant’s own policy only', async () => {
    const t = await withPolicy();
    expect(await t.h.getPolicy.execute(new GetPolicyQuery(TENANT))).toMatchObject({
      version: 1,
      rules: POLICY.rules,
      updatedAt: T0.toISOString(),
      updatedBy: 'root',
    });
    expect(await t.h.getPolicy.execute(new GetPolicyQuery('t2'))).toMatchObject({ version: 0, rules: [] });
  });
});

describe('GetStatusHandler', () => {
  it('lists the halts in force, and calls the tenant halted only for a tenant-wide halt', async () => {
    const t = await withPolicy();
    const status = () => t.h.getStatus.execute(new GetStatusQuery(TENANT));
    expect(await status()).toEqual({ tenant: TENANT, halted: false, halts: [] });
    await t.h.halt.execute(new HaltCommand(root, { scope: 'conversation', id: t.conv }, 'looping'));
    expect(await status()).toMatchObject({
      halted: false,
      halts: [{ scope: 'conversation', id: t.conv, reason: 'looping', by: { id: 'root' }, at: T0.toISOString() }],
    });
    t.clock.advance(1_000);
    await t.h.halt.execute(new HaltCommand(root, { scope: 'tenant', id: '' }, 'incident'));
    expect(await status()).toMatchObject({
      halted: true,
      halts: [{ scope: 'conversation' }, { scope: 'tenant', id: null, reason: 'incident' }],
    });
    expect(await t.h.getStatus.execute(new GetStatusQuery('t2'))).toEqual({ tenant: 't2', halted: false, halts: [] });
  });
});

describe('GetToolHandler', () => {
  it('shows a registered tool and answers not_found for one that is not', async () => {
    const t = setup();
    await t.h.registerTool.execute(
      new RegisterToolCommand(agent, 'list_sources', { isReadOnly: true, requiresApproval: false, destructive: false }),
    );
    expect(await t.h.getTool.execute(new GetToolQuery(TENANT, 'list_sources'))).toMatchObject({
      name: 'list_sources',
      isReadOnly: true,
      description: null,
      registeredBy: { id: 'agent-1', kind: 'agent' },
    });
    await expect(t.h.getTool.execute(new GetToolQuery(TENANT, 'nope'))).rejects.toMatchObject({ code: 'not_found' });
    await expect(t.h.getTool.execute(new GetToolQuery('t2', 'list_sources'))).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});
