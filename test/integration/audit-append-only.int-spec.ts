/**
 * The audit trail is append-only in the database itself (CONTRACT §9, §11): UPDATE, DELETE and
 * TRUNCATE on `events` are refused for every role, the table's owner included — checked here as the
 * service's own connecting role, which owns the table.
 */
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;

const sql = <T = any>(text: string, params: unknown[] = []): Promise<T[]> => server.dataSource.query(text, params);
/** Refused by the database: a privilege error or a raised exception (a trigger), never a typo in the statement. */
async function expectRefused(statement: Promise<unknown>): Promise<void> {
  const error = await statement.then(
    () => undefined,
    (e: { code?: string; driverError?: { code?: string } }) => e,
  );
  expect(error).toBeDefined();
  expect(['42501', 'P0001']).toContain(error?.driverError?.code ?? error?.code);
}

const snapshot = () =>
  sql(`SELECT tenant_id, seq, id, type, at, actor, data, prev_hash, hash FROM events ORDER BY tenant_id, seq`);

beforeAll(async () => {
  server = await startTestServer();
  // A few real events through the service: row triggers only fire when there are rows to touch.
  const api = client(server.url);
  const agent = await server.token('agent-audit', ['agent']);
  const approver = await server.token('alice', ['approver']);
  expect((await api.post('/v1/conversations', agent, { id: 'conv-audit', title: 'audit' })).status).toBe(201);
  const proposed = await api.post('/v1/conversations/conv-audit/tool-calls', agent, {
    toolCalls: [{ toolName: 'delete_source', arguments: { id: 'src_1' } }],
  });
  expect(proposed.status).toBe(201);
  expect(
    (await api.post(`/v1/tool-calls/${proposed.body.toolCalls[0].id}/decision`, approver, { decision: 'approve' }))
      .status,
  ).toBe(200);
});

afterAll(async () => {
  await server?.stop();
});

describe('the events table', () => {
  let before: unknown[];

  beforeAll(async () => {
    before = await snapshot();
  });

  it('holds events and is owned by the role the service connects as', async () => {
    expect(before.length).toBeGreaterThanOrEqual(4);
    const [{ owner, me }] = await sql(
      `SELECT tableowner AS owner, current_user AS me FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'events'`,
    );
    expect(owner).toBe(me);
  });

  it('refuses UPDATE of a row', async () => {
    await expectRefused(sql(`UPDATE events SET type = 'ToolCallRejected' WHERE seq = 4`));
    expect(await snapshot()).toEqual(before);
  });

  it('refuses UPDATE of every row, hashes included', async () => {
    await expectRefused(
      sql(`UPDATE events SET hash = repeat('0', 64), prev_hash = repeat('0', 64), data = '{}'::jsonb`),
    );
    expect(await snapshot()).toEqual(before);
  });

  it('refuses DELETE of a row', async () => {
    await expectRefused(sql(`DELETE FROM events WHERE seq = (SELECT max(seq) FROM events)`));
    expect(await snapshot()).toEqual(before);
  });

  it('refuses DELETE of every row', async () => {
    await expectRefused(sql(`DELETE FROM events`));
    expect(await snapshot()).toEqual(before);
  });

  it('refuses TRUNCATE', async () => {
    await expectRefused(sql(`TRUNCATE events`));
    expect(await snapshot()).toEqual(before);
  });

  it('refuses TRUNCATE ... CASCADE and RESTART IDENTITY too', async () => {
    await expectRefused(sql(`TRUNCATE TABLE events RESTART IDENTITY CASCADE`));
    expect(await snapshot()).toEqual(before);
  });

  it('refuses them inside an explicit transaction, which then commits nothing', async () => {
    const qr = server.dataSource.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      await expectRefused(qr.query(`DELETE FROM events WHERE seq = 1`));
      await qr.rollbackTransaction();
    } finally {
      await qr.release();
    }
    expect(await snapshot()).toEqual(before);
  });

  it('refuses DELETE even with session_replication_role = replica, which skips ordinary triggers', async () => {
    const qr = server.dataSource.createQueryRunner();
    await qr.connect();
    try {
      await qr.query(`SET session_replication_role = replica`);
      await expectRefused(qr.query(`DELETE FROM events`));
    } finally {
      await qr.query(`RESET session_replication_role`).catch(() => undefined);
      await qr.release();
    }
    expect(await snapshot()).toEqual(before);
  });

  it('still accepts new events from the service: append-only, not read-only', async () => {
    const api = client(server.url);
    const agent = await server.token('agent-audit', ['agent']);
    expect((await api.post('/v1/conversations', agent, { id: 'conv-audit-2' })).status).toBe(201);
    const after = await snapshot();
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after).toHaveLength(before.length + 1);
  });
});
