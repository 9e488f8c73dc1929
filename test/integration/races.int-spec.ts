import { eventsOf as eventsOfTenant, expectIntactChain } from '../support/audit';
/**
 * Races through the real HTTP server on a real database: many requests at once on one call,
 * one conversation or one tenant. Outcomes are checked, never timings (on PGlite the pool has
 * one connection, so the same requests queue; the answers must be the same).
 */
import { client, Reply } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  server = await startTestServer();
  api = client(server.url);
});

afterAll(async () => {
  await server?.stop();
});

// ---------------------------------------------------------------- helpers

const sql = <T = any>(text: string, params: unknown[] = []): Promise<T[]> => server.dataSource.query(text, params);

const eventsOf = (tenant: string) => eventsOfTenant(server.dataSource, tenant);

const statuses = (replies: Reply[]) => replies.map((r) => r.status).sort((a, b) => a - b);
const count = <T>(xs: T[], p: (x: T) => boolean) => xs.filter(p).length;

/** Tokens of one tenant: an agent and people. */
async function actors(tenant: string) {
  return {
    agent: await server.token(`agent-${tenant}`, ['agent'], { tenant }),
    approver: (sub: string) => server.token(sub, ['approver'], { tenant, name: sub.toUpperCase() }),
  };
}

async function start(agentToken: string, id: string): Promise<void> {
  const r = await api.post('/v1/conversations', agentToken, {
    id,
    title: `race ${id}`,
    user: { id: 'u-requester', roles: ['member'] },
  });
  expect([r.status, r.body?.code]).toEqual([201, undefined]);
}

/** Proposes calls of tools nobody registered: with the default policy (unknownTools: confirm) they wait for a person. */
async function proposePending(agentToken: string, conversationId: string, toolName = 'wire_money'): Promise<string> {
  const r = await api.post(`/v1/conversations/${conversationId}/tool-calls`, agentToken, {
    toolCalls: [{ id: `ext-${conversationId}`, toolName, arguments: { amount: 100, to: conversationId } }],
  });
  expect([r.status, r.body?.toolCalls?.[0]?.status]).toEqual([201, 'pending']);
  return r.body.toolCalls[0].id;
}

const decide = (token: string, callId: string, body: Record<string, unknown>) =>
  api.post(`/v1/tool-calls/${callId}/decision`, token, body);
const claim = (token: string, callId: string) => api.post(`/v1/tool-calls/${callId}/execution`, token);

// ---------------------------------------------------------------- one call, many deciders

describe('concurrent decisions on one pending call', () => {
  const TENANT = 'race-decide';

  it('by twenty approvers give one 200 and nineteen 409 already_decided naming the same standing decision', async () => {
    const { agent, approver } = await actors(TENANT);
    await start(agent, 'conv-decide');
    const callId = await proposePending(agent, 'conv-decide');
    const tokens = await Promise.all(Array.from({ length: 20 }, (_, i) => approver(`approver-${i}`)));

    const replies = await Promise.all(
      tokens.map((t, i) =>
        decide(
          t,
          callId,
          i % 2 === 0
            ? { decision: 'approve', reason: `ok from ${i}` }
            : { decision: 'reject', reason: `no from ${i}` },
        ),
      ),
    );

    expect(statuses(replies)).toEqual([200, ...Array(19).fill(409)]);
    const winner = replies.find((r) => r.status === 200)!;
    const losers = replies.filter((r) => r.status === 409);
    expect(losers.map((r) => r.body.code)).toEqual(Array(19).fill('already_decided'));
    expect(losers.map((r) => r.headers.get('content-type'))).toEqual(
      Array(19).fill(expect.stringContaining('application/problem+json')),
    );
    expect(winner.body.decision).toEqual(
      expect.objectContaining({ outcome: expect.stringMatching(/^(approved|rejected)$/), at: expect.any(String) }),
    );
    expect(losers.map((r) => r.body.decision)).toEqual(Array(19).fill(winner.body.decision));
    expect(winner.body.status).toBe(winner.body.decision.outcome);

    const stored = await api.get(`/v1/tool-calls/${callId}`, tokens[0]);
    expect(stored.status).toBe(200);
    expect(stored.body.decision).toEqual(winner.body.decision);

    const decisions = await sql(
      `SELECT type, data FROM events WHERE tenant_id = $1 AND tool_call_id = $2 AND type IN ('ToolCallApproved', 'ToolCallRejected')`,
      [TENANT, callId],
    );
    expect(decisions).toHaveLength(1);
    expect(decisions[0].type).toBe(
      winner.body.decision.outcome === 'approved' ? 'ToolCallApproved' : 'ToolCallRejected',
    );
    expect(decisions[0].data.approvedBy ?? decisions[0].data.rejectedBy).toBe(winner.body.decision.by.id);
  });

  it('repeated by the same person all answer 200 with one decision recorded', async () => {
    const { agent, approver } = await actors(TENANT);
    await start(agent, 'conv-same-person');
    const callId = await proposePending(agent, 'conv-same-person');
    const alice = await approver('alice');

    const replies = await Promise.all(Array.from({ length: 10 }, () => decide(alice, callId, { decision: 'approve' })));

    expect(statuses(replies)).toEqual(Array(10).fill(200));
    expect(replies.map((r) => r.body.decision)).toEqual(Array(10).fill(replies[0].body.decision));
    expect(replies[0].body.decision).toMatchObject({ outcome: 'approved', by: { id: 'alice' } });
    const decisions = await sql(
      `SELECT 1 FROM events WHERE tenant_id = $1 AND tool_call_id = $2 AND type IN ('ToolCallApproved', 'ToolCallRejected')`,
      [TENANT, callId],
    );
    expect(decisions).toHaveLength(1);
  });
});

// ---------------------------------------------------------------- one approved call, many claims

describe('concurrent execution claims of one approved call', () => {
  const TENANT = 'race-claim';

  it('give one 200 and nine 409 already_executed, with one ToolCallExecuted event', async () => {
    const { agent, approver } = await actors(TENANT);
    await start(agent, 'conv-claim');
    const callId = await proposePending(agent, 'conv-claim');
    expect(
      (
        await decide(await approver('alice'), callId, {
          decision: 'approve',
          arguments: { amount: 50, to: 'conv-claim' },
        })
      ).status,
    ).toBe(200);

    const replies = await Promise.all(Array.from({ length: 10 }, () => claim(agent, callId)));

    expect(statuses(replies)).toEqual([200, ...Array(9).fill(409)]);
    expect(replies.filter((r) => r.status === 409).map((r) => r.body.code)).toEqual(Array(9).fill('already_executed'));
    const winner = replies.find((r) => r.status === 200)!;
    expect(winner.body.toolCall.status).toBe('executed');
    expect(winner.body.arguments).toEqual({ amount: 50, to: 'conv-claim' });
    expect(typeof winner.body.receipt).toBe('string');

    const executed = await sql(
      `SELECT 1 FROM events WHERE tenant_id = $1 AND tool_call_id = $2 AND type = 'ToolCallExecuted'`,
      [TENANT, callId],
    );
    expect(executed).toHaveLength(1);
  });

  it('followed by concurrent results give one 200 and the rest 409 already_completed', async () => {
    const { agent, approver } = await actors(TENANT);
    await start(agent, 'conv-result');
    const callId = await proposePending(agent, 'conv-result');
    expect((await decide(await approver('alice'), callId, { decision: 'approve' })).status).toBe(200);
    expect((await claim(agent, callId)).status).toBe(200);

    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        api.post(`/v1/tool-calls/${callId}/result`, agent, { outcome: i % 2 ? 'failed' : 'succeeded', output: { i } }),
      ),
    );

    expect(statuses(replies)).toEqual([200, ...Array(7).fill(409)]);
    expect(replies.filter((r) => r.status === 409).map((r) => r.body.code)).toEqual(Array(7).fill('already_completed'));
    const completed = await sql(
      `SELECT 1 FROM events WHERE tenant_id = $1 AND tool_call_id = $2 AND type = 'ToolCallCompleted'`,
      [TENANT, callId],
    );
    expect(completed).toHaveLength(1);
  });
});

// ---------------------------------------------------------------- one tenant's chain under load

describe("a tenant's audit trail under concurrent writes", () => {
  it('stays a gap-free seq 1..N with an unbroken hash chain when ten conversations propose while decisions land', async () => {
    const TENANT = 'race-chain';
    const { agent, approver } = await actors(TENANT);
    const people = await Promise.all(Array.from({ length: 10 }, (_, i) => approver(`person-${i}`)));
    const waiting = Array.from({ length: 10 }, (_, i) => `conv-wait-${i}`);
    const fresh = Array.from({ length: 10 }, (_, i) => `conv-fresh-${i}`);

    await Promise.all([...waiting, ...fresh].map((id) => start(agent, id)));
    const pending = await Promise.all(waiting.map((id) => proposePending(agent, id)));

    // At once: ten decisions on the waiting conversations and ten proposals in the fresh ones.
    const [decisions, proposals] = await Promise.all([
      Promise.all(
        pending.map((callId, i) => decide(people[i], callId, { decision: i % 3 === 0 ? 'reject' : 'approve' })),
      ),
      Promise.all(
        fresh.map((id) =>
          api.post(`/v1/conversations/${id}/tool-calls`, agent, {
            toolCalls: [
              {
                id: 'read',
                toolName: 'read_file',
                arguments: { path: `/data/${id}` },
                annotations: { isReadOnly: true },
              },
              { id: 'send', toolName: 'send_email', arguments: { to: `${id}@example.com` } },
            ],
          }),
        ),
      ),
    ]);
    expect(statuses(decisions)).toEqual(Array(10).fill(200));
    expect(statuses(proposals)).toEqual(Array(10).fill(201));
    expect(proposals.map((r) => r.body.toolCalls.map((c: { status: string }) => c.status))).toEqual(
      Array(10).fill(['approved', 'pending']),
    );

    // And once more: claims of the auto-approved calls while people decide the pending ones.
    const autoIds = proposals.map((r) => r.body.toolCalls[0].id as string);
    const heldIds = proposals.map((r) => r.body.toolCalls[1].id as string);
    const second = await Promise.all([
      ...autoIds.map((id) => claim(agent, id)),
      ...heldIds.map((id, i) => decide(people[i], id, { decision: 'approve' })),
    ]);
    expect(statuses(second)).toEqual(Array(20).fill(200));

    const events = await eventsOf(TENANT);
    // 20 starts; 10 × (proposed + approval requested); 10 decisions; 10 × (2 proposed + auto-approved + approval requested); 10 claims; 10 decisions.
    expect(events).toHaveLength(20 + 20 + 10 + 40 + 10 + 10);
    expectIntactChain(events);
    const perType = (t: string) => count(events, (e) => e.type === t);
    expect(perType('ConversationStarted')).toBe(20);
    expect(perType('ToolCallProposed')).toBe(30);
    expect(perType('ToolCallExecuted')).toBe(10);
    expect(perType('ToolCallApproved') + perType('ToolCallRejected')).toBe(20);
  });

  it('of two tenants writing at once gives each its own chain starting at seq 1', async () => {
    const tenants = ['race-tenant-x', 'race-tenant-y'];
    const journeys = await Promise.all(
      tenants.flatMap((tenant) =>
        Array.from({ length: 5 }, async (_, i) => {
          const { agent, approver } = await actors(tenant);
          const id = `conv-${i}`; // the same conversation ids in both tenants: tenants are walls
          await start(agent, id);
          const callId = await proposePending(agent, id);
          const r = await decide(await approver(`p-${i}`), callId, { decision: 'approve' });
          expect(r.status).toBe(200);
          return { tenant, id };
        }),
      ),
    );
    expect(journeys).toHaveLength(10);

    for (const tenant of tenants) {
      const events = await eventsOf(tenant);
      expect(events).toHaveLength(5 * 4);
      expectIntactChain(events);
      expect(new Set(events.map((e) => e.tenant_id))).toEqual(new Set([tenant]));
    }
    const [x, y] = await Promise.all(tenants.map(eventsOf));
    const xHashes = new Set(x.map((e) => e.hash));
    expect(y.some((e) => xHashes.has(e.prev_hash))).toBe(false);
  });
});

// ---------------------------------------------------------------- idempotent creation under races

describe('concurrent identical requests', () => {
  const TENANT = 'race-idem';

  it('starting one conversation id by one agent answer one 201 and the rest 200, with one ConversationStarted', async () => {
    const { agent } = await actors(TENANT);
    const body = { id: 'conv-twin', title: 'twins', metadata: { k: 1 } };

    const replies = await Promise.all(Array.from({ length: 10 }, () => api.post('/v1/conversations', agent, body)));

    expect(statuses(replies)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(replies.map((r) => `${r.body.id}|${r.body.agentId}|${r.body.createdAt}`)).size).toBe(1);
    expect(await sql(`SELECT 1 FROM conversations WHERE tenant_id = $1 AND id = 'conv-twin'`, [TENANT])).toHaveLength(
      1,
    );
    const started = await sql(
      `SELECT 1 FROM events WHERE tenant_id = $1 AND conversation_id = 'conv-twin' AND type = 'ConversationStarted'`,
      [TENANT],
    );
    expect(started).toHaveLength(1);
  });

  it('starting one conversation id by two agents let one agent own it and refuse the other with 409 idempotency_mismatch', async () => {
    const one = await server.token('agent-one', ['agent'], { tenant: TENANT });
    const two = await server.token('agent-two', ['agent'], { tenant: TENANT });
    const tokens = Array.from({ length: 10 }, (_, i) => (i % 2 ? two : one));

    const replies = await Promise.all(tokens.map((t) => api.post('/v1/conversations', t, { id: 'conv-contested' })));

    const owner = replies.find((r) => r.status === 201)!.body.agentId;
    expect(['agent-one', 'agent-two']).toContain(owner);
    const ownerToken = owner === 'agent-one' ? one : two;
    const ownerReplies = replies.filter((_, i) => tokens[i] === ownerToken);
    const otherReplies = replies.filter((_, i) => tokens[i] !== ownerToken);
    expect(statuses(ownerReplies)).toEqual([200, 200, 200, 200, 201]);
    expect(otherReplies.map((r) => [r.status, r.body.code])).toEqual(Array(5).fill([409, 'idempotency_mismatch']));
    const started = await sql(
      `SELECT actor FROM events WHERE tenant_id = $1 AND conversation_id = 'conv-contested' AND type = 'ConversationStarted'`,
      [TENANT],
    );
    expect(started).toEqual([{ actor: expect.objectContaining({ id: owner }) }]);
  });

  it('proposing one tool-call id create one call, answered 201 once and 200 after', async () => {
    const { agent } = await actors(TENANT);
    await start(agent, 'conv-dup-call');
    const body = { toolCalls: [{ id: 'call-dup', toolName: 'delete_source', arguments: { id: 'src_1' } }] };

    const replies = await Promise.all(
      Array.from({ length: 10 }, () => api.post('/v1/conversations/conv-dup-call/tool-calls', agent, body)),
    );

    expect(statuses(replies)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    const callIds = new Set(replies.map((r) => r.body.toolCalls[0].id));
    expect(callIds.size).toBe(1);
    expect(replies.every((r) => r.body.toolCalls[0].externalId === 'call-dup')).toBe(true);
    const rows = await sql(`SELECT id FROM tool_calls WHERE tenant_id = $1 AND conversation_id = 'conv-dup-call'`, [
      TENANT,
    ]);
    expect(rows.map((r) => r.id)).toEqual([...callIds]);
    const proposed = await sql(
      `SELECT 1 FROM events WHERE tenant_id = $1 AND conversation_id = 'conv-dup-call' AND type = 'ToolCallProposed'`,
      [TENANT],
    );
    expect(proposed).toHaveLength(1);
  });

  it('proposing one tool-call id with two contents create one call and refuse the other content with 409 idempotency_mismatch', async () => {
    const { agent } = await actors(TENANT);
    await start(agent, 'conv-dup-clash');
    const bodies = Array.from({ length: 10 }, (_, i) => ({
      toolCalls: [{ id: 'call-clash', toolName: 'delete_source', arguments: { id: i % 2 ? 'src_odd' : 'src_even' } }],
    }));

    const replies = await Promise.all(
      bodies.map((b) => api.post('/v1/conversations/conv-dup-clash/tool-calls', agent, b)),
    );

    const created = replies.find((r) => r.status === 201)!;
    const winningArgs = created.body.toolCalls[0].arguments;
    const sameContent = replies.filter((_, i) => bodies[i].toolCalls[0].arguments.id === winningArgs.id);
    const otherContent = replies.filter((_, i) => bodies[i].toolCalls[0].arguments.id !== winningArgs.id);
    expect(statuses(sameContent)).toEqual([200, 200, 200, 200, 201]);
    expect(otherContent.map((r) => [r.status, r.body.code])).toEqual(Array(5).fill([409, 'idempotency_mismatch']));
    const rows = await sql(
      `SELECT arguments FROM tool_calls WHERE tenant_id = $1 AND conversation_id = 'conv-dup-clash'`,
      [TENANT],
    );
    expect(rows).toEqual([{ arguments: winningArgs }]);
  });

  it('leave the tenant a gap-free, unbroken chain', async () => {
    expectIntactChain(await eventsOf(TENANT));
  });
});
