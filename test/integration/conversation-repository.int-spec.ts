import { EventRecord, eventsOf as eventsOfTenant, GENESIS, recomputedHash } from '../support/audit';
/**
 * The conversation repository and the unit of work against a real database (PostgreSQL when
 * DATABASE_URL is set, else embedded PGlite), with the service's migrations applied: mapper round
 * trip, stale-version conflicts, atomic state + event writes, and the hash chain the saves build.
 */
import {
  CONVERSATIONS,
  ConversationRepository,
  PENDING,
  UNCLAIMED,
  UNIT_OF_WORK,
  UnitOfWork,
} from '../../src/application/ports';
import {
  Conversation,
  ConversationUser,
  Decider,
  ProposedCall,
} from '../../src/domain/conversation/conversation.aggregate';
import type { PolicyVerdict, ProposedCallFacts } from '../../src/domain/policy/approval-policy';
import type { Actor, Principal } from '../../src/domain/shared/actor';
import { DomainError } from '../../src/domain/shared/domain-error';
import { ConversationBlockedError } from '../../src/domain/conversation/conversation.errors';
import { StaleAggregateError } from '../../src/infrastructure/persistence/unit-of-work';
import { CONVERSATION_COLUMNS, TOOL_CALL_COLUMNS } from '../../src/infrastructure/persistence/conversation-columns';
import { startTestServer, TestServer } from '../support/server';

// ---------------------------------------------------------------- fixtures

/** Times near now: the server's expiry sweeper runs on the real clock, so nothing here may be overdue. */
const T0 = new Date(Math.floor(Date.now() / 1000) * 1000);
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const HOUR = 3600;

const AGENT = 'agent-rt';
const USER: ConversationUser = { id: 'u-rita', roles: ['member', 'finance'], name: 'Rita Ø. Müller' };
const METADATA = {
  ticket: 'SUP-1234',
  nested: { list: [1, 2.5, -3, { deep: null }], empty: {}, flag: false },
  unicode: 'naïve ✓ 日本語 "quoted" \\ back',
  '': 'empty key',
};

const agent = (tenant: string): Principal => ({ id: AGENT, tenant, roles: ['agent'], name: 'Research bot' });
const person = (tenant: string, id: string, roles: string[], via: Decider['via'], name?: string): Decider => ({
  id,
  tenant,
  roles,
  via,
  ...(name ? { name } : {}),
});
const admin: Actor = { id: 'root', kind: 'person', via: 'cli', name: 'Root', roles: ['admin'] };

function verdict(level: PolicyVerdict['level'], over: Partial<PolicyVerdict> = {}): PolicyVerdict {
  return {
    level,
    rule: 2,
    policyVersion: 7,
    reason: `rule 2 says ${level}`,
    approvers: ['approver', 'requester'],
    timeoutSeconds: HOUR,
    grants: 'tenant',
    ...over,
  };
}

/** A hand-written policy: the tool's name says the level (`confirm_*`, `auto_*`, `deny_*`). */
function evaluate(call: ProposedCallFacts): PolicyVerdict {
  if (call.toolName.startsWith('confirm_')) return verdict('confirm');
  if (call.toolName.startsWith('auto_'))
    return verdict('automatic', {
      rule: null,
      reason: 'Allowed by standing grant grant_7 (scope agent)',
      grantId: 'grant_7',
    });
  if (call.toolName.startsWith('deny_'))
    return verdict('deny', { rule: 0, reason: 'Permission denied: admin role required' });
  throw new Error(`test tool ${call.toolName} names no level`);
}

function ids(prefix: string): () => string {
  let n = 0;
  return () => `${prefix}_${String(++n).padStart(3, '0')}`;
}

/** The calls an aggregate holds: it lists none, but a round trip compares them all. */
const callsOf = (c: Conversation) =>
  (c as unknown as { calls: ReadonlyArray<{ snapshot(): unknown; id: string }> }).calls;

/** Everything the aggregate holds, in one comparable value (dates stay Dates). */
function stateOf(c: Conversation) {
  return {
    id: c.id,
    tenantId: c.tenantId,
    agentId: c.agentId,
    user: c.user,
    title: c.title,
    metadata: c.metadata,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    version: c.version,
    pendingCount: c.pendingCount,
    status: c.status,
    toolCalls: callsOf(c).map((t) => ({ ...(t.snapshot() as object) })),
  };
}

// ---------------------------------------------------------------- harness

let server: TestServer;
let uow: UnitOfWork;
let repo: ConversationRepository;

beforeAll(async () => {
  server = await startTestServer();
  uow = server.app.get(UNIT_OF_WORK);
  repo = server.app.get(CONVERSATIONS);
});

afterAll(async () => {
  await server?.stop();
});

const sql = <T = any>(text: string, params: unknown[] = []): Promise<T[]> => server.dataSource.query(text, params);

const eventsOf = (tenant: string) => eventsOfTenant(server.dataSource, tenant);

async function load(tenant: string, id: string): Promise<Conversation> {
  const c = await repo.findById(tenant, id);
  if (!c) throw new Error(`conversation ${tenant}/${id} was not stored`);
  return c;
}

/** One command as the handlers do it: load under lock, one domain call, save — in one unit of work. */
function change(tenant: string, id: string, fn: (c: Conversation) => void): Promise<Conversation> {
  return uow.run(async () => {
    const c = await repo.findById(tenant, id, { lock: true });
    if (!c) throw new Error(`conversation ${tenant}/${id} was not stored`);
    fn(c);
    await repo.save(c);
    return c;
  });
}

/** A conversation with one pending call, saved; returns the call's id. */
async function conversationWithPendingCall(tenant: string, id: string): Promise<string> {
  const newId = ids(`tc_${id}`);
  let callId = '';
  await uow.run(async () => {
    const c = Conversation.start({ id, tenantId: tenant, agentId: AGENT, user: USER, at: at(0) });
    callId = c.propose([{ toolName: 'confirm_delete', arguments: { id: 'src_1' } }], evaluate, newId, at(1), null)
      .calls[0].id;
    await repo.save(c);
  });
  return callId;
}

// ---------------------------------------------------------------- round trip

describe('a conversation saved and loaded back', () => {
  const TENANT = 't-roundtrip';

  it('keeps its user, title, metadata and dates as started', async () => {
    const started = Conversation.start({
      id: 'conv-started',
      tenantId: TENANT,
      agentId: AGENT,
      agentName: 'Research bot',
      user: USER,
      title: 'Clean up old sources',
      metadata: METADATA,
      at: at(0),
    });
    await uow.run(() => repo.save(started));

    const loaded = await load(TENANT, 'conv-started');
    expect(stateOf(loaded)).toEqual(stateOf(started));
    expect(loaded.version).toBe(1);
    expect(loaded.user).toEqual({ ...USER, assurance: 'asserted' }); // the agent named them
    expect(loaded.metadata).toEqual(METADATA);
    expect(loaded.createdAt.toISOString()).toBe(at(0).toISOString());
    expect((await repo.findWithCalls(TENANT, 'conv-started'))!.toolCalls).toEqual([]);
  });

  it('keeps the absence of a user, title and metadata as absence', async () => {
    const bare = Conversation.start({ id: 'conv-bare', tenantId: TENANT, agentId: AGENT, at: at(0) });
    await uow.run(() => repo.save(bare));

    const loaded = await load(TENANT, 'conv-bare');
    expect(loaded.user).toBeNull();
    expect(loaded.title).toBeUndefined();
    expect(loaded.metadata).toBeUndefined();
    expect(stateOf(loaded)).toEqual(stateOf(bare));
  });

  it('keeps every field of its tool calls through proposal, decision, claim, result and cancellation', async () => {
    const ID = 'conv-journey';
    const newId = ids('tc_journey');
    const a: ProposedCall = {
      externalId: 'call_abc',
      toolName: 'confirm_delete_source',
      arguments: { id: 'src_1', options: { recursive: true, depth: 3, tags: ['a', 'b'] } },
      annotations: { destructive: true, requiresApproval: true },
      reason: 'user asked',
      confidence: 0.87,
      estimatedCost: 12.5,
      display: {
        title: 'Delete source',
        summary: 'Removes src_1 and its objects',
        fields: [{ label: 'Objects', value: '1,204' }],
      },
    };
    const b: ProposedCall = {
      externalId: 'call_def',
      toolName: 'auto_list_sources',
      arguments: {},
      annotations: { isReadOnly: true },
    };
    const c: ProposedCall = { toolName: 'deny_drop_database', arguments: { name: 'prod' }, confidence: 0 };

    // Started and proposed in one unit of work: an insert of the root and its calls.
    let proposed!: Conversation;
    await uow.run(async () => {
      proposed = Conversation.start({
        id: ID,
        tenantId: TENANT,
        agentId: AGENT,
        user: USER,
        title: 'Journey',
        metadata: METADATA,
        at: at(0),
      });
      proposed.propose([a, b, c], evaluate, newId, at(1), null);
      await repo.save(proposed);
    });
    const [idA, idB, idC] = callsOf(proposed).map((t) => t.id);
    expect(stateOf(await load(TENANT, ID))).toEqual(stateOf(proposed));

    const alice = person(TENANT, 'alice', ['approver'], 'web', 'Alice');
    const decided = await change(TENANT, ID, (conv) => {
      const r = conv.decide(
        idA,
        {
          decision: 'approve',
          reason: 'checked with the owner',
          arguments: { id: 'src_1', options: { recursive: false } },
        },
        alice,
        at(10),
      );
      expect(r.kind).toBe('decided');
    });
    expect(stateOf(await load(TENANT, ID))).toEqual(stateOf(decided));

    const claimed = await change(TENANT, ID, (conv) => {
      expect(conv.claim(idA, agent(TENANT), at(20), null).kind).toBe('claimed');
    });
    expect(stateOf(await load(TENANT, ID))).toEqual(stateOf(claimed));

    const output = { deleted: 1204, skipped: [], note: 'ok ✓', nested: { n: null, f: 1.25 } };
    const completed = await change(TENANT, ID, (conv) => {
      conv.complete(idA, { outcome: 'succeeded', output }, agent(TENANT), at(30));
    });
    expect(stateOf(await load(TENANT, ID))).toEqual(stateOf(completed));

    // B was approved by the policy and never claimed: a halt cancels it and keeps the approval.
    const cancelled = await change(TENANT, ID, (conv) => {
      expect(conv.cancelOpen('incident 42', admin, at(40)).map((t) => t.id)).toEqual([idB]);
    });

    const loaded = await load(TENANT, ID);
    expect(stateOf(loaded)).toEqual(stateOf(cancelled));
    expect(loaded.version).toBe(5);
    expect(loaded.updatedAt).toEqual(at(40));

    const [callA, callB, callC] = (await repo.findWithCalls(TENANT, ID))!.toolCalls;
    expect(callA).toEqual({
      id: idA,
      externalId: 'call_abc',
      conversationId: ID,
      toolName: a.toolName,
      arguments: a.arguments,
      annotations: a.annotations,
      reason: 'user asked',
      confidence: 0.87,
      estimatedCost: 12.5,
      display: a.display,
      status: 'completed',
      policy: { level: 'confirm', rule: 2, policyVersion: 7, reason: 'rule 2 says confirm' },
      approval: { approvers: ['approver', 'requester'], expiresAt: at(1 + HOUR) },
      decision: {
        outcome: 'approved',
        by: { id: 'alice', name: 'Alice', via: 'web' },
        at: at(10),
        kind: 'approve',
        reason: 'checked with the owner',
        editedArguments: { id: 'src_1', options: { recursive: false } },
      },
      execution: { at: at(20), by: { id: AGENT, name: 'Research bot', via: 'api' } },
      result: { outcome: 'succeeded', output, at: at(30) },
      createdAt: at(1),
      updatedAt: at(30),
    });
    expect(callA.decision!.at).toBeInstanceOf(Date);
    expect(callA.execution!.at).toBeInstanceOf(Date);
    expect(callA.result!.at).toBeInstanceOf(Date);
    expect(callA.approval!.expiresAt).toBeInstanceOf(Date);
    expect(loaded.findCall(idA)!.argumentsToRun).toEqual({ id: 'src_1', options: { recursive: false } });

    expect(callB).toMatchObject({
      externalId: 'call_def',
      annotations: { isReadOnly: true },
      status: 'cancelled',
      policy: {
        level: 'automatic',
        rule: null,
        policyVersion: 7,
        reason: 'Allowed by standing grant grant_7 (scope agent)',
        grantId: 'grant_7',
      },
      decision: { outcome: 'approved', by: { id: 'policy', via: 'policy' }, at: at(1) },
      cancellation: { by: { id: 'root', name: 'Root', via: 'cli' }, at: at(40), reason: 'incident 42' },
      updatedAt: at(40),
    });
    expect(callB.cancellation!.at).toBeInstanceOf(Date);
    expect(callB.approval).toBeUndefined();
    expect(callB.execution).toBeUndefined();

    expect(callC).toMatchObject({
      status: 'rejected',
      confidence: 0,
      policy: { level: 'deny', rule: 0, reason: 'Permission denied: admin role required' },
      decision: {
        outcome: 'rejected',
        by: { id: 'policy', via: 'policy' },
        at: at(1),
        reason: 'Permission denied: admin role required',
      },
    });
    expect(callC.externalId).toBeUndefined();
    expect(callC.decision!.editedArguments).toBeUndefined();
  });

  it('is found again through any of its tool calls', async () => {
    const callId = await conversationWithPendingCall(TENANT, 'conv-by-call');
    const byCall = await repo.findByToolCallId(TENANT, callId);
    expect(byCall?.id).toBe('conv-by-call');
    expect(await repo.findByToolCallId('another-tenant', callId)).toBeNull();
    expect(await repo.findById('another-tenant', 'conv-by-call')).toBeNull();
  });
});

// ---------------------------------------------------------------- working set

describe('a conversation loaded for a command (some calls only)', () => {
  const TENANT = 'tenant-working-set';

  /** 30 closed calls (approved, claimed, completed), one approved call and one pending call. */
  async function longConversation(id: string) {
    const newId = ids(`tc_${id}`);
    await uow.run(() => repo.save(Conversation.start({ id, tenantId: TENANT, agentId: AGENT, user: USER, at: at(0) })));
    const closed: string[] = [];
    for (let i = 0; i < 30; i++) {
      await change(TENANT, id, (c) => {
        const call = c.propose(
          [{ externalId: `ext_${i}`, toolName: 'auto_read', arguments: { i } }],
          evaluate,
          newId,
          at(1 + i),
          null,
        ).calls[0];
        c.claim(call.id, agent(TENANT), at(1 + i), null);
        c.complete(call.id, { outcome: 'succeeded' }, agent(TENANT), at(1 + i));
        closed.push(call.id);
      });
    }
    let approved = '';
    let pending = '';
    await change(TENANT, id, (c) => {
      approved = c.propose([{ toolName: 'auto_read', arguments: { last: true } }], evaluate, newId, at(40), null)
        .calls[0].id;
      pending = c.propose([{ toolName: 'confirm_delete', arguments: { id: 'src_9' } }], evaluate, newId, at(41), null)
        .calls[0].id;
    });
    return { closed, approved, pending };
  }

  it('holds the calls in the statuses asked for and the named ones, not the whole history; a read lists them all', async () => {
    const { closed, approved, pending } = await longConversation('conv-long');
    const c = await uow.run(() =>
      repo.findById(TENANT, 'conv-long', {
        lock: true,
        calls: { statuses: UNCLAIMED, ids: [closed[3]], externalIds: ['ext_7'] },
      }),
    );
    expect(callsOf(c!).map((t) => t.id)).toEqual(expect.arrayContaining([approved, pending, closed[3], closed[7]]));
    expect(callsOf(c!)).toHaveLength(4);
    expect(c!.pendingCount).toBe(1);
    expect(c!.status).toBe('blocked');
    expect(c!.findCall(approved)?.status).toBe('approved');
    expect(c!.findCall(pending)?.status).toBe('pending');
    expect(c!.findCall(closed[3])?.status).toBe('completed');
    expect(c!.findCall(closed[7])?.externalId).toBe('ext_7');
    expect(c!.findCall(closed[8])).toBeUndefined();
    // Pending only (what a proposal needs): the approved call an agent never claimed stays out too.
    const lean = await repo.findById(TENANT, 'conv-long', { calls: { statuses: PENDING } });
    expect(lean!.findCall(pending)?.status).toBe('pending');
    expect(lean!.findCall(approved)).toBeUndefined();
    expect(lean!.pendingCount).toBe(1);
    expect((await repo.findWithCalls(TENANT, 'conv-long'))!.toolCalls).toHaveLength(32);
  });

  it('is enough for the rules: a repeated external id replays, blocking holds, a decision saves', async () => {
    const { closed, pending } = await longConversation('conv-long-2');
    await expect(
      uow.run(async () => {
        const c = (await repo.findById(TENANT, 'conv-long-2', {
          lock: true,
          calls: { statuses: PENDING, externalIds: ['ext_5'] },
        }))!;
        const replay = c.propose(
          [{ externalId: 'ext_5', toolName: 'auto_read', arguments: { i: 5 } }],
          evaluate,
          ids('x'),
          at(50),
          null,
        );
        expect(replay.replay).toBe(true);
        expect(replay.calls[0].id).toBe(closed[5]);
        c.propose([{ toolName: 'auto_read', arguments: {} }], evaluate, ids('y'), at(50), null);
      }),
    ).rejects.toBeInstanceOf(ConversationBlockedError);
    await uow.run(async () => {
      const c = (await repo.findByToolCallId(TENANT, pending, {
        lock: true,
        calls: { statuses: PENDING, ids: [pending] },
      }))!;
      c.decide(pending, { decision: 'reject', reason: 'no' }, person(TENANT, 'ann', ['approver'], 'web'), at(51));
      await repo.save(c);
    });
    const whole = await load(TENANT, 'conv-long-2');
    expect(whole.findCall(pending)?.status).toBe('rejected');
    const listed = (await repo.findWithCalls(TENANT, 'conv-long-2'))!.toolCalls;
    expect(listed.filter((t) => t.status === 'completed')).toHaveLength(30);
    expect(whole.pendingCount).toBe(0);
  });
});

// ---------------------------------------------------------------- optimistic locking

describe('a stale save', () => {
  const TENANT = 't-stale';

  it('is refused with StaleAggregateError and the first save stands', async () => {
    const callId = await conversationWithPendingCall(TENANT, 'conv-stale');
    const first = await load(TENANT, 'conv-stale');
    const second = await load(TENANT, 'conv-stale');

    expect(
      first.decide(callId, { decision: 'approve' }, person(TENANT, 'alice', ['approver'], 'web'), at(5)).kind,
    ).toBe('decided');
    expect(
      second.decide(
        callId,
        { decision: 'reject', reason: 'too risky' },
        person(TENANT, 'bob', ['approver'], 'cli'),
        at(6),
      ).kind,
    ).toBe('decided');

    await uow.run(() => repo.save(first));
    await expect(uow.run(() => repo.save(second))).rejects.toBeInstanceOf(StaleAggregateError);

    const stored = (await load(TENANT, 'conv-stale')).findCall(callId)!.snapshot();
    expect(stored.status).toBe('approved');
    expect(stored.decision?.by.id).toBe('alice');
    const decisions = await sql(
      `SELECT type, actor FROM events WHERE tenant_id = $1 AND tool_call_id = $2 AND type IN ('ToolCallApproved', 'ToolCallRejected')`,
      [TENANT, callId],
    );
    expect(decisions).toEqual([{ type: 'ToolCallApproved', actor: expect.objectContaining({ id: 'alice' }) }]);
  });

  it('is retried from a fresh read, and the retry sees the winner', async () => {
    const callId = await conversationWithPendingCall(TENANT, 'conv-retry');
    const stale = await load(TENANT, 'conv-retry');
    await change(TENANT, 'conv-retry', (c) =>
      c.decide(callId, { decision: 'approve' }, person(TENANT, 'alice', ['approver'], 'web'), at(5)),
    );

    let attempts = 0;
    const outcome = await uow.run(async () => {
      attempts += 1;
      const c = attempts === 1 ? stale : await load(TENANT, 'conv-retry');
      const r = c.decide(callId, { decision: 'reject' }, person(TENANT, 'bob', ['approver'], 'cli'), at(6));
      await repo.save(c);
      return r;
    });

    expect(attempts).toBe(2);
    expect(outcome.kind).toBe('refused');
    expect(outcome.kind === 'refused' && outcome.error).toBeInstanceOf(DomainError);
    expect(outcome.kind === 'refused' && outcome.error.code).toBe('already_decided');
    const stored = (await load(TENANT, 'conv-retry')).findCall(callId)!.snapshot();
    expect(stored.status).toBe('approved');
    expect(stored.decision?.by.id).toBe('alice');
    const rejected = await sql(
      `SELECT 1 FROM events WHERE tenant_id = $1 AND tool_call_id = $2 AND type = 'ToolCallRejected'`,
      [TENANT, callId],
    );
    expect(rejected).toHaveLength(0);
  });
});

// ---------------------------------------------------------------- atomicity

describe('state and events', () => {
  it('are both absent when the unit of work throws after save', async () => {
    const TENANT = 't-atomic-throw';
    await expect(
      uow.run(async () => {
        const c = Conversation.start({ id: 'conv-doomed', tenantId: TENANT, agentId: AGENT, user: USER, at: at(0) });
        c.propose(
          [
            { toolName: 'confirm_delete', arguments: {} },
            { toolName: 'auto_list', arguments: {} },
          ],
          evaluate,
          ids('tc_doomed'),
          at(1),
          null,
        );
        await repo.save(c);
        throw new Error('boom after save');
      }),
    ).rejects.toThrow('boom after save');

    expect(await repo.findById(TENANT, 'conv-doomed')).toBeNull();
    expect(await sql(`SELECT 1 FROM conversations WHERE tenant_id = $1`, [TENANT])).toHaveLength(0);
    expect(await sql(`SELECT 1 FROM tool_calls WHERE tenant_id = $1`, [TENANT])).toHaveLength(0);
    expect(await eventsOf(TENANT)).toHaveLength(0);
  });

  it('are both absent when an update of an existing conversation throws after save', async () => {
    const TENANT = 't-atomic-update';
    const callId = await conversationWithPendingCall(TENANT, 'conv-kept');
    const before = await eventsOf(TENANT);

    await expect(
      uow.run(async () => {
        const c = (await repo.findById(TENANT, 'conv-kept', { lock: true }))!;
        c.decide(callId, { decision: 'approve' }, person(TENANT, 'alice', ['approver'], 'web'), at(5));
        await repo.save(c);
        throw new Error('boom after update');
      }),
    ).rejects.toThrow('boom after update');

    const stored = await load(TENANT, 'conv-kept');
    expect(stored.version).toBe(1);
    expect(stored.findCall(callId)!.status).toBe('pending');
    expect(stored.findCall(callId)!.decision).toBeUndefined();
    expect(await eventsOf(TENANT)).toEqual(before);
  });

  it('are both absent when writing the events fails, and the chain has no gap afterwards', async () => {
    const TENANT = 't-atomic-trail';
    // Make the trail itself refuse this tenant's events, inside the same transaction as the state.
    await sql(`CREATE FUNCTION test_refuse_events() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  IF NEW.tenant_id = '${TENANT}' THEN RAISE EXCEPTION 'test: the trail refuses this event'; END IF;
                  RETURN NEW;
                END $$`);
    await sql(
      `CREATE TRIGGER test_refuse_events BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION test_refuse_events()`,
    );
    try {
      await expect(
        uow.run(async () => {
          const c = Conversation.start({ id: 'conv-untraced', tenantId: TENANT, agentId: AGENT, at: at(0) });
          c.propose([{ toolName: 'confirm_delete', arguments: {} }], evaluate, ids('tc_untraced'), at(1), null);
          await repo.save(c);
        }),
      ).rejects.toThrow('the trail refuses this event');
    } finally {
      await sql(`DROP TRIGGER test_refuse_events ON events`);
      await sql(`DROP FUNCTION test_refuse_events()`);
    }

    expect(await repo.findById(TENANT, 'conv-untraced')).toBeNull();
    expect(await sql(`SELECT 1 FROM tool_calls WHERE tenant_id = $1`, [TENANT])).toHaveLength(0);
    expect(await eventsOf(TENANT)).toHaveLength(0);

    await uow.run(() =>
      repo.save(Conversation.start({ id: 'conv-traced', tenantId: TENANT, agentId: AGENT, at: at(2) })),
    );
    const events = await eventsOf(TENANT);
    expect(events.map((e) => [Number(e.seq), e.type, e.prev_hash])).toEqual([[1, 'ConversationStarted', GENESIS]]);
  });

  it('are both absent when the save fails half-way through its rows', async () => {
    const TENANT = 't-atomic-half';
    // Two calls with one server id: the root row goes in, the second call row breaks the primary key.
    const sameId = () => 'tc_clash';
    await expect(
      uow.run(async () => {
        const c = Conversation.start({ id: 'conv-half', tenantId: TENANT, agentId: AGENT, at: at(0) });
        c.propose(
          [
            { toolName: 'auto_a', arguments: {} },
            { toolName: 'auto_b', arguments: {} },
          ],
          evaluate,
          sameId,
          at(1),
          null,
        );
        await repo.save(c);
      }),
    ).rejects.toThrow();

    expect(await sql(`SELECT 1 FROM conversations WHERE tenant_id = $1`, [TENANT])).toHaveLength(0);
    expect(await sql(`SELECT 1 FROM tool_calls WHERE tenant_id = $1`, [TENANT])).toHaveLength(0);
    expect(await eventsOf(TENANT)).toHaveLength(0);
  });
});

// ---------------------------------------------------------------- the hash chain

describe('events written by saves', () => {
  const TENANT = 't-chain';

  it('have consecutive seq, linked prevHash from 64 zeros, and a hash anyone can recompute', async () => {
    const alice = person(TENANT, 'alice', ['approver'], 'slack', 'Alice');
    for (const id of ['conv-c1', 'conv-c2']) {
      const newId = ids(`tc_${id}`);
      let pendingId = '';
      await uow.run(async () => {
        const c = Conversation.start({
          id,
          tenantId: TENANT,
          agentId: AGENT,
          agentName: 'Research bot',
          user: USER,
          title: `chain ${id}`,
          metadata: METADATA,
          at: at(0),
        });
        await repo.save(c);
      });
      await change(TENANT, id, (c) => {
        pendingId = c.propose(
          [
            {
              externalId: `x-${id}`,
              toolName: 'confirm_wire',
              arguments: { amount: 1200.5, to: 'DE89 3704', memo: 'é ✓ "q"' },
              confidence: 0.42,
              estimatedCost: 3,
            },
            {
              toolName: 'auto_read',
              arguments: { path: '/tmp/a b' },
              display: { title: 'Read', fields: [{ label: 'Path', value: '/tmp/a b' }] },
            },
            { toolName: 'deny_rm', arguments: { cmd: 'rm -rf /' } },
          ],
          evaluate,
          newId,
          at(1),
          null,
        ).calls[0].id;
      });
      await change(TENANT, id, (c) =>
        c.decide(pendingId, { decision: 'approve', arguments: { amount: 1000, to: 'DE89 3704' } }, alice, at(2)),
      );
      await change(TENANT, id, (c) => c.claim(pendingId, agent(TENANT), at(3), null));
      await change(TENANT, id, (c) =>
        c.complete(pendingId, { outcome: 'failed', error: 'bank said no' }, agent(TENANT), at(4)),
      );
    }

    const events = await eventsOf(TENANT);
    // Per conversation: started, 3 × proposed, approval requested, auto-approved, rejected, approved, executed, completed.
    expect(events).toHaveLength(2 * 10);
    expect(events.map((e) => Number(e.seq))).toEqual(events.map((_, i) => i + 1));
    expect(events.map((e) => e.prev_hash)).toEqual([GENESIS, ...events.slice(0, -1).map((e) => e.hash)]);
    expect(events.map(recomputedHash)).toEqual(events.map((e) => e.hash));
    expect(events.every((e) => /^[0-9a-f]{64}$/.test(e.hash))).toBe(true);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);

    const approved = events.find((e) => e.type === 'ToolCallApproved')!;
    expect(approved.data).toMatchObject({
      approvedBy: 'alice',
      via: 'slack',
      editedArguments: { amount: 1000, to: 'DE89 3704' },
    });
    expect(typeof approved.data.latencyMs).toBe('number');
  });

  it('of every tenant written in this file form intact chains of their own', async () => {
    const tenants = await sql<{ tenant_id: string }>(`SELECT DISTINCT tenant_id FROM events ORDER BY tenant_id`);
    expect(tenants.length).toBeGreaterThan(3);
    for (const { tenant_id } of tenants) {
      const events = await eventsOf(tenant_id);
      expect(events.map((e) => Number(e.seq))).toEqual(events.map((_, i) => i + 1));
      expect(events.map((e) => e.prev_hash)).toEqual([GENESIS, ...events.slice(0, -1).map((e) => e.hash)]);
      expect(events.map(recomputedHash)).toEqual(events.map((e) => e.hash));
    }
  });
});

// ---------------------------------------------------------------- the column tables

describe('the column tables the repository derives its SQL from', () => {
  /** `column type` as the database has them, in the table's order, with types spelled as a recordset declares them. */
  async function columnsOf(table: string): Promise<string[]> {
    const rows = await sql<{ name: string; type: string }>(
      `SELECT attname AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute
        WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
      [table],
    );
    return rows.map((r) => `${r.name} ${r.type.replace('timestamp with time zone', 'timestamptz')}`);
  }
  const listed = (recordset: string) => recordset.split(', ');

  it('name every column of conversations and tool_calls, with its type, and nothing else', async () => {
    expect([...listed(CONVERSATION_COLUMNS.recordset)].sort()).toEqual([...(await columnsOf('conversations'))].sort());
    expect([...listed(TOOL_CALL_COLUMNS.recordset)].sort()).toEqual([...(await columnsOf('tool_calls'))].sort());
  });
});
