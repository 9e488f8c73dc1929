import { Client } from 'pg';
import { findPgbouncer, INSTALL_HINT, RunningPgbouncer, startPgbouncer } from '../../bench/lib/pgbouncer';
import { freshDatabase, TestDatabase } from '../support/database';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

/**
 * Two instances behind a real PgBouncer in transaction mode (bench/lib/pgbouncer.js starts a private one), as
 * most managed PostgreSQL deployments run: DATABASE_URL is the pooler, named prepared statements are off
 * (PgBouncer 1.18 cannot carry them in that mode), and TOLLGATE_DATABASE_DIRECT_URL is PostgreSQL itself for the
 * LISTEN connection and the migrations. The whole loop works through the pooler, and a decision on one instance
 * still wakes a long-poll on the other: with LISTEN through the pooler the wake-up would never arrive.
 * PostgreSQL only; skipped when the pgbouncer binary is absent (`apt-get install pgbouncer`; CI installs it).
 */
const binary = findPgbouncer();
const withPgbouncer = process.env.DATABASE_URL && binary ? describe : describe.skip;
if (process.env.DATABASE_URL && !binary)
  console.warn(`test/e2e/pgbouncer.e2e-spec.ts skipped: pgbouncer not installed (${INSTALL_HINT})`);

withPgbouncer('two instances behind PgBouncer in transaction mode', () => {
  let db: TestDatabase;
  let pgbouncer: RunningPgbouncer;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    db = await freshDatabase();
    // Fewer server connections than the two instances' pools hold clients: the pooler really multiplexes.
    pgbouncer = await startPgbouncer({ serverUrl: db.url!, poolSize: 4, adminConsole: true });
    const viaPooler = { databaseUrl: pgbouncer.url, databaseDirectUrl: db.url, preparedStatements: false };
    // A re-reads on its own only after a minute, longer than any wait here: only a notification can wake it in time.
    a = await startTestServer({ ...viaPooler, instanceId: 'a', sweepIntervalMs: 0, longPollRecheckMs: 60_000 }, { db });
    b = await startTestServer({ ...viaPooler, instanceId: 'b', migrate: false }, { db });
  }, 60_000);

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await pgbouncer?.stop();
    await db?.drop();
  });

  /** What PgBouncer counted for the test database: transactions and queries it carried. */
  async function pooledStats(): Promise<{ xacts: number; queries: number }> {
    const admin = new Client({ connectionString: pgbouncer.adminUrl });
    await admin.connect();
    try {
      const { rows } = await admin.query('SHOW STATS');
      const row = rows.find((r: { database: string }) => r.database === new URL(db.url!).pathname.slice(1));
      return { xacts: Number(row?.total_xact_count ?? 0), queries: Number(row?.total_query_count ?? 0) };
    } finally {
      await admin.end();
    }
  }

  it('runs in transaction mode', async () => {
    const admin = new Client({ connectionString: pgbouncer.adminUrl });
    await admin.connect();
    try {
      const { rows } = await admin.query('SHOW CONFIG');
      expect(rows.find((r: { key: string }) => r.key === 'pool_mode')?.value).toBe('transaction');
    } finally {
      await admin.end();
    }
  });

  it('propose on A, decide on B, wake on A, claim and report the result on A: all through the pooler', async () => {
    const before = await pooledStats();
    const agent = await a.token('bot', ['agent']);
    const ann = await b.token('ann', ['approver']);
    const auditor = await a.token('audrey', ['auditor']);
    expect((await client(a.url).post('/v1/conversations', agent, { id: 'via-pooler' })).status).toBe(201);
    const proposed = await client(a.url).post('/v1/conversations/via-pooler/tool-calls', agent, {
      toolCalls: [{ toolName: 'send_email', arguments: { to: 'bob@example.com' } }],
    });
    expect(proposed.status).toBe(201);
    const id = proposed.body.toolCalls[0].id;
    expect(proposed.body.toolCalls[0].status).toBe('pending');

    const poll = client(a.url).get(`/v1/tool-calls/${id}?wait=30`, agent);
    await new Promise((r) => setTimeout(r, 300)); // the poll is waiting on A
    const decided = await client(b.url).post(`/v1/tool-calls/${id}/decision`, ann, {
      decision: 'approve',
      reason: 'through the pooler',
    });
    expect(decided.status).toBe(200);
    // Only a NOTIFY (sent through the pooler, received on A's direct LISTEN connection) answers before 15 s.
    const woken = await Promise.race([
      poll,
      new Promise<'still waiting'>((r) => setTimeout(() => r('still waiting'), 15_000)),
    ]);
    expect(woken === 'still waiting' ? woken : woken.body.status).toBe('approved');

    expect((await client(a.url).post(`/v1/tool-calls/${id}/execution`, agent)).status).toBe(200);
    const result = await client(a.url).post(`/v1/tool-calls/${id}/result`, agent, {
      outcome: 'succeeded',
      output: { sent: true },
    });
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ id, status: 'completed' });

    expect((await client(b.url).get('/v1/audit/verify', auditor)).body).toMatchObject({ ok: true });
    const after = await pooledStats();
    expect(after.xacts - before.xacts).toBeGreaterThanOrEqual(5);
  }, 60_000);

  it('concurrent proposals in one conversation on both instances all land, and the chain stays whole', async () => {
    const agentA = await a.token('bot', ['agent']);
    const agentB = await b.token('bot', ['agent']);
    const auditor = await a.token('audrey', ['auditor']);
    const admin = await a.token('root', ['admin']);
    expect(
      (await client(a.url).put('/v1/policy', admin, { rules: [{ match: 'get_*', level: 'automatic' }] })).status,
    ).toBe(200);
    expect((await client(a.url).post('/v1/conversations', agentA, { id: 'contended' })).status).toBe(201);
    const replies = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        client(i % 2 ? b.url : a.url).post('/v1/conversations/contended/tool-calls', i % 2 ? agentB : agentA, {
          toolCalls: [{ toolName: 'get_source', arguments: { n: i } }],
        }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 201));
    expect(new Set(replies.map((r) => r.body.toolCalls[0].status))).toEqual(new Set(['approved']));
    const conversation = await client(a.url).get('/v1/conversations/contended', agentA);
    expect(conversation.status).toBe(200);
    expect((await client(b.url).get('/v1/audit/verify', auditor)).body).toMatchObject({ ok: true });
  }, 60_000);
});

const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;

onPostgres('TOLLGATE_DATABASE_DIRECT_URL out of reach', () => {
  it('stops the start with one line naming the setting, since the migrations run there', async () => {
    const db = await freshDatabase();
    try {
      const nothingThere = new URL(db.url!);
      nothingThere.port = '1'; // nothing listens on port 1 here
      await expect(
        startTestServer({ databaseDirectUrl: nothingThere.toString(), migrate: true }, { db }),
      ).rejects.toThrow(
        /^cannot use the database 127\.0\.0\.1:1\/tollgate_t_\w+ as postgres: nothing accepts connections there; check TOLLGATE_DATABASE_DIRECT_URL/,
      );
    } finally {
      await db.drop();
    }
  }, 30_000);
});
