import { Client } from 'pg';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

/**
 * With the database gone, Tollgate answers 503 `unavailable` and approves nothing: a decision is only
 * answered once its transaction (state and audit events) has committed.
 */
describe('when the database goes away', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let agent: string;
  let admin: string;
  let pendingId: string;

  beforeAll(async () => {
    server = await startTestServer();
    api = client(server.url);
    agent = await server.token('bot', ['agent']);
    admin = await server.token('ann', ['admin']);
    await api.post('/v1/conversations', agent, { id: 'c1' });
    const r = await api.post('/v1/conversations/c1/tool-calls', agent, {
      toolCalls: [{ toolName: 'unregistered', arguments: {} }],
    });
    pendingId = r.body.toolCalls[0].id;
    expect(r.body.toolCalls[0].status).toBe('pending');

    if (server.db.url) {
      // Real PostgreSQL: drop the database from under the running service.
      const name = new URL(server.db.url).pathname.slice(1);
      const admin = new Client({ connectionString: process.env.DATABASE_URL });
      await admin.connect();
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.end();
    } else {
      // Embedded: the only connection is gone.
      await server.dataSource.destroy();
    }
  });

  afterAll(() => server.stop());

  it('refuses a decision with 503 unavailable instead of approving without a record', async () => {
    const r = await api.post(`/v1/tool-calls/${pendingId}/decision`, admin, { decision: 'approve' });
    expect(r.status).toBe(503);
    expect(r.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(r.body.code).toBe('unavailable');
  });

  it('refuses new proposals and reads with 503, never a 500', async () => {
    for (const r of [
      await api.post('/v1/conversations/c1/tool-calls', agent, { toolCalls: [{ toolName: 'x', arguments: {} }] }),
      await api.post('/v1/conversations', agent, {}),
      await api.get(`/v1/tool-calls/${pendingId}`, admin),
      await api.get('/v1/approvals', admin),
      await api.get('/v1/policy', admin),
    ]) {
      expect(r.status).toBe(503);
      expect(r.body.code).toBe('unavailable');
    }
  });

  it('reports not ready while staying alive', async () => {
    expect((await api.get('/health/ready')).status).toBe(503);
    expect((await api.get('/health/live')).status).toBe(200);
  });
});
