import { Client } from 'pg';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

/**
 * A PostgreSQL that is up but refuses the service (connections not allowed, 55000; sessions terminated
 * by an administrator, 57P01) is as unavailable as one that is
 * gone: 503 `unavailable` with Retry-After, nothing recorded, and the service recovers by itself once
 * the database lets it in again. PostgreSQL only: the embedded database has no such switches.
 */
const pgOnly = process.env.DATABASE_URL ? describe : describe.skip;

pgOnly('when PostgreSQL refuses connections', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let agent: string;
  let admin: string;
  let pendingId: string;
  let dbName: string;
  let superuser: Client;

  beforeAll(async () => {
    server = await startTestServer();
    api = client(server.url);
    agent = await server.token('bot', ['agent']);
    admin = await server.token('ann', ['admin']);
    dbName = new URL(server.db.url!).pathname.slice(1);
    superuser = new Client({ connectionString: process.env.DATABASE_URL });
    await superuser.connect();
    expect((await api.post('/v1/conversations', agent, { id: 'c1' })).status).toBe(201);
    const r = await api.post('/v1/conversations/c1/tool-calls', agent, {
      toolCalls: [{ toolName: 'unregistered', arguments: {} }],
    });
    pendingId = r.body.toolCalls[0].id;
    expect(r.body.toolCalls[0].status).toBe('pending');
  });

  afterAll(async () => {
    await superuser.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`).catch(() => undefined);
    await superuser.end();
    await server.stop();
  });

  async function terminateSessions(): Promise<void> {
    await superuser.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
      [dbName],
    );
  }

  async function expectUnavailable(): Promise<void> {
    const replies = [
      await api.post(`/v1/tool-calls/${pendingId}/decision`, admin, { decision: 'approve' }),
      await api.post('/v1/conversations/c1/tool-calls', agent, { toolCalls: [{ toolName: 'x', arguments: {} }] }),
      await api.get(`/v1/tool-calls/${pendingId}`, admin),
      await api.get('/v1/approvals', admin),
    ];
    for (const r of replies) {
      expect({ status: r.status, code: r.body.code }).toEqual({ status: 503, code: 'unavailable' });
      expect(r.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  }

  async function expectRecovered(): Promise<void> {
    // The pool reconnects on its own: the first request after may still meet a dead pooled session.
    let last = 0;
    for (let i = 0; i < 20 && last !== 200; i++) {
      last = (await api.get(`/v1/tool-calls/${pendingId}`, admin)).status;
      if (last !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(last).toBe(200);
    const call = (await api.get(`/v1/tool-calls/${pendingId}`, admin)).body;
    expect(call.status).toBe('pending'); // nothing was approved while the database refused
  }

  it('answers 503 with Retry-After when the database does not allow connections (55000)', async () => {
    await superuser.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS false`);
    await terminateSessions();
    await expectUnavailable();
    await superuser.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`);
    await expectRecovered();
  });

  it('never answers 500 while an administrator terminates its sessions (57P01)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      await terminateSessions();
      statuses.push((await api.get(`/v1/tool-calls/${pendingId}`, admin)).status);
    }
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    await expectRecovered();
  });
});
