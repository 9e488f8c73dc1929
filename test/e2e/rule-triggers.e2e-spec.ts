/**
 * Velocity and budget triggers (`when.rateAbove`, `when.costAbove`) and shadow rules (`mode: shadow`), end to end
 * over REST on a real database: routine calls run until a count is crossed, then wait for a person with the count
 * in the reason; shadow rules are recorded on the call and in the audit trail and never change an outcome. With
 * two instances on one PostgreSQL, concurrent proposals count each other.
 */
import { freshDatabase, TestDatabase } from '../support/database';
import { struct, TollgateGrpc } from '../support/grpc';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
let http: ReturnType<typeof client>;
let admin: string;

beforeAll(async () => {
  server = await startTestServer();
  http = client(server.url);
  admin = await server.token('root', ['admin']);
});

afterAll(async () => {
  await server?.stop();
});

async function putPolicy(doc: unknown) {
  const r = await http.put('/v1/policy', admin, doc);
  expect(r.status).toBe(200);
}

let n = 0;
async function conversation(token: string, h = http) {
  const id = `trig-${++n}`;
  expect((await h.post('/v1/conversations', token, { id })).status).toBe(201);
  return id;
}

interface Call {
  id: string;
  status: string;
  policy: {
    level: string;
    rule: number | null;
    reason: string;
    shadow?: { rule: number; level: string; reason: string };
  };
}
async function propose(token: string, conv: string, calls: Array<Record<string, unknown>>, h = http): Promise<Call[]> {
  const r = await h.post(`/v1/conversations/${conv}/tool-calls`, token, { toolCalls: calls });
  expect(r.status).toBe(201);
  return r.body.toolCalls as Call[];
}

describe('rateAbove', () => {
  it('lets the first `count` calls in the window run and holds the next, saying how many', async () => {
    await putPolicy({
      defaults: { unknownTools: 'automatic' },
      rules: [{ match: 'delete_*', level: 'confirm', when: { rateAbove: { count: 2, per: '1h', by: 'agent' } } }],
    });
    const agent = await server.token('rate-bot', ['agent']);
    const first = await propose(agent, await conversation(agent), [{ toolName: 'delete_row', arguments: {} }]);
    // Another conversation of the same agent, another tool the glob names: the agent's count goes on.
    const second = await propose(agent, await conversation(agent), [{ toolName: 'delete_file', arguments: {} }]);
    expect([first[0].status, second[0].status]).toEqual(['approved', 'approved']);
    const third = await propose(agent, await conversation(agent), [{ toolName: 'delete_row', arguments: {} }]);
    expect(third[0].status).toBe('pending');
    expect(third[0].policy.rule).toBe(0);
    expect(third[0].policy.reason).toContain('rateAbove: 3 calls in 1h by agent, above 2');
    // Other tools are not counted, and another agent has a count of its own.
    const other = await propose(agent, await conversation(agent), [{ toolName: 'read_row', arguments: {} }]);
    expect(other[0].status).toBe('approved');
    const fresh = await server.token('rate-bot-2', ['agent']);
    const theirs = await propose(fresh, await conversation(fresh), [{ toolName: 'delete_row', arguments: {} }]);
    expect(theirs[0].status).toBe('approved');
  });

  it('counts the calls of one proposal as they come: the third of a batch is held', async () => {
    await putPolicy({
      defaults: { unknownTools: 'automatic' },
      rules: [{ match: 'send_*', level: 'confirm', when: { rateAbove: { count: 2, per: 60, by: 'conversation' } } }],
    });
    const agent = await server.token('batch-bot', ['agent']);
    const calls = await propose(agent, await conversation(agent), [
      { toolName: 'send_mail', arguments: { n: 1 } },
      { toolName: 'send_mail', arguments: { n: 2 } },
      { toolName: 'send_sms', arguments: { n: 3 } },
    ]);
    expect(calls.map((c) => c.status)).toEqual(['approved', 'approved', 'pending']);
    expect(calls[2].policy.reason).toContain('3 calls in 1m by conversation');
  });
});

describe('costAbove', () => {
  it('sums estimatedCost in the window, refused calls costing nothing, and holds the call that crosses the total', async () => {
    await putPolicy({
      defaults: { unknownTools: 'automatic' },
      rules: [
        { match: 'pay', level: 'confirm', when: { costAbove: { total: 100, per: '1d', by: 'conversation' } } },
        { match: 'pay(vendor=blocked)', level: 'deny' },
      ],
    });
    const agent = await server.token('pay-bot', ['agent']);
    const conv = await conversation(agent);
    const [a] = await propose(agent, conv, [{ toolName: 'pay', arguments: { vendor: 'acme' }, estimatedCost: 60 }]);
    const [denied] = await propose(agent, conv, [
      { toolName: 'pay', arguments: { vendor: 'blocked' }, estimatedCost: 500 },
    ]);
    const [b] = await propose(agent, conv, [{ toolName: 'pay', arguments: { vendor: 'acme' }, estimatedCost: 30 }]);
    expect([a.status, denied.status, b.status]).toEqual(['approved', 'rejected', 'approved']);
    const [c] = await propose(agent, conv, [{ toolName: 'pay', arguments: { vendor: 'acme' }, estimatedCost: 20 }]);
    expect(c.status).toBe('pending');
    expect(c.policy.reason).toContain('costAbove: 110 in 1d by conversation, above 100');
  });
});

describe('shadow rules', () => {
  it('records what a shadow rule would have decided, on the call and in the audit trail, and changes nothing', async () => {
    await putPolicy({
      defaults: { unknownTools: 'automatic' },
      rules: [
        { match: 'drop_table', level: 'deny', mode: 'shadow', reason: 'would block drops' },
        { match: 'get_*', level: 'automatic' },
      ],
    });
    const got = await http.get('/v1/policy', admin);
    expect(got.body.rules[0].mode).toBe('shadow');
    const agent = await server.token('shadow-bot', ['agent']);
    const conv = await conversation(agent);
    const [drop, read] = await propose(agent, conv, [
      { toolName: 'drop_table', arguments: { name: 'users' } },
      { toolName: 'get_user', arguments: {} },
    ]);
    expect(drop.status).toBe('approved');
    expect(drop.policy.level).toBe('automatic');
    expect(drop.policy.shadow).toEqual({ rule: 0, level: 'deny', reason: 'would block drops' });
    expect(read.policy.shadow).toBeUndefined();
    const audit = await http.get(`/v1/audit/events?conversationId=${conv}&type=ToolCallProposed`, admin);
    expect(audit.status).toBe(200);
    const proposed = audit.body.events.find((e: { toolCallId?: string; data: { shadow?: unknown } }) =>
      JSON.stringify(e).includes(drop.id),
    );
    expect(proposed.data.shadow).toEqual({ rule: 0, level: 'deny', reason: 'would block drops' });

    // gRPC shows it the same way.
    const rpc = new TollgateGrpc(server.grpcAddress!);
    try {
      const grpcConv = await conversation(agent);
      const { toolCalls } = await rpc.call(
        'ProposeToolCalls',
        { conversationId: grpcConv, toolCalls: [{ toolName: 'drop_table', arguments: struct({ name: 'logs' }) }] },
        agent,
      );
      expect(toolCalls[0].policy.shadow).toEqual({
        rule: 0,
        level: 'SUPERVISION_LEVEL_DENY',
        reason: 'would block drops',
      });
    } finally {
      rpc.close();
    }
  });
});

describe('GET /v1/policy/analysis', () => {
  it('lists rules that never decide and rules that decide out of their order, for every role', async () => {
    await putPolicy({
      rules: [
        { match: 'delete_*', level: 'deny' },
        { match: 'delete_row', level: 'confirm', approvers: ['admin'] },
        { match: 'get_*', level: 'automatic' },
        { match: 'get_secret', level: 'manual' },
      ],
    });
    const auditor = await server.token('audrey', ['auditor']);
    const r = await http.get('/v1/policy/analysis', auditor);
    expect(r.status).toBe(200);
    expect(r.body.findings.map((f: { kind: string; rule: number; by: number }) => [f.kind, f.rule, f.by])).toEqual([
      ['unreachable', 1, 0],
      ['order', 3, 2],
    ]);
    expect(r.body.findings[0].message).toContain('never decides');
    expect((await http.get('/v1/policy/analysis')).status).toBe(401);
  });
});

const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;

onPostgres('rateAbove across two instances sharing one PostgreSQL', () => {
  let db: TestDatabase;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    db = await freshDatabase();
    a = await startTestServer({ instanceId: 'a' }, { db });
    b = await startTestServer({ instanceId: 'b' }, { db });
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await db?.drop();
  });

  it('lets exactly `count` of many concurrent proposals through, whichever instance took them', async () => {
    const ha = client(a.url);
    const hb = client(b.url);
    const root = await a.token('root', ['admin']);
    const put = await ha.put('/v1/policy', root, {
      defaults: { unknownTools: 'automatic' },
      rules: [{ match: 'wipe', level: 'confirm', when: { rateAbove: { count: 5, per: '1h', by: 'tenant' } } }],
    });
    expect(put.status).toBe(200);
    const agent = await a.token('race-bot', ['agent']);
    const convs = await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        const id = `race-${i}`;
        expect((await (i % 2 ? hb : ha).post('/v1/conversations', agent, { id })).status).toBe(201);
        return id;
      }),
    );
    const results = await Promise.all(
      convs.map(async (id, i) => {
        const r = await (i % 2 ? hb : ha).post(`/v1/conversations/${id}/tool-calls`, agent, {
          toolCalls: [{ toolName: 'wipe', arguments: {} }],
        });
        expect(r.status).toBe(201);
        return r.body.toolCalls[0].status as string;
      }),
    );
    expect(results.filter((s) => s === 'approved')).toHaveLength(5);
    expect(results.filter((s) => s === 'pending')).toHaveLength(11);
  });
});
