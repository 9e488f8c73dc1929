/**
 * A halt fences the chain (migration 1764900000003): once a halt is committed, no call it covers is proposed or
 * claimed, even by a command that read its conversation before the halt. The append function refuses such an
 * append with 40001 (the command runs again, sees the halt and is refused); results and decisions pass.
 */
import { randomUUID } from 'node:crypto';
import type { QueryRunner } from 'typeorm';
import { eventsOf, expectIntactChain } from '../support/audit';
import { client } from '../support/http';
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

/** Runs `body` in a transaction that is always rolled back: the chain is left as it was. */
async function rolledBack<T>(body: (qr: QueryRunner) => Promise<T>): Promise<T> {
  const qr = server.dataSource.createQueryRunner();
  await qr.connect();
  try {
    await qr.startTransaction();
    return await body(qr);
  } finally {
    await qr.rollbackTransaction().catch(() => undefined);
    await qr.release();
  }
}

/** One event in the shape `tollgate_append_events` takes. */
const record = (type: string, conversationId: string, agentId: string) => ({
  head: `{"type":"${type}"`,
  mid: `,"seq":`,
  tail: `}`,
  id: randomUUID(),
  type,
  at: new Date().toISOString(),
  recordedAt: new Date().toISOString(),
  instanceId: 'test',
  conversationId,
  toolCallId: `tc_${randomUUID().slice(0, 8)}`,
  toolName: 'get_source',
  actor: { kind: 'agent', id: agentId, via: 'api', roles: ['agent'] },
  data: {},
});

/** Under `halt` (a row of `halts`), appends one event of `type`: the error code it fails with, or 'ok'. */
async function appendUnder(
  halt: { tenant: string; scope: 'tenant' | 'agent' | 'conversation'; id: string },
  tenant: string,
  event: ReturnType<typeof record>,
): Promise<string> {
  return rolledBack(async (qr) => {
    await qr.query(
      `INSERT INTO halts (tenant_id, scope, scope_id, reason, created_by, created_at) VALUES ($1, $2, $3, 'drill', '{}', now())`,
      [halt.tenant, halt.scope, halt.id],
    );
    try {
      await qr.query(`SELECT * FROM tollgate_append_events($1, $2::jsonb)`, [tenant, JSON.stringify([event])]);
      return 'ok';
    } catch (e) {
      return (e as { driverError?: { code?: string }; code?: string }).driverError?.code ?? String(e);
    }
  });
}

describe('the append function under a halt', () => {
  const T = 'fence-sql';

  it.each([
    ['conversation', 'c1', 'ToolCallProposed', 'c1', 'bot', '40001'],
    ['conversation', 'c1', 'ToolCallExecuted', 'c1', 'bot', '40001'],
    ['conversation', 'c1', 'ToolCallProposed', 'c2', 'bot', 'ok'],
    ['conversation', 'c1', 'ToolCallCompleted', 'c1', 'bot', 'ok'],
    ['conversation', 'c1', 'ToolCallApproved', 'c1', 'bot', 'ok'],
    ['agent', 'bot', 'ToolCallProposed', 'c3', 'bot', '40001'],
    ['agent', 'bot', 'ToolCallExecuted', 'c3', 'bot', '40001'],
    ['agent', 'bot', 'ToolCallProposed', 'c3', 'other-bot', 'ok'],
    ['tenant', '', 'ToolCallProposed', 'c4', 'other-bot', '40001'],
    ['tenant', '', 'ToolCallCompleted', 'c4', 'other-bot', 'ok'],
  ] as const)('a %s halt (%s): %s in %s by %s → %s', async (scope, id, type, conversation, agent, expected) => {
    expect(await appendUnder({ tenant: T, scope, id }, T, record(type, conversation, agent))).toBe(expected);
  });

  it("another tenant's halt fences nothing here", async () => {
    expect(
      await appendUnder(
        { tenant: 'fence-sql-other', scope: 'tenant', id: '' },
        T,
        record('ToolCallProposed', 'c1', 'bot'),
      ),
    ).toBe('ok');
  });
});

describe('proposals and claims racing a halt', () => {
  const T = 'fence-race';

  it('no call the halt covers is proposed or claimed after it on the chain; each proposal is answered or refused as halted', async () => {
    const agent = await server.token('racer', ['agent'], { tenant: T });
    const admin = await server.token('root', ['admin'], { tenant: T });
    const policy = await api.put('/v1/policy', admin, {
      defaults: { unknownTools: 'confirm', timeoutSeconds: 600 },
      rules: [{ match: 'get_*', level: 'automatic' }],
    });
    expect(policy.status).toBe(200);
    const conversations = Array.from({ length: 6 }, (_, i) => `fence-${i}`);
    for (const id of conversations) expect((await api.post('/v1/conversations', agent, { id })).status).toBe(201);

    // Each conversation proposes (and claims) one call after another; the halt lands while they run.
    const answers: Array<{ status: number; code?: string; claimed: string[] }> = [];
    const loops = conversations.map(async (id, k) => {
      for (let n = 0; n < 12; n++) {
        const r = await api.post(`/v1/conversations/${id}/tool-calls`, agent, {
          toolCalls: [{ id: `call-${k}-${n}`, toolName: 'get_source', arguments: { n } }],
          claim: true,
        });
        answers.push({
          status: r.status,
          code: r.body?.code,
          claimed: (r.body?.claims ?? []).map((c: { toolCallId: string }) => c.toolCallId),
        });
      }
    });
    const halt = (async () => {
      while (answers.length < 10) await new Promise((r) => setImmediate(r));
      const r = await api.post('/v1/halt', admin, { scope: 'tenant', reason: 'drill' });
      expect(r.status).toBe(200);
    })();
    await Promise.all([...loops, halt]);

    expect(answers.filter((a) => a.status !== 201 && !(a.status === 503 && a.code === 'halted'))).toEqual([]);
    expect(answers.some((a) => a.status === 503)).toBe(true);

    const events = await eventsOf(server.dataSource, T);
    const haltedAt = events.find((e) => e.type === 'Halted')!.seq;
    const after = events.filter(
      (e) => Number(e.seq) > Number(haltedAt) && (e.type === 'ToolCallProposed' || e.type === 'ToolCallExecuted'),
    );
    expect(after).toEqual([]);
    // Every claim answered was made before the halt.
    const executed = new Map(events.filter((e) => e.type === 'ToolCallExecuted').map((e) => [e.tool_call_id, e]));
    for (const id of answers.flatMap((a) => a.claimed))
      expect(Number(executed.get(id)?.seq)).toBeLessThan(Number(haltedAt));
    expectIntactChain(events);
  });
});
