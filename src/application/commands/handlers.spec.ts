/**
 * Command handlers against in-memory fakes of the ports (test/support/in-memory-ports.ts):
 * real aggregates, a real ApprovalPolicy and PolicyDocument, no database and no Nest module.
 */
import type { CommandBus } from '@nestjs/cqrs';
import { createHash } from 'node:crypto';
import {
  FakeReceiptSigner,
  InMemoryConversationRepository,
  InMemoryUnitOfWork,
  StaleAggregateError,
  inMemoryPorts,
} from '../../../test/support/in-memory-ports';
import {
  Conversation,
  ConversationUser,
  Decider,
  ProposedCall,
} from '../../domain/conversation/conversation.aggregate';
import type { GrantScope } from '../../domain/policy/approval-policy';
import type { Actor, Principal } from '../../domain/shared/actor';
import type { ToolDefinition } from '../../domain/tool/tool-definition';
import { WakeWaitersHandler } from '../events/wake-waiters.handler';
import { EventsCommitted } from '../ports/stored-event';
import { GetConversationHandler } from '../queries/get-conversation/get-conversation.handler';
import { GetConversationQuery } from '../queries/get-conversation/get-conversation.query';
import { GetPolicyHandler } from '../queries/get-policy/get-policy.handler';
import { GetPolicyQuery } from '../queries/get-policy/get-policy.query';
import { GetToolCallHandler } from '../queries/get-tool-call/get-tool-call.handler';
import { GetToolCallQuery } from '../queries/get-tool-call/get-tool-call.query';
import { GetToolHandler } from '../queries/get-tool/get-tool.handler';
import { GetToolQuery } from '../queries/get-tool/get-tool.query';
import { ClaimExecutionCommand } from './claim-execution/claim-execution.command';
import { ClaimExecutionHandler } from './claim-execution/claim-execution.handler';
import { DecideToolCallCommand } from './decide-tool-call/decide-tool-call.command';
import { DecideToolCallHandler } from './decide-tool-call/decide-tool-call.handler';
import { ExpireToolCallsCommand } from './expire-tool-calls/expire-tool-calls.command';
import { ExpireToolCallsHandler } from './expire-tool-calls/expire-tool-calls.handler';
import { HaltCommand, ResumeCommand } from './halt/halt.command';
import { HaltHandler, ResumeHandler } from './halt/halt.handler';
import { ProposeToolCallsCommand } from './propose-tool-calls/propose-tool-calls.command';
import { RepositoryPolicyInputs } from '../policy-inputs/repository-policy-inputs';
import { ProposeToolCallsHandler } from './propose-tool-calls/propose-tool-calls.handler';
import { PutPolicyCommand } from './put-policy/put-policy.command';
import { PutPolicyHandler } from './put-policy/put-policy.handler';
import { RegisterToolCommand } from './register-tool/register-tool.command';
import { RegisterToolHandler } from './register-tool/register-tool.handler';
import { ReportResultCommand } from './report-result/report-result.command';
import { ReportResultHandler } from './report-result/report-result.handler';
import { StartConversationCommand } from './start-conversation/start-conversation.command';
import { StartConversationHandler } from './start-conversation/start-conversation.handler';

// ---------------------------------------------------------------- fixtures

const T0 = new Date('2025-03-01T12:00:00.000Z');
const iso = (seconds: number) => new Date(T0.getTime() + seconds * 1000).toISOString();
const TENANT = 't1';

const agent: Principal = { id: 'agent-1', tenant: TENANT, roles: ['agent'], name: 'Deploy bot' };
const otherAgent: Principal = { id: 'agent-2', tenant: TENANT, roles: ['agent'] };
const foreignAgent: Principal = { id: 'agent-1', tenant: 't2', roles: ['agent'] };
const root: Principal = { id: 'root', tenant: TENANT, roles: ['admin'], name: 'Root' };
const rootActor: Actor = { id: 'root', kind: 'person', via: 'api', name: 'Root', roles: ['admin'] };
const alice: Decider = { id: 'alice', tenant: TENANT, roles: ['approver'], name: 'Alice', via: 'web' };
const bob: Decider = { id: 'bob', tenant: TENANT, roles: ['approver'], via: 'cli' };
const audrey: Decider = { id: 'audrey', tenant: TENANT, roles: ['auditor'], via: 'web' };
/** Root deciding through the web inbox: only an admin may make grants beyond one conversation. */
const rootDecider: Decider = { ...root, via: 'web' };
/** The conversation's user: holds `admin` on the user record, which `requireRole` looks at. */
const RITA: ConversationUser = { id: 'rita', roles: ['admin'], name: 'Rita' };
/** Rita's own token: a person with no approving role. */
const rita: Decider = { id: 'rita', tenant: TENANT, roles: ['member'], via: 'web' };
const sam: Decider = { id: 'sam', tenant: TENANT, roles: ['member'], via: 'web' };

const POLICY = {
  defaults: { unknownTools: 'confirm', timeoutSeconds: 300, approvers: ['approver', 'admin'] },
  rules: [
    { match: 'get_*', level: 'automatic' }, // 0
    { match: 'shell(cmd=rm *)', level: 'deny' }, // 1
    {
      match: 'delete_source',
      level: 'confirm',
      requireRole: 'admin',
      approvers: ['requester', 'admin'],
      timeoutSeconds: 120,
    }, // 2
    { match: 'wipe_*', level: 'manual' }, // 3
    { match: 'refund_*', level: 'confirm', approvers: ['requester'], timeoutSeconds: 60 }, // 4
    { match: 'send_*', level: 'notify' }, // 5
  ],
};

const READ_ONLY: ToolDefinition = { isReadOnly: true, requiresApproval: false, destructive: false };
const DESTRUCTIVE: ToolDefinition = { isReadOnly: false, requiresApproval: false, destructive: true };

function call(toolName: string, args: Record<string, unknown> = {}, extra: Partial<ProposedCall> = {}): ProposedCall {
  return { toolName, arguments: args, ...extra };
}

/** Handlers built directly on one set of fakes; decisions wake waiters after commit, as in the app. */
function setup() {
  const ports = inMemoryPorts(T0);
  const { uow, conversations, tools, policies, grants, halts, clock, ids, waiters, receipts } = ports;
  uow.afterCommit((events) => new WakeWaitersHandler(waiters).handle(new EventsCommitted(events)));
  const expire = new ExpireToolCallsHandler(uow, conversations, clock);
  const bus = { execute: (c: ExpireToolCallsCommand) => expire.execute(c) } as unknown as CommandBus;
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
    claim: new ClaimExecutionHandler(uow, conversations, halts, receipts, clock),
    report: new ReportResultHandler(uow, conversations, clock),
    expire,
    halt: new HaltHandler(uow, halts, conversations, clock),
    resume: new ResumeHandler(uow, halts, clock),
    putPolicy: new PutPolicyHandler(uow, policies, clock),
    registerTool: new RegisterToolHandler(uow, tools, clock),
    getPolicy: new GetPolicyHandler(policies),
    getTool: new GetToolHandler(tools),
    getToolCall: new GetToolCallHandler(conversations, waiters, clock, bus),
    getConversation: new GetConversationHandler(conversations, halts),
  };
  const t = {
    ...ports,
    h,
    putPolicy: (doc: unknown = POLICY, opts?: { onlyIfChanged?: boolean; source?: string }) =>
      h.putPolicy.execute(new PutPolicyCommand(TENANT, rootActor, doc, opts)),
    async conversation(user: ConversationUser | null = RITA, by: Principal = agent, id?: string): Promise<string> {
      const { conversation } = await h.start.execute(
        new StartConversationCommand(by, { ...(id ? { id } : {}), ...(user ? { user } : {}), title: 'Clean-up' }),
      );
      return conversation.id;
    },
    propose: (conversationId: string, calls: ProposedCall[], by: Principal = agent) =>
      h.propose.execute(new ProposeToolCallsCommand(by, conversationId, calls)),
    /** Proposes one call and answers its view. */
    async proposeOne(conversationId: string, c: ProposedCall, by: Principal = agent) {
      return (await t.propose(conversationId, [c], by)).toolCalls[0];
    },
    decide: (
      by: Decider,
      toolCallId: string,
      decision: 'approve' | 'reject' | 'always_allow',
      more: { reason?: string; arguments?: Record<string, unknown>; scope?: GrantScope } = {},
    ) => h.decide.execute(new DecideToolCallCommand(by, toolCallId, { decision, ...more })),
    claim: (toolCallId: string, by: Principal = agent) => h.claim.execute(new ClaimExecutionCommand(by, toolCallId)),
    report: (
      toolCallId: string,
      by: Principal = agent,
      result: { outcome: 'succeeded' | 'failed'; output?: unknown; error?: string } = { outcome: 'succeeded' },
    ) => h.report.execute(new ReportResultCommand(by, toolCallId, result)),
    read: (toolCallId: string, by: Principal = root) => h.getToolCall.execute(new GetToolCallQuery(by, toolCallId)),
    readConversation: (id: string, by: Principal = root) => h.getConversation.execute(new GetConversationQuery(by, id)),
  };
  return t;
}

/** A tenant whose policy is POLICY (version 1), and one conversation whose user is Rita. */
async function withPolicy() {
  const t = setup();
  await t.putPolicy();
  const conv = await t.conversation();
  return { ...t, conv };
}

// ---------------------------------------------------------------- start conversation

describe('StartConversationHandler', () => {
  it('starting a conversation records ConversationStarted and answers it active with no calls', async () => {
    const t = setup();
    const { conversation, created } = await t.h.start.execute(
      new StartConversationCommand(agent, { user: RITA, title: 'Clean-up', metadata: { ticket: 7 } }),
    );
    expect(created).toBe(true);
    expect(conversation).toEqual({
      id: 'conv_1',
      agentId: 'agent-1',
      user: { ...RITA, assurance: 'asserted' },
      title: 'Clean-up',
      metadata: { ticket: 7 },
      status: 'active',
      pendingCount: 0,
      toolCalls: [],
      createdAt: T0.toISOString(),
      updatedAt: T0.toISOString(),
    });
    expect(t.uow.types()).toEqual(['ConversationStarted']);
    expect(t.uow.events[0]).toMatchObject({
      tenantId: TENANT,
      conversationId: 'conv_1',
      actor: { id: 'agent-1', kind: 'agent' },
      data: { agentId: 'agent-1', user: RITA },
    });
  });

  it('repeating a start with the same id by the same agent answers the same conversation and records nothing', async () => {
    const t = setup();
    await t.conversation(RITA, agent, 'chat-1');
    const mark = t.uow.mark();
    const again = await t.h.start.execute(new StartConversationCommand(agent, { id: 'chat-1', title: 'Other title' }));
    expect(again.created).toBe(false);
    expect(again.conversation).toMatchObject({ id: 'chat-1', title: 'Clean-up', user: RITA });
    expect(t.uow.types(mark)).toEqual([]);
  });

  it('another agent reusing a conversation id is refused with idempotency_mismatch', async () => {
    const t = setup();
    await t.conversation(RITA, agent, 'chat-1');
    await expect(t.h.start.execute(new StartConversationCommand(otherAgent, { id: 'chat-1' }))).rejects.toMatchObject({
      code: 'idempotency_mismatch',
    });
  });

  it('the same conversation id in another tenant is a different conversation', async () => {
    const t = setup();
    await t.conversation(RITA, agent, 'chat-1');
    const { created, conversation } = await t.h.start.execute(
      new StartConversationCommand(foreignAgent, { id: 'chat-1' }),
    );
    expect(created).toBe(true);
    expect(conversation.user).toBeNull();
  });
});

// ---------------------------------------------------------------- propose

describe('ProposeToolCallsHandler', () => {
  it('a call matched by an automatic rule is approved at once by the policy, recording ToolCallProposed then ToolCallAutoApproved', async () => {
    const t = await withPolicy();
    const mark = t.uow.mark();
    const { replay, toolCalls } = await t.propose(t.conv, [
      call('get_weather', { city: 'Oslo' }, { externalId: 'call_a', reason: 'asked', confidence: 0.9 }),
    ]);
    expect(replay).toBe(false);
    expect(toolCalls).toHaveLength(1);
    expect(toolCalls[0]).toMatchObject({
      id: 'tc_1',
      externalId: 'call_a',
      conversationId: t.conv,
      toolName: 'get_weather',
      arguments: { city: 'Oslo' },
      reason: 'asked',
      confidence: 0.9,
      status: 'approved',
      policy: { level: 'automatic', rule: 0, policyVersion: 1 },
      decision: { outcome: 'approved', by: { id: 'policy', via: 'policy' }, at: T0.toISOString() },
    });
    expect(toolCalls[0].approval).toBeUndefined();
    expect(t.uow.types(mark)).toEqual(['ToolCallProposed', 'ToolCallAutoApproved']);
    expect(t.uow.since(mark)[1]).toMatchObject({
      toolCallId: 'tc_1',
      toolName: 'get_weather',
      actor: { id: 'policy', via: 'policy' },
      data: { level: 'automatic', rule: 0, policyVersion: 1 },
    });
  });

  it('a notify rule lets the call run at once, recorded as auto-approved and as told to people', async () => {
    const t = await withPolicy();
    const mark = t.uow.mark();
    const c = await t.proposeOne(t.conv, call('send_email', { to: 'x@example.com' }));
    expect(c).toMatchObject({ status: 'approved', policy: { level: 'notify', rule: 5 } });
    expect(t.uow.types(mark)).toEqual(['ToolCallProposed', 'ToolCallAutoApproved', 'ToolCallNotified']);
  });

  it('a call matched by a confirm rule waits for a person, with the rule’s approvers and timeout, and blocks the conversation', async () => {
    const t = await withPolicy();
    const mark = t.uow.mark();
    const { conversation, toolCalls } = await t.propose(t.conv, [call('delete_source', { id: 'src_1' })]);
    expect(toolCalls[0]).toMatchObject({
      status: 'pending',
      policy: { level: 'confirm', rule: 2, policyVersion: 1 },
      approval: { approvers: ['requester', 'admin'], expiresAt: iso(120) },
    });
    expect(toolCalls[0].decision).toBeUndefined();
    expect(conversation).toMatchObject({ status: 'blocked', pendingCount: 1 });
    expect(t.uow.types(mark)).toEqual(['ToolCallProposed', 'ApprovalRequested']);
    expect(t.uow.since(mark)[1].data).toMatchObject({
      approvers: ['requester', 'admin'],
      expiresAt: iso(120),
      level: 'confirm',
      rule: 2,
    });
  });

  it('a call matched by a deny rule is rejected at once, with the rule named in policy and decision', async () => {
    const t = await withPolicy();
    const mark = t.uow.mark();
    const c = await t.proposeOne(t.conv, call('shell', { cmd: 'rm -rf /' }));
    expect(c).toMatchObject({
      status: 'rejected',
      policy: { level: 'deny', rule: 1, reason: 'Denied by policy rule 1 (shell(cmd=rm *))' },
      decision: {
        outcome: 'rejected',
        by: { id: 'policy', via: 'policy' },
        reason: 'Denied by policy rule 1 (shell(cmd=rm *))',
      },
    });
    expect(t.uow.types(mark)).toEqual(['ToolCallProposed', 'ToolCallRejected']);
    expect(t.uow.since(mark)[1].data).toMatchObject({ rejectedBy: 'policy', via: 'policy', latencyMs: 0, rule: 1 });
  });

  it('a requireRole rule denies the call when the conversation’s user lacks the role, or there is no user', async () => {
    const t = await withPolicy();
    const withMember = await t.conversation({ id: 'sam', roles: ['member'] });
    const withoutUser = await t.conversation(null);
    for (const conv of [withMember, withoutUser]) {
      const c = await t.proposeOne(conv, call('delete_source', { id: 'src_1' }));
      expect(c).toMatchObject({
        status: 'rejected',
        policy: { level: 'deny', rule: 2, reason: 'Permission denied: admin role required' },
        decision: { outcome: 'rejected', reason: 'Permission denied: admin role required' },
      });
    }
  });

  it('an unknown tool takes defaults.unknownTools, with the default approvers and timeout', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('deploy_app', { v: 1 }));
    expect(c).toMatchObject({
      status: 'pending',
      policy: {
        level: 'confirm',
        rule: null,
        policyVersion: 1,
        reason: 'Unknown tool: defaults.unknownTools = confirm',
      },
      approval: { approvers: ['approver', 'admin'], expiresAt: iso(300) },
    });
  });

  it('before any policy is put, the built-in defaults decide at version 0', async () => {
    const t = setup();
    const conv = await t.conversation();
    const c = await t.proposeOne(conv, call('get_weather'));
    expect(c).toMatchObject({ status: 'pending', policy: { level: 'confirm', rule: null, policyVersion: 0 } });
  });

  it('a tool registered as read-only runs automatically, and annotations stand in for an unregistered tool', async () => {
    const t = await withPolicy();
    await t.h.registerTool.execute(new RegisterToolCommand(root, 'list_sources', READ_ONLY));
    const listed = await t.proposeOne(t.conv, call('list_sources'));
    expect(listed).toMatchObject({
      status: 'approved',
      policy: { level: 'automatic', rule: null, reason: 'Tool flags: isReadOnly → automatic' },
    });

    const conv2 = await t.conversation();
    const dropped = await t.proposeOne(
      conv2,
      call('drop_table', { name: 'users' }, { annotations: { destructive: true } }),
    );
    expect(dropped).toMatchObject({
      status: 'pending',
      policy: { level: 'confirm', rule: null, reason: 'Tool flags (annotations): destructive → confirm' },
    });
  });

  it('one step is judged together: a pending call does not stop its siblings that the policy lets through', async () => {
    const t = await withPolicy();
    const mark = t.uow.mark();
    const { conversation, toolCalls } = await t.propose(t.conv, [
      call('get_weather'),
      call('deploy_app', { v: 1 }),
      call('shell', { cmd: 'rm x' }),
    ]);
    expect(toolCalls.map((c) => [c.id, c.status])).toEqual([
      ['tc_1', 'approved'],
      ['tc_2', 'pending'],
      ['tc_3', 'rejected'],
    ]);
    expect(conversation).toMatchObject({ status: 'blocked', pendingCount: 1 });
    expect(t.uow.types(mark)).toEqual([
      'ToolCallProposed',
      'ToolCallAutoApproved',
      'ToolCallProposed',
      'ApprovalRequested',
      'ToolCallProposed',
      'ToolCallRejected',
    ]);
  });

  it('a new proposal while a call is pending is refused with conversation_blocked, listing the pending ids, and records nothing', async () => {
    const t = await withPolicy();
    const pending = await t.proposeOne(t.conv, call('deploy_app', { v: 1 }));
    const mark = t.uow.mark();
    const version = t.conversations.stored(TENANT, t.conv)!.version;
    await expect(t.propose(t.conv, [call('get_weather')])).rejects.toMatchObject({
      code: 'conversation_blocked',
      details: { pendingToolCallIds: [pending.id] },
    });
    expect(t.uow.types(mark)).toEqual([]);
    expect(t.conversations.stored(TENANT, t.conv)!.version).toBe(version);
  });

  it('repeating a proposal with the same ids and content answers the same calls as a replay, even while blocked, and records nothing', async () => {
    const t = await withPolicy();
    const first = await t.propose(t.conv, [call('deploy_app', { v: 1 }, { externalId: 'call_1' })]);
    const mark = t.uow.mark();
    const again = await t.propose(t.conv, [call('deploy_app', { v: 1 }, { externalId: 'call_1' })]);
    expect(again.replay).toBe(true);
    expect(again.toolCalls).toEqual(first.toolCalls);
    expect(t.uow.types(mark)).toEqual([]);
  });

  it('reusing a tool-call id with different content is refused with idempotency_mismatch', async () => {
    const t = await withPolicy();
    await t.propose(t.conv, [call('get_weather', { city: 'Oslo' }, { externalId: 'call_1' })]);
    await expect(
      t.propose(t.conv, [call('get_weather', { city: 'Bergen' }, { externalId: 'call_1' })]),
    ).rejects.toMatchObject({ code: 'idempotency_mismatch' });
  });

  it('a pending call past its expiresAt no longer blocks: it is expired on the way and the new calls are proposed', async () => {
    const t = await withPolicy();
    const old = await t.proposeOne(t.conv, call('deploy_app', { v: 1 }));
    t.clock.advance(300_000);
    const mark = t.uow.mark();
    const fresh = await t.proposeOne(t.conv, call('get_weather'));
    expect(fresh.status).toBe('approved');
    expect(t.uow.types(mark)).toEqual(['ToolCallExpired', 'ToolCallProposed', 'ToolCallAutoApproved']);
    expect((await t.read(old.id)).status).toBe('expired');
  });

  it('only the conversation’s agent may propose: another agent or tenant gets not_found, a person gets forbidden', async () => {
    const t = await withPolicy();
    await expect(t.propose(t.conv, [call('get_weather')], otherAgent)).rejects.toMatchObject({ code: 'not_found' });
    await expect(t.propose(t.conv, [call('get_weather')], foreignAgent)).rejects.toMatchObject({ code: 'not_found' });
    await expect(t.propose(t.conv, [call('get_weather')], alice)).rejects.toMatchObject({ code: 'forbidden' });
    await expect(t.propose('no-such-conversation', [call('get_weather')])).rejects.toMatchObject({ code: 'not_found' });
  });

  it('a proposal whose unit of work fails to commit leaves no call behind and records nothing', async () => {
    const t = await withPolicy();
    const mark = t.uow.mark();
    t.uow.failNextCommit(new Error('connection lost'));
    await expect(t.propose(t.conv, [call('get_weather'), call('deploy_app')])).rejects.toThrow('connection lost');
    expect(t.uow.types(mark)).toEqual([]);
    expect(t.conversations.stored(TENANT, t.conv)).toMatchObject({ version: 1, toolCalls: [] });
    expect((await t.readConversation(t.conv)).status).toBe('active');
    // and the conversation is not blocked by a call that never was
    expect((await t.proposeOne(t.conv, call('get_weather'))).status).toBe('approved');
  });
});

// ---------------------------------------------------------------- decide

describe('DecideToolCallHandler', () => {
  async function pendingCall() {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('deploy_app', { v: 1 }));
    return { ...t, id: c.id };
  }

  it('refuses an approval made from arguments shown elsewhere once they are no longer what it would approve', async () => {
    const t = await pendingCall();
    const shown = (v: number) =>
      t.h.decide.execute(
        new DecideToolCallCommand({ ...alice, via: 'email' }, t.id, { decision: 'approve' }, {}, undefined, { v }),
      );
    await expect(shown(2)).rejects.toMatchObject({ code: 'arguments_changed' });
    expect((await t.read(t.id)).status).toBe('pending');
    expect((await shown(1)).status).toBe('approved');
  });

  it('approving a pending call records ToolCallApproved with the approver, channel and latency, and unblocks the conversation', async () => {
    const t = await pendingCall();
    t.clock.advance(5_000);
    const mark = t.uow.mark();
    const view = await t.decide(alice, t.id, 'approve', { reason: 'looks fine' });
    expect(view).toMatchObject({
      status: 'approved',
      decision: {
        outcome: 'approved',
        by: { id: 'alice', name: 'Alice', via: 'web' },
        at: iso(5),
        reason: 'looks fine',
      },
      updatedAt: iso(5),
    });
    expect(view.decision).not.toHaveProperty('kind');
    expect(t.uow.types(mark)).toEqual(['ToolCallApproved']);
    expect(t.uow.since(mark)[0]).toMatchObject({
      actor: { id: 'alice', kind: 'person', via: 'web' },
      data: { approvedBy: 'alice', via: 'web', latencyMs: 5_000, decision: 'approve' },
    });
    expect((await t.readConversation(t.conv)).status).toBe('active');
  });

  it('rejecting records ToolCallRejected with the reason', async () => {
    const t = await pendingCall();
    const mark = t.uow.mark();
    const view = await t.decide(bob, t.id, 'reject', { reason: 'not today' });
    expect(view).toMatchObject({
      status: 'rejected',
      decision: { outcome: 'rejected', by: { id: 'bob', via: 'cli' }, reason: 'not today' },
    });
    expect(t.uow.types(mark)).toEqual(['ToolCallRejected']);
    expect(t.uow.since(mark)[0].data).toMatchObject({ rejectedBy: 'bob', via: 'cli', reason: 'not today' });
  });

  it('approving with edited arguments keeps the original in the record and runs the edit', async () => {
    const t = await pendingCall();
    const view = await t.decide(alice, t.id, 'approve', { arguments: { v: 2 } });
    expect(view).toMatchObject({ arguments: { v: 1 }, decision: { editedArguments: { v: 2 } } });
    const mark = t.uow.mark();
    const claimed = await t.claim(t.id);
    expect(claimed.arguments).toEqual({ v: 2 });
    expect(FakeReceiptSigner.claims(claimed.receipt).args).toBe(t.receipts.digest({ v: 2 }));
    expect(t.uow.since(mark)[0]).toMatchObject({
      type: 'ToolCallExecuted',
      data: { arguments: { v: 2 }, edited: true },
    });
  });

  it('the first decision wins: a different one afterwards is refused with already_decided carrying the standing decision', async () => {
    const t = await pendingCall();
    await t.decide(alice, t.id, 'approve');
    const mark = t.uow.mark();
    await expect(t.decide(bob, t.id, 'reject')).rejects.toMatchObject({
      code: 'already_decided',
      details: { toolCallStatus: 'approved', decision: { outcome: 'approved', by: { id: 'alice', via: 'web' } } },
    });
    // approve and always_allow differ: that is another decision, not a repeat
    await expect(t.decide(alice, t.id, 'always_allow')).rejects.toMatchObject({ code: 'already_decided' });
    expect(t.uow.types(mark)).toEqual([]);
  });

  it('the same decision by the same person again answers the call unchanged and records nothing', async () => {
    const t = await pendingCall();
    const first = await t.decide(alice, t.id, 'approve');
    t.clock.advance(1_000);
    const mark = t.uow.mark();
    const again = await t.decide(alice, t.id, 'approve');
    expect(again).toEqual(first);
    expect(t.uow.types(mark)).toEqual([]);
  });

  it('a person whose roles do not meet the approvers, and every agent, is forbidden and nothing is recorded', async () => {
    const t = await pendingCall();
    const mark = t.uow.mark();
    await expect(t.decide(audrey, t.id, 'approve')).rejects.toMatchObject({ code: 'forbidden' });
    await expect(t.decide({ ...agent, via: 'api' }, t.id, 'approve')).rejects.toMatchObject({ code: 'forbidden' });
    await expect(t.decide({ ...agent, roles: ['agent', 'admin'], via: 'api' }, t.id, 'approve')).rejects.toMatchObject({
      code: 'forbidden',
    });
    expect(t.uow.types(mark)).toEqual([]);
    expect((await t.read(t.id)).status).toBe('pending');
  });

  it('a call of another tenant, or one the person may not see, is not found', async () => {
    const t = await pendingCall();
    await expect(t.decide({ ...alice, tenant: 't2' }, t.id, 'approve')).rejects.toMatchObject({ code: 'not_found' });
    await expect(t.decide(sam, t.id, 'approve')).rejects.toMatchObject({ code: 'not_found' });
    await expect(t.decide(alice, 'tc_404', 'approve')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('the requester decides when the rule lists requester; an approver outside that list is forbidden', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('refund_customer', { amount: 20 }));
    expect(c.approval).toEqual({ approvers: ['requester'], expiresAt: iso(60) });
    await expect(t.decide(alice, c.id, 'approve')).rejects.toMatchObject({ code: 'forbidden' });
    const view = await t.decide(rita, c.id, 'approve');
    expect(view).toMatchObject({ status: 'approved', decision: { by: { id: 'rita' } } });
  });

  it('deciding a call past its expiresAt is refused with already_decided, and the expiry is kept', async () => {
    const t = await pendingCall();
    t.clock.advance(300_000);
    const mark = t.uow.mark();
    await expect(t.decide(alice, t.id, 'approve')).rejects.toMatchObject({
      code: 'already_decided',
      details: { toolCallStatus: 'expired', decision: { outcome: 'expired', by: { id: 'system', via: 'system' } } },
    });
    expect(t.uow.types(mark)).toEqual(['ToolCallExpired']);
    expect(t.conversations.stored(TENANT, t.conv)!.toolCalls[0].status).toBe('expired');
    await expect(t.claim(t.id)).rejects.toMatchObject({ code: 'not_approved' });
  });

  it('a decision whose unit of work fails to commit leaves the call pending, makes no grant and records nothing', async () => {
    const t = await pendingCall();
    const mark = t.uow.mark();
    t.uow.failNextCommit();
    await expect(t.decide(alice, t.id, 'always_allow')).rejects.toThrow('commit failed');
    expect(t.uow.types(mark)).toEqual([]);
    expect(t.grants.all(TENANT)).toEqual([]);
    expect((await t.read(t.id)).status).toBe('pending');
    expect(t.waiters.wakes).toEqual([]);
  });
});

// ---------------------------------------------------------------- always_allow and grants

describe('always_allow', () => {
  it('approves the call and creates a conversation grant that the next proposal of that tool uses (via policy)', async () => {
    const t = await withPolicy();
    const first = await t.proposeOne(t.conv, call('deploy_app', { v: 1 }));
    const mark = t.uow.mark();
    const view = await t.decide(alice, first.id, 'always_allow');
    expect(view).toMatchObject({ status: 'approved', decision: { outcome: 'approved', by: { id: 'alice' } } });
    expect([...t.uow.types(mark)].sort()).toEqual(['GrantCreated', 'ToolCallApproved']); // order: see the failing test below
    const byType = (type: string) => t.uow.since(mark).find((e) => e.type === type)!;
    expect(byType('ToolCallApproved').data).toMatchObject({ decision: 'always_allow' });
    expect(byType('GrantCreated')).toMatchObject({
      toolCallId: first.id,
      toolName: 'deploy_app',
      actor: { id: 'alice', kind: 'person' },
    });
    expect(byType('GrantCreated').data).toEqual({
      grantId: 'grant_1',
      scope: 'conversation',
      scopeId: t.conv,
      createdBy: 'alice',
      via: 'web',
    });
    expect(t.grants.all(TENANT)).toEqual([
      expect.objectContaining({
        id: 'grant_1',
        toolName: 'deploy_app',
        scope: 'conversation',
        conversationId: t.conv,
        sourceToolCallId: first.id,
      }),
    ]);

    const mark2 = t.uow.mark();
    const next = await t.proposeOne(t.conv, call('deploy_app', { v: 2 }));
    expect(next).toMatchObject({
      status: 'approved',
      policy: { level: 'automatic', rule: null, reason: 'Allowed by standing grant grant_1 (scope conversation)' },
      decision: { outcome: 'approved', by: { id: 'policy', via: 'policy' } },
    });
    expect(t.uow.types(mark2)).toEqual(['ToolCallProposed', 'ToolCallAutoApproved']);
    expect(t.uow.since(mark2)[1].data).toMatchObject({ grantId: 'grant_1' });
  });

  it('always_allow records the approval before the grant it gives rise to', async () => {
    const t = await withPolicy();
    const first = await t.proposeOne(t.conv, call('deploy_app'));
    const mark = t.uow.mark();
    await t.decide(alice, first.id, 'always_allow');
    expect(t.uow.types(mark)).toEqual(['ToolCallApproved', 'GrantCreated']);
  });

  it('a conversation grant does not reach the agent’s other conversations', async () => {
    const t = await withPolicy();
    const first = await t.proposeOne(t.conv, call('deploy_app'));
    await t.decide(alice, first.id, 'always_allow');
    const other = await t.conversation();
    expect((await t.proposeOne(other, call('deploy_app'))).status).toBe('pending');
  });

  it('an agent grant reaches the agent’s other conversations but not another agent’s', async () => {
    const t = await withPolicy();
    const first = await t.proposeOne(t.conv, call('deploy_app'));
    await t.decide(rootDecider, first.id, 'always_allow', { scope: 'agent' });
    expect(t.grants.all(TENANT)[0]).toMatchObject({ scope: 'agent', agentId: 'agent-1' });
    const sameAgent = await t.conversation();
    const otherAgents = await t.conversation(RITA, otherAgent);
    expect((await t.proposeOne(sameAgent, call('deploy_app'))).status).toBe('approved');
    expect((await t.proposeOne(otherAgents, call('deploy_app'), otherAgent)).status).toBe('pending');
  });

  it('a tenant grant reaches every agent of the tenant', async () => {
    const t = await withPolicy();
    const first = await t.proposeOne(t.conv, call('deploy_app'));
    await t.decide(rootDecider, first.id, 'always_allow', { scope: 'tenant' });
    const otherAgents = await t.conversation(RITA, otherAgent);
    expect((await t.proposeOne(otherAgents, call('deploy_app'), otherAgent)).status).toBe('approved');
  });

  it.each<[string, Decider, GrantScope]>([
    ['an approver', alice, 'agent'],
    ['an approver', alice, 'tenant'],
    ['the requester with no role', rita, 'tenant'],
  ])(
    '%s asking for a grant in scope %s is refused with forbidden: GrantRefused is recorded, the call stays pending, no grant',
    async (_who, by, scope) => {
      const t = await withPolicy();
      // refund_* lists the requester among its approvers; deploy_app falls to the defaults (approver, admin)
      const first = await t.proposeOne(t.conv, call(by === rita ? 'refund_order' : 'deploy_app'));
      const mark = t.uow.mark();
      await expect(t.decide(by, first.id, 'always_allow', { scope })).rejects.toMatchObject({
        code: 'forbidden',
        kind: 'forbidden',
        details: { requestedScope: scope, allowedScope: 'conversation' },
        message: `Only an admin may make a standing grant in scope ${scope}; you may grant at most scope conversation`,
      });
      expect(t.uow.types(mark)).toEqual(['GrantRefused']);
      expect(t.uow.since(mark)[0]).toMatchObject({
        toolCallId: first.id,
        actor: { id: by.id, kind: 'person' },
        data: { requestedScope: scope, allowedScope: 'conversation', refusedBy: by.id },
      });
      expect(t.grants.all(TENANT)).toEqual([]);
      expect((await t.read(first.id)).status).toBe('pending');
      // the same person may still grant for this conversation
      expect(await t.decide(by, first.id, 'always_allow', { scope: 'conversation' })).toMatchObject({
        status: 'approved',
      });
      expect(t.grants.all(TENANT)).toEqual([expect.objectContaining({ scope: 'conversation' })]);
    },
  );

  it('a policy that narrows grants (rule grants: conversation, defaults grants: none) binds admins too', async () => {
    const t = setup();
    await t.putPolicy({
      defaults: { grants: 'none' },
      rules: [{ match: 'deploy_*', level: 'confirm', grants: 'conversation' }],
    });
    const conv = await t.conversation();
    const deploy = await t.proposeOne(conv, call('deploy_app'));
    await expect(t.decide(rootDecider, deploy.id, 'always_allow', { scope: 'tenant' })).rejects.toMatchObject({
      code: 'forbidden',
      details: { requestedScope: 'tenant', allowedScope: 'conversation' },
      message: 'A standing grant for this call may cover at most scope conversation (policy rule 0), not tenant',
    });
    expect(await t.decide(rootDecider, deploy.id, 'always_allow')).toMatchObject({ status: 'approved' });

    const other = await t.proposeOne(conv, call('other_tool'));
    await expect(t.decide(rootDecider, other.id, 'always_allow')).rejects.toMatchObject({
      code: 'forbidden',
      details: { requestedScope: 'conversation', allowedScope: 'none' },
      message: 'No standing grant may be made for this call (the policy defaults: grants none); approve it instead',
    });
    expect(await t.decide(rootDecider, other.id, 'approve')).toMatchObject({ status: 'approved' });
    expect(t.grants.all(TENANT)).toEqual([expect.objectContaining({ toolName: 'deploy_app', scope: 'conversation' })]);
  });

  it('a grant never turns a deny into a run', async () => {
    const t = await withPolicy();
    const ls = await t.proposeOne(t.conv, call('shell', { cmd: 'ls' }));
    expect(ls.status).toBe('pending');
    await t.decide(alice, ls.id, 'always_allow');
    const rm = await t.proposeOne(t.conv, call('shell', { cmd: 'rm -rf /' }));
    expect(rm).toMatchObject({ status: 'rejected', policy: { level: 'deny', rule: 1 } });
    expect((await t.proposeOne(t.conv, call('shell', { cmd: 'ls -l' }))).status).toBe('approved');
  });

  it('always_allow on a manual call approves that call and makes no grant', async () => {
    const t = await withPolicy();
    const first = await t.proposeOne(t.conv, call('wipe_disk', { disk: 'sdb' }));
    expect(first).toMatchObject({ status: 'pending', policy: { level: 'manual', rule: 3 } });
    const mark = t.uow.mark();
    expect(await t.decide(alice, first.id, 'always_allow')).toMatchObject({ status: 'approved' });
    expect(t.uow.types(mark)).toEqual(['ToolCallApproved']);
    expect(t.grants.all(TENANT)).toEqual([]);
    expect((await t.proposeOne(t.conv, call('wipe_disk', { disk: 'sdc' }))).status).toBe('pending');
  });
});

// ---------------------------------------------------------------- claim and report

describe('ProposeToolCallsHandler with claim (propose and claim in one request)', () => {
  const proposeClaiming = (t: Awaited<ReturnType<typeof withPolicy>>, calls: ProposedCall[]) =>
    t.h.propose.execute(new ProposeToolCallsCommand(agent, t.conv, calls, true));

  it('claims each call the policy approves on the spot, in the proposal’s commit, and leaves held and denied calls as they were', async () => {
    const t = await withPolicy();
    const mark = t.uow.mark();
    const commits = t.uow.commits;
    const answer = await proposeClaiming(t, [
      call('get_source', { id: 'src_2' }, { externalId: 'c1' }),
      call('send_mail', { to: 'ann' }, { externalId: 'c2' }),
      call('deploy_app', { v: 1 }, { externalId: 'c3' }),
      call('shell', { cmd: 'rm -rf /' }, { externalId: 'c4' }),
    ]);
    expect(answer.toolCalls.map((c) => c.status)).toEqual(['executed', 'executed', 'pending', 'rejected']);
    const [read, notify] = answer.toolCalls;
    expect(answer.claims).toEqual([
      { toolCallId: read.id, arguments: { id: 'src_2' }, receipt: expect.any(String) },
      { toolCallId: notify.id, arguments: { to: 'ann' }, receipt: expect.any(String) },
    ]);
    expect(FakeReceiptSigner.claims(answer.claims![0].receipt)).toEqual({
      tcid: read.id,
      conv: t.conv,
      tool: 'get_source',
      args: t.receipts.digest({ id: 'src_2' }),
      approvedBy: 'policy',
      tenant: TENANT,
    });
    expect(read.execution).toEqual({ at: iso(0), by: { id: 'agent-1', name: 'Deploy bot', via: 'api' } });
    // One commit: the proposal's events and the claims' ToolCallExecuted together.
    expect(t.uow.types(mark).filter((type) => type === 'ToolCallExecuted')).toHaveLength(2);
    expect(t.uow.commits - commits).toBe(1);
    await expect(t.claim(read.id)).rejects.toMatchObject({ code: 'already_executed' });
    expect(t.receipts.signed).toHaveLength(2);
    expect(await t.report(read.id)).toMatchObject({ status: 'completed' });
  });

  it('without claim, the same step answers no claims and leaves the approved call for its own claim', async () => {
    const t = await withPolicy();
    const answer = await t.propose(t.conv, [call('get_source', { id: 'src_2' })]);
    expect(answer.claims).toBeUndefined();
    expect(answer.toolCalls[0].status).toBe('approved');
    expect(t.receipts.signed).toHaveLength(0);
  });

  it('a replay claims nothing again: the retry of a lost answer finds the call executed, and one run stands', async () => {
    const t = await withPolicy();
    const step = [call('get_source', { id: 'src_2' }, { externalId: 'c1' })];
    const first = await proposeClaiming(t, step);
    t.clock.advance(5_000);
    const mark = t.uow.mark();
    const again = await proposeClaiming(t, step);
    expect(again).toMatchObject({
      replay: true,
      claims: [],
      toolCalls: [{ id: first.toolCalls[0].id, status: 'executed' }],
    });
    expect(t.uow.types(mark)).toEqual([]);
    expect(t.receipts.signed).toHaveLength(1);
  });

  it('the same request retried with its claimKey is answered the claim it made (same receipt id), never a second run', async () => {
    const t = await withPolicy();
    const step = [call('get_source', { id: 'src_2' }, { externalId: 'c1' })];
    const send = (key?: string) => t.h.propose.execute(new ProposeToolCallsCommand(agent, t.conv, step, true, key));
    const first = await send('k-1');
    t.clock.advance(1_000);
    const mark = t.uow.mark();
    const retried = await send('k-1');
    expect(retried).toMatchObject({ replay: true, toolCalls: [{ status: 'executed', execution: { at: iso(0) } }] });
    expect(retried.claims).toEqual([{ ...first.claims![0], receipt: expect.any(String) }]);
    // The same receipt: its id, and issued at the claim (so it expires when the first did).
    const identity = (r: string) => {
      const { jti, iat } = FakeReceiptSigner.claims(r) as unknown as { jti: string; iat: string };
      return { jti, iat };
    };
    expect(identity(retried.claims![0].receipt)).toEqual(identity(first.claims![0].receipt));
    expect(identity(first.claims![0].receipt)).toEqual({ jti: expect.stringMatching(/^rcpt_/), iat: iso(0) });
    expect(t.uow.types(mark)).toEqual([]); // answered again, not claimed again
    expect((await send('k-2')).claims).toEqual([]); // another request: the call is claimed already
    expect((await send()).claims).toEqual([]);
    await t.report(first.toolCalls[0].id);
    expect((await send('k-1')).claims).toEqual([]); // the run is over: nothing to answer again
  });

  it('a keyed claim is answered again only while its receipt is good (15 minutes from the claim)', async () => {
    const t = await withPolicy();
    const step = [call('get_source', { id: 'src_2' }, { externalId: 'c1' })];
    const send = () => t.h.propose.execute(new ProposeToolCallsCommand(agent, t.conv, step, true, 'k-1'));
    await send();
    t.clock.advance(15 * 60_000 - 1);
    expect((await send()).claims).toHaveLength(1);
    t.clock.advance(1);
    expect((await send()).claims).toEqual([]);
  });

  it('a keyed claim is not answered again under a halt', async () => {
    const t = await withPolicy();
    const step = [call('get_source', { id: 'src_2' }, { externalId: 'c1' })];
    await t.h.propose.execute(new ProposeToolCallsCommand(agent, t.conv, step, true, 'k-1'));
    await t.h.halt.execute(new HaltCommand(root, { scope: 'conversation', id: t.conv }, 'incident'));
    const again = await t.h.propose.execute(new ProposeToolCallsCommand(agent, t.conv, step, true, 'k-1'));
    expect(again).toMatchObject({ replay: true, claims: [] });
  });

  it('a step proposed again once a person approved its held call claims it then, with the approver on the receipt', async () => {
    const t = await withPolicy();
    const step = [call('deploy_app', { v: 1 }, { externalId: 'd1' })];
    const first = await proposeClaiming(t, step);
    expect(first).toMatchObject({ claims: [], toolCalls: [{ status: 'pending' }] });
    await t.decide(alice, first.toolCalls[0].id, 'approve', { arguments: { v: 2 } });
    t.clock.advance(1_000);
    const again = await proposeClaiming(t, step);
    expect(again).toMatchObject({ replay: true, toolCalls: [{ status: 'executed', execution: { at: iso(1) } }] });
    expect(again.claims).toEqual([
      { toolCallId: first.toolCalls[0].id, arguments: { v: 2 }, receipt: expect.any(String) },
    ]);
    expect(FakeReceiptSigner.claims(again.claims![0].receipt)).toMatchObject({
      approvedBy: 'alice',
      args: t.receipts.digest({ v: 2 }),
    });
    expect((await proposeClaiming(t, step)).claims).toEqual([]);
  });

  it('a step that repeats an approved call and adds another claims both, each once', async () => {
    const t = await withPolicy();
    const first = await t.propose(t.conv, [call('get_source', { id: 'a' }, { externalId: 'c1' })]);
    t.clock.advance(1_000);
    const next = await proposeClaiming(t, [
      call('get_source', { id: 'a' }, { externalId: 'c1' }),
      call('get_report', { id: 'b' }, { externalId: 'c2' }),
    ]);
    expect(next.replay).toBe(false);
    expect(next.toolCalls[0].id).toBe(first.toolCalls[0].id);
    expect(next.claims!.map((k) => k.toolCallId)).toEqual(next.toolCalls.map((c) => c.id));
    expect(next.toolCalls.map((c) => c.status)).toEqual(['executed', 'executed']);
    await expect(t.claim(first.toolCalls[0].id)).rejects.toMatchObject({ code: 'already_executed' });
  });

  it('another agent’s proposal with claim is refused (the conversation is not theirs to see) before anything is claimed', async () => {
    const t = await withPolicy();
    await expect(
      t.h.propose.execute(new ProposeToolCallsCommand(otherAgent, t.conv, [call('get_source')], true)),
    ).rejects.toMatchObject({ code: 'not_found' });
    expect(t.receipts.signed).toHaveLength(0);
  });
});

describe('ClaimExecutionHandler and ReportResultHandler', () => {
  it('decide, claim, report: the call moves approved → executed → completed with one event each, and the receipt names the approver and the tenant', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('deploy_app', { v: 1 }));
    await t.decide(alice, c.id, 'approve');
    t.clock.advance(1_000);
    const mark = t.uow.mark();

    const claimed = await t.claim(c.id);
    expect(claimed.toolCall).toMatchObject({
      status: 'executed',
      execution: { at: iso(1), by: { id: 'agent-1', name: 'Deploy bot', via: 'api' } },
    });
    expect(claimed.arguments).toEqual({ v: 1 });
    expect(FakeReceiptSigner.claims(claimed.receipt)).toEqual({
      tcid: c.id,
      conv: t.conv,
      tool: 'deploy_app',
      args: t.receipts.digest({ v: 1 }),
      approvedBy: 'alice',
      tenant: TENANT,
    });

    t.clock.advance(2_000);
    const done = await t.report(c.id, agent, { outcome: 'succeeded', output: { deployed: true } });
    expect(done).toMatchObject({
      status: 'completed',
      result: { outcome: 'succeeded', output: { deployed: true }, at: iso(3) },
    });
    expect(t.uow.types(mark)).toEqual(['ToolCallExecuted', 'ToolCallCompleted']);
    expect(t.uow.since(mark)[1].data).toMatchObject({ outcome: 'succeeded', durationMs: 2_000 });
  });

  it('the receipt digest is SHA-256 of the canonical (RFC 8785) arguments, whatever their key order', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('get_report', { b: 2, a: [1, { d: 4, c: 3 }] }));
    const { receipt } = await t.claim(c.id);
    const expected = createHash('sha256').update('{"a":[1,{"c":3,"d":4}],"b":2}').digest('hex');
    expect(FakeReceiptSigner.claims(receipt)).toMatchObject({ args: expected, approvedBy: 'policy' });
  });

  it('claiming a pending or rejected call is refused with not_approved and signs nothing', async () => {
    const t = await withPolicy();
    const pending = await t.proposeOne(t.conv, call('deploy_app'));
    await expect(t.claim(pending.id)).rejects.toMatchObject({
      code: 'not_approved',
      details: { toolCallStatus: 'pending' },
    });
    await t.decide(alice, pending.id, 'reject');
    await expect(t.claim(pending.id)).rejects.toMatchObject({
      code: 'not_approved',
      details: { toolCallStatus: 'rejected' },
    });
    expect(t.receipts.signed).toEqual([]);
  });

  it('claiming twice is refused with already_executed and signs one receipt only', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('get_weather'));
    await t.claim(c.id);
    const mark = t.uow.mark();
    await expect(t.claim(c.id)).rejects.toMatchObject({ code: 'already_executed' });
    await t.report(c.id);
    await expect(t.claim(c.id)).rejects.toMatchObject({
      code: 'already_executed',
      details: { toolCallStatus: 'completed' },
    });
    expect(t.receipts.signed).toHaveLength(1);
    expect(t.uow.types(mark)).toEqual(['ToolCallCompleted']);
  });

  it('claiming a call that expired while pending is refused with not_approved, and the expiry is recorded', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('deploy_app'));
    t.clock.advance(300_000);
    const mark = t.uow.mark();
    await expect(t.claim(c.id)).rejects.toMatchObject({ code: 'not_approved', details: { toolCallStatus: 'expired' } });
    expect(t.uow.types(mark)).toEqual(['ToolCallExpired']);
  });

  it('a result before the claim is refused with not_executed, and a second result with already_completed', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('get_weather'));
    await expect(t.report(c.id)).rejects.toMatchObject({ code: 'not_executed' });
    await t.claim(c.id);
    await t.report(c.id, agent, { outcome: 'failed', error: 'timeout' });
    const mark = t.uow.mark();
    await expect(t.report(c.id)).rejects.toMatchObject({ code: 'already_completed' });
    expect(t.uow.types(mark)).toEqual([]);
    expect((await t.read(c.id)).result).toMatchObject({ outcome: 'failed', error: 'timeout' });
  });

  it('only the conversation’s agent claims and reports: another agent or tenant gets not_found, a person forbidden', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('get_weather'));
    await expect(t.claim(c.id, otherAgent)).rejects.toMatchObject({ code: 'not_found' });
    await expect(t.claim(c.id, foreignAgent)).rejects.toMatchObject({ code: 'not_found' });
    await expect(t.claim(c.id, root)).rejects.toMatchObject({ code: 'forbidden' });
    await expect(t.report(c.id, alice)).rejects.toMatchObject({ code: 'forbidden' });
    expect(t.receipts.signed).toEqual([]);
  });
});

// ---------------------------------------------------------------- halt and resume

describe('HaltHandler and ResumeHandler', () => {
  /** Conversation A: a claimed call, an approved one and a pending one; conversation B (same agent): a pending one. */
  async function busy() {
    const t = await withPolicy();
    const claimed = await t.proposeOne(t.conv, call('get_a'));
    await t.claim(claimed.id);
    const { toolCalls } = await t.propose(t.conv, [call('get_b'), call('deploy_app', { v: 1 })]);
    const [approved, pending] = toolCalls;
    const convB = await t.conversation();
    const pendingB = await t.proposeOne(convB, call('deploy_app', { v: 9 }));
    return { ...t, claimed, approved, pending, convB, pendingB };
  }
  const halt = (
    t: ReturnType<typeof setup>,
    scope: 'tenant' | 'agent' | 'conversation',
    id: string,
    reason = 'incident 42',
  ) => t.h.halt.execute(new HaltCommand(root, { scope, id }, reason));
  const resume = (t: ReturnType<typeof setup>, scope: 'tenant' | 'agent' | 'conversation', id: string) =>
    t.h.resume.execute(new ResumeCommand(root, { scope, id }, 'all clear'));

  it('halting a conversation cancels its pending and approved-but-unclaimed calls, and leaves claimed ones and other conversations alone', async () => {
    const t = await busy();
    t.clock.advance(10_000);
    const mark = t.uow.mark();
    const result = await halt(t, 'conversation', t.conv);
    expect(result).toEqual({
      scope: 'conversation',
      id: t.conv,
      reason: 'incident 42',
      by: { id: 'root', name: 'Root', via: 'api' },
      at: iso(10),
      halted: true,
      changed: true,
      cancelledToolCallIds: [t.approved.id, t.pending.id],
    });
    expect(t.uow.types(mark)).toEqual(['Halted', 'ToolCallCancelled', 'ToolCallCancelled']);
    expect(t.uow.since(mark)[1].data).toMatchObject({ reason: 'incident 42', previousStatus: 'approved' });

    const approved = await t.read(t.approved.id);
    expect(approved).toMatchObject({
      status: 'cancelled',
      decision: { outcome: 'approved', by: { id: 'policy' } },
      cancellation: { by: { id: 'root', via: 'api' }, at: iso(10), reason: 'incident 42' },
    });
    const pending = await t.read(t.pending.id);
    expect(pending).toMatchObject({
      status: 'cancelled',
      decision: { outcome: 'cancelled', by: { id: 'root' } },
      cancellation: { reason: 'incident 42' },
    });
    expect((await t.read(t.claimed.id)).status).toBe('executed');
    expect((await t.read(t.pendingB.id)).status).toBe('pending');
    expect(t.waiters.wakes).toEqual(expect.arrayContaining([`${TENANT}/${t.pending.id}`]));
  });

  it('while halted, new proposals and claims in scope are refused with halted, and record nothing', async () => {
    const t = await busy();
    await halt(t, 'conversation', t.conv);
    const mark = t.uow.mark();
    await expect(t.propose(t.conv, [call('get_c')])).rejects.toMatchObject({ code: 'halted', kind: 'unavailable' });
    await expect(t.claim(t.approved.id)).rejects.toMatchObject({ code: 'halted' });
    expect(t.uow.types(mark)).toEqual([]);
    expect(t.receipts.signed).toHaveLength(1);
    expect((await t.readConversation(t.conv)).status).toBe('halted');
  });

  it('during a halt, a result for a call claimed before it is still accepted, and a pure replay still answers', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('get_a', {}, { externalId: 'call_1' }));
    await t.claim(c.id);
    await halt(t, 'conversation', t.conv);
    const mark = t.uow.mark();
    expect(await t.report(c.id)).toMatchObject({ status: 'completed' });
    const replay = await t.propose(t.conv, [call('get_a', {}, { externalId: 'call_1' })]);
    expect(replay).toMatchObject({ replay: true, conversation: { status: 'halted' } });
    expect(t.uow.types(mark)).toEqual(['ToolCallCompleted']);
  });

  it('halting what is already halted changes nothing and records nothing', async () => {
    const t = await busy();
    await halt(t, 'conversation', t.conv, 'first');
    const mark = t.uow.mark();
    const again = await halt(t, 'conversation', t.conv, 'second');
    expect(again).toMatchObject({ halted: true, changed: false, reason: 'first', cancelledToolCallIds: [] });
    expect(t.uow.types(mark)).toEqual([]);
  });

  it('an agent halt covers every conversation of that agent and no other agent’s', async () => {
    const t = await busy();
    const elsewhere = await t.conversation(RITA, otherAgent);
    const result = await halt(t, 'agent', 'agent-1');
    expect(result.cancelledToolCallIds.sort()).toEqual([t.approved.id, t.pending.id, t.pendingB.id].sort());
    await expect(t.propose(t.convB, [call('get_c')])).rejects.toMatchObject({ code: 'halted' });
    expect((await t.proposeOne(elsewhere, call('get_c'), otherAgent)).status).toBe('approved');
  });

  it('a tenant halt stops every agent of the tenant', async () => {
    const t = await busy();
    const elsewhere = await t.conversation(RITA, otherAgent);
    await halt(t, 'tenant', '');
    await expect(t.propose(elsewhere, [call('get_c')], otherAgent)).rejects.toMatchObject({
      code: 'halted',
      details: { scope: 'tenant' },
    });
  });

  it('resuming lifts the halt so proposals are accepted again; resuming again changes nothing', async () => {
    const t = await busy();
    await halt(t, 'conversation', t.conv);
    const mark = t.uow.mark();
    expect(await resume(t, 'conversation', t.conv)).toEqual({
      scope: 'conversation',
      id: t.conv,
      halted: false,
      changed: true,
    });
    expect(t.uow.types(mark)).toEqual(['Resumed']);
    expect(t.uow.since(mark)[0].data).toMatchObject({
      scope: 'conversation',
      id: t.conv,
      reason: 'all clear',
      haltReason: 'incident 42',
    });
    expect((await t.proposeOne(t.conv, call('get_c'))).status).toBe('approved');
    // the cancelled calls stay cancelled
    await expect(t.claim(t.approved.id)).rejects.toMatchObject({
      code: 'not_approved',
      details: { toolCallStatus: 'cancelled' },
    });

    const mark2 = t.uow.mark();
    expect(await resume(t, 'conversation', t.conv)).toMatchObject({ halted: false, changed: false });
    expect(t.uow.types(mark2)).toEqual([]);
  });

  it('halting a conversation of another tenant is not found', async () => {
    const t = await withPolicy();
    const foreign = await t.conversation(null, foreignAgent, 'chat-x');
    await expect(
      t.h.halt.execute(new HaltCommand(root, { scope: 'conversation', id: foreign }, 'x')),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  it('deciding a call cancelled by a halt is refused with already_decided', async () => {
    const t = await busy();
    await halt(t, 'conversation', t.conv);
    await expect(t.decide(alice, t.pending.id, 'approve')).rejects.toMatchObject({
      code: 'already_decided',
      details: { toolCallStatus: 'cancelled' },
    });
  });
});

// ---------------------------------------------------------------- expiry

describe('ExpireToolCallsHandler', () => {
  async function twoPending() {
    const t = await withPolicy();
    const short = await t.proposeOne(t.conv, call('delete_source', { id: 's1' })); // 120 s
    const convB = await t.conversation();
    const long = await t.proposeOne(convB, call('deploy_app')); // 300 s
    return { ...t, short, convB, long };
  }

  it('the sweep expires only the calls past their expiresAt', async () => {
    const t = await twoPending();
    t.clock.advance(119_999);
    expect(await t.h.expire.execute(new ExpireToolCallsCommand())).toBe(0);

    t.clock.advance(1);
    const mark = t.uow.mark();
    expect(await t.h.expire.execute(new ExpireToolCallsCommand())).toBe(1);
    expect(t.uow.since(mark)).toEqual([
      expect.objectContaining({
        type: 'ToolCallExpired',
        toolCallId: t.short.id,
        actor: expect.objectContaining({ id: 'system' }),
      }),
    ]);
    expect(t.uow.since(mark)[0].data).toMatchObject({ expiresAt: iso(120), waitedMs: 120_000 });
    expect(await t.read(t.short.id)).toMatchObject({
      status: 'expired',
      decision: { outcome: 'expired', by: { id: 'system', via: 'system' }, at: iso(120) },
    });
    expect((await t.read(t.long.id)).status).toBe('pending');
    expect(t.waiters.wakes).toEqual([`${TENANT}/${t.short.id}`]);
  });

  it('the sweep covers every tenant', async () => {
    const t = await twoPending();
    const foreign = await t.conversation(null, foreignAgent);
    const foreignCall = await t.proposeOne(foreign, call('deploy_app'), foreignAgent);
    t.clock.advance(300_000);
    expect(await t.h.expire.execute(new ExpireToolCallsCommand())).toBe(3);
    expect((await t.read(foreignCall.id, { id: 'root', tenant: 't2', roles: ['admin'] })).status).toBe('expired');
  });

  it('a targeted expiry touches only its conversation', async () => {
    const t = await twoPending();
    t.clock.advance(300_000);
    const mark = t.uow.mark();
    expect(await t.h.expire.execute(new ExpireToolCallsCommand({ tenantId: TENANT, conversationId: t.convB }))).toBe(1);
    expect(t.uow.since(mark).map((e) => e.toolCallId)).toEqual([t.long.id]);
    expect((await t.read(t.short.id, root)).status).toBe('expired'); // shown expired on read (check on read), not by the targeted sweep
  });

  it('nothing due: nothing expires, nothing is written', async () => {
    const t = await twoPending();
    const { commits } = t.uow;
    const mark = t.uow.mark();
    expect(await t.h.expire.execute(new ExpireToolCallsCommand())).toBe(0);
    expect(await t.h.expire.execute(new ExpireToolCallsCommand({ tenantId: TENANT, conversationId: t.conv }))).toBe(0);
    expect(t.uow.types(mark)).toEqual([]);
    expect(t.conversations.stored(TENANT, t.conv)!.toolCalls[0].status).toBe('pending');
    expect(t.uow.commits - commits).toBe(1); // the targeted run opened a unit of work that wrote nothing
  });
});

// ---------------------------------------------------------------- tools

describe('RegisterToolHandler', () => {
  it('an agent registers a tool, recorded as ToolRegistered; the same definition again changes nothing', async () => {
    const t = setup();
    const first = await t.h.registerTool.execute(
      new RegisterToolCommand(agent, 'list_sources', { description: 'Lists', ...READ_ONLY }),
    );
    expect(first).toEqual({
      created: true,
      tool: {
        name: 'list_sources',
        description: 'Lists',
        ...READ_ONLY,
        registeredBy: { id: 'agent-1', kind: 'agent' },
        createdAt: T0.toISOString(),
        updatedAt: T0.toISOString(),
      },
    });
    expect(t.uow.types()).toEqual(['ToolRegistered']);
    t.clock.advance(1_000);
    const again = await t.h.registerTool.execute(
      new RegisterToolCommand(agent, 'list_sources', { description: 'Lists', ...READ_ONLY }),
    );
    expect(again).toEqual({ created: false, tool: first.tool });
    expect(t.uow.types()).toEqual(['ToolRegistered']);
  });

  it('a tool an admin registered cannot be changed by an agent: forbidden, and the admin’s flags stay', async () => {
    const t = setup();
    await t.h.registerTool.execute(new RegisterToolCommand(root, 'drop_db', DESTRUCTIVE));
    const mark = t.uow.mark();
    await expect(t.h.registerTool.execute(new RegisterToolCommand(agent, 'drop_db', READ_ONLY))).rejects.toMatchObject({
      code: 'forbidden',
      kind: 'forbidden',
    });
    expect(t.uow.types(mark)).toEqual([]);
    expect(await t.h.getTool.execute(new GetToolQuery(TENANT, 'drop_db'))).toMatchObject({
      destructive: true,
      isReadOnly: false,
      registeredBy: { id: 'root', kind: 'admin' },
    });
  });

  it('an admin may take over and change an agent-registered tool', async () => {
    const t = setup();
    await t.h.registerTool.execute(new RegisterToolCommand(agent, 'drop_db', READ_ONLY));
    t.clock.advance(1_000);
    const { tool, created } = await t.h.registerTool.execute(new RegisterToolCommand(root, 'drop_db', DESTRUCTIVE));
    expect(created).toBe(false);
    expect(tool).toMatchObject({
      destructive: true,
      registeredBy: { id: 'root', kind: 'admin' },
      createdAt: T0.toISOString(),
      updatedAt: iso(1),
    });
    expect(t.uow.types()).toEqual(['ToolRegistered', 'ToolRegistered']);
  });

  it('an agent token that also claims the admin role is still an agent: it cannot change an admin-registered tool', async () => {
    const t = setup();
    await t.h.registerTool.execute(new RegisterToolCommand(root, 'drop_db', DESTRUCTIVE));
    const sneaky: Principal = { id: 'agent-9', tenant: TENANT, roles: ['agent', 'admin'] };
    await expect(t.h.registerTool.execute(new RegisterToolCommand(sneaky, 'drop_db', READ_ONLY))).rejects.toMatchObject(
      { code: 'forbidden' },
    );
  });
});

// ---------------------------------------------------------------- policy

describe('repeating a decision', () => {
  it('the same approve with the same arguments again answers unchanged and records nothing', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('deploy_app', { v: 1 }));
    await t.decide(alice, c.id, 'approve', { arguments: { v: 2, env: 'prod' } });
    const mark = t.uow.mark();
    expect(await t.decide(alice, c.id, 'approve', { arguments: { env: 'prod', v: 2 } })).toMatchObject({
      status: 'approved',
      decision: { editedArguments: { v: 2, env: 'prod' } },
    });
    expect(t.uow.types(mark)).toEqual([]);
  });

  it.each<[string, { arguments?: Record<string, unknown> }]>([
    ['different arguments', { arguments: { v: 3 } }],
    ['no arguments where arguments were given', {}],
  ])(
    'an approve by the same person with %s is refused with already_decided, and the first arguments stay',
    async (_what, more) => {
      const t = await withPolicy();
      const c = await t.proposeOne(t.conv, call('deploy_app', { v: 1 }));
      await t.decide(alice, c.id, 'approve', { arguments: { v: 2 } });
      const mark = t.uow.mark();
      await expect(t.decide(alice, c.id, 'approve', more)).rejects.toMatchObject({
        code: 'already_decided',
        details: { decision: expect.objectContaining({ editedArguments: { v: 2 } }) },
      });
      expect(t.uow.types(mark)).toEqual([]);
      expect((await t.claim(c.id)).arguments).toEqual({ v: 2 });
    },
  );

  it('an always_allow repeated in another scope is refused with already_decided; in the same scope it is unchanged', async () => {
    const t = await withPolicy();
    const c = await t.proposeOne(t.conv, call('deploy_app'));
    await t.decide(rootDecider, c.id, 'always_allow', { scope: 'agent' });
    await expect(t.decide(rootDecider, c.id, 'always_allow', { scope: 'tenant' })).rejects.toMatchObject({
      code: 'already_decided',
    });
    await expect(t.decide(rootDecider, c.id, 'always_allow')).rejects.toMatchObject({ code: 'already_decided' });
    expect(await t.decide(rootDecider, c.id, 'always_allow', { scope: 'agent' })).toMatchObject({ status: 'approved' });
    expect(t.grants.all(TENANT)).toHaveLength(1);
  });
});

describe('PutPolicyHandler', () => {
  it('each accepted document makes a new version, recorded as PolicyUpdated', async () => {
    const t = setup();
    const first = await t.putPolicy();
    expect(first).toEqual({
      changed: true,
      policy: {
        version: 1,
        defaults: {
          unknownTools: 'confirm',
          timeoutSeconds: 300,
          approvers: ['approver', 'admin'],
          trustAgentFlags: true,
          grants: 'tenant',
          selfApproval: true,
        },
        rules: POLICY.rules,
        updatedAt: T0.toISOString(),
        updatedBy: 'root',
      },
    });
    t.clock.advance(1_000);
    const second = await t.putPolicy();
    expect(second.policy).toMatchObject({ version: 2, updatedAt: iso(1) });
    expect(t.uow.types()).toEqual(['PolicyUpdated', 'PolicyUpdated']);
    expect(t.uow.events[1].data).toMatchObject({ version: 2, previousVersion: 1, source: 'api' });
    expect(await t.h.getPolicy.execute(new GetPolicyQuery(TENANT))).toMatchObject({ version: 2 });
  });

  it('onlyIfChanged keeps the version for an identical document and records nothing, but versions a different one', async () => {
    const t = setup();
    await t.putPolicy();
    const mark = t.uow.mark();
    // the same document written differently (defaults left to their built-in values, keys reordered)
    const same = {
      rules: POLICY.rules.map((r) => Object.fromEntries(Object.entries(r).reverse())),
      defaults: { approvers: ['approver', 'admin'] },
    };
    const unchanged = await t.putPolicy(same, { onlyIfChanged: true, source: 'file' });
    expect(unchanged).toMatchObject({ changed: false, policy: { version: 1 } });
    expect(t.uow.types(mark)).toEqual([]);
    expect(t.policies.versions(TENANT)).toBe(1);

    const changed = await t.putPolicy(
      { ...POLICY, defaults: { ...POLICY.defaults, timeoutSeconds: 60 } },
      { onlyIfChanged: true, source: 'file' },
    );
    expect(changed).toMatchObject({ changed: true, policy: { version: 2, defaults: { timeoutSeconds: 60 } } });
    expect(t.uow.since(mark)).toEqual([
      expect.objectContaining({ type: 'PolicyUpdated', data: expect.objectContaining({ version: 2, source: 'file' }) }),
    ]);
  });

  it('an invalid document is refused with validation_failed naming the path, and the old version stays', async () => {
    const t = setup();
    await t.putPolicy();
    const mark = t.uow.mark();
    const bad = {
      defaults: { timeoutSeconds: 0 },
      rules: [
        { match: 'get_*', level: 'automatic' },
        { match: 'x', level: 'sometimes', colour: 'red' },
      ],
    };
    await expect(t.putPolicy(bad)).rejects.toMatchObject({
      code: 'validation_failed',
      kind: 'invalid',
      details: {
        errors: expect.arrayContaining([
          expect.objectContaining({ path: 'defaults.timeoutSeconds' }),
          expect.objectContaining({ path: 'rules[1].level' }),
          expect.objectContaining({ path: 'rules[1].colour', message: 'unknown field' }),
        ]),
      },
    });
    expect(t.uow.types(mark)).toEqual([]);
    expect(await t.h.getPolicy.execute(new GetPolicyQuery(TENANT))).toMatchObject({ version: 1, rules: POLICY.rules });
  });

  it('a policy naming auditors, agents or an unknown role among the approvers is refused, naming the path', async () => {
    const t = setup();
    await expect(
      t.putPolicy({ rules: [{ match: 'x', level: 'confirm', approvers: ['admin', 'auditor'] }] }),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      details: {
        errors: [
          expect.objectContaining({
            path: 'rules[0].approvers[1]',
            message: expect.stringMatching(/auditors change nothing/),
          }),
        ],
      },
    });
    await expect(t.putPolicy({ defaults: { approvers: ['aprover'] } })).rejects.toMatchObject({
      details: { errors: [expect.objectContaining({ path: 'defaults.approvers[0]' })] },
    });
    expect(t.policies.versions(TENANT)).toBe(0);
  });

  it('a new policy version decides the next proposals and is recorded on them', async () => {
    const t = await withPolicy();
    expect((await t.proposeOne(t.conv, call('deploy_app'))).policy.policyVersion).toBe(1);
    await t.putPolicy({ rules: [{ match: 'deploy_*', level: 'automatic' }] });
    const conv2 = await t.conversation();
    expect(await t.proposeOne(conv2, call('deploy_app'))).toMatchObject({
      status: 'approved',
      policy: { level: 'automatic', rule: 0, policyVersion: 2 },
    });
  });
});

// ---------------------------------------------------------------- the fakes keep the real rules

describe('in-memory ports', () => {
  it('the conversation repository refuses a save from a stale copy, as the real one does', async () => {
    const uow = new InMemoryUnitOfWork();
    const repo = new InMemoryConversationRepository(uow);
    await uow.run(() => repo.save(Conversation.start({ id: 'c1', tenantId: TENANT, agentId: 'agent-1', at: T0 })));
    const a = (await repo.findById(TENANT, 'c1'))!;
    const b = (await repo.findById(TENANT, 'c1'))!;
    expect(a).not.toBe(b);
    await uow.run(() => repo.save(a));
    await expect(uow.run(() => repo.save(b))).rejects.toBeInstanceOf(StaleAggregateError);
    expect(repo.stored(TENANT, 'c1')!.version).toBe(2);
    expect(uow.types()).toEqual(['ConversationStarted']);
  });

  it('saving outside a unit of work is refused, as the real repositories do', async () => {
    const { conversations } = inMemoryPorts();
    await expect(
      conversations.save(Conversation.start({ id: 'c1', tenantId: TENANT, agentId: 'agent-1', at: T0 })),
    ).rejects.toThrow('inside a unit of work');
  });
});
