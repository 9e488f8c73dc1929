/**
 * The chain head (`audit_heads`) has the events table's discipline (migration 1764615000000): it only moves
 * forward onto an event that was appended, never back, and it is never deleted or truncated — for every role,
 * the owner and superusers included, and with session_replication_role = replica too. The service's own
 * appends still move it.
 */
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

let server: TestServer;
const TENANT = 'heads';

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

const heads = () => sql(`SELECT tenant_id, seq, hash FROM audit_heads ORDER BY tenant_id`);
const eventAt = async (seq: number) =>
  (await sql(`SELECT seq, hash FROM events WHERE tenant_id = $1 AND seq = $2`, [TENANT, seq]))[0];

beforeAll(async () => {
  server = await startTestServer();
  const api = client(server.url);
  const agent = await server.token('bot', ['agent'], { tenant: TENANT });
  for (let i = 0; i < 3; i++) expect((await api.post('/v1/conversations', agent, { id: `c${i}` })).status).toBe(201);
});

afterAll(async () => {
  await server?.stop();
});

describe('the chain head', () => {
  let before: unknown[];

  beforeAll(async () => {
    before = await heads();
    expect(before).toEqual([{ tenant_id: TENANT, seq: '3', hash: (await eventAt(3)).hash }]);
  });

  it('is guarded by triggers enabled ALWAYS', async () => {
    const rows = await sql(
      `SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'audit_heads'::regclass AND NOT tgisinternal ORDER BY tgname`,
    );
    expect(rows).toEqual([
      { tgname: 'audit_heads_forward_only', tgenabled: 'A' },
      { tgname: 'audit_heads_no_truncate', tgenabled: 'A' },
    ]);
  });

  it('refuses to move back, even onto an event that is in the table with its own hash', async () => {
    const second = await eventAt(2);
    await expectRefused(
      sql(`UPDATE audit_heads SET seq = $2, hash = $3 WHERE tenant_id = $1`, [TENANT, second.seq, second.hash]),
    );
    expect(await heads()).toEqual(before);
  });

  it('refuses a new hash without a new seq', async () => {
    await expectRefused(sql(`UPDATE audit_heads SET hash = repeat('a', 64) WHERE tenant_id = $1`, [TENANT]));
    expect(await heads()).toEqual(before);
  });

  it('refuses to move forward onto an event that was never appended', async () => {
    await expectRefused(sql(`UPDATE audit_heads SET seq = 4, hash = repeat('b', 64) WHERE tenant_id = $1`, [TENANT]));
    await expectRefused(
      sql(
        `UPDATE audit_heads SET seq = 4, hash = (SELECT hash FROM events WHERE tenant_id = $1 AND seq = 3) WHERE tenant_id = $1`,
        [TENANT],
      ),
    );
    expect(await heads()).toEqual(before);
  });

  it('refuses to hand the head to another tenant', async () => {
    await expectRefused(sql(`UPDATE audit_heads SET tenant_id = 'elsewhere' WHERE tenant_id = $1`, [TENANT]));
    expect(await heads()).toEqual(before);
  });

  it('refuses DELETE and TRUNCATE', async () => {
    await expectRefused(sql(`DELETE FROM audit_heads WHERE tenant_id = $1`, [TENANT]));
    await expectRefused(sql(`DELETE FROM audit_heads`));
    await expectRefused(sql(`TRUNCATE audit_heads`));
    await expectRefused(sql(`TRUNCATE TABLE audit_heads RESTART IDENTITY CASCADE`));
    expect(await heads()).toEqual(before);
  });

  it('refuses a head that starts anywhere but seq 0 of an empty chain or the last event of its tenant', async () => {
    await expectRefused(sql(`INSERT INTO audit_heads (tenant_id, seq, hash) VALUES ('fresh', 7, repeat('c', 64))`));
    // A head row deleted behind the triggers' back cannot be put back at an earlier point either.
    const qr = server.dataSource.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      await qr.query(`ALTER TABLE audit_heads DISABLE TRIGGER audit_heads_forward_only`);
      await qr.query(`DELETE FROM audit_heads WHERE tenant_id = $1`, [TENANT]);
      await qr.query(`ALTER TABLE audit_heads ENABLE ALWAYS TRIGGER audit_heads_forward_only`);
      await qr.query(`SAVEPOINT s`);
      await expectRefused(
        qr.query(`INSERT INTO audit_heads (tenant_id, seq, hash) VALUES ($1, 0, repeat('0', 64))`, [TENANT]),
      );
      await qr.query(`ROLLBACK TO SAVEPOINT s`);
      await expectRefused(
        qr.query(
          `INSERT INTO audit_heads (tenant_id, seq, hash) SELECT tenant_id, seq, hash FROM events WHERE tenant_id = $1 AND seq = 2`,
          [TENANT],
        ),
      );
      await qr.query(`ROLLBACK TO SAVEPOINT s`);
      // At the last event, with its hash, is where a bulk load puts it: consistent with the table.
      await qr.query(
        `INSERT INTO audit_heads (tenant_id, seq, hash) SELECT tenant_id, seq, hash FROM events WHERE tenant_id = $1 AND seq = 3`,
        [TENANT],
      );
    } finally {
      await qr.rollbackTransaction().catch(() => undefined);
      await qr.release();
    }
    expect(await heads()).toEqual(before);
  });

  it('refuses them all with session_replication_role = replica, which skips ordinary triggers', async () => {
    const qr = server.dataSource.createQueryRunner();
    await qr.connect();
    try {
      await qr.query(`SET session_replication_role = replica`);
      const first = (await qr.query(`SELECT seq, hash FROM events WHERE tenant_id = $1 AND seq = 1`, [TENANT]))[0];
      await expectRefused(
        qr.query(`UPDATE audit_heads SET seq = $2, hash = $3 WHERE tenant_id = $1`, [TENANT, first.seq, first.hash]),
      );
      await expectRefused(qr.query(`UPDATE audit_heads SET hash = repeat('d', 64) WHERE tenant_id = $1`, [TENANT]));
      await expectRefused(qr.query(`DELETE FROM audit_heads`));
      await expectRefused(qr.query(`TRUNCATE audit_heads`));
    } finally {
      await qr.query(`RESET session_replication_role`).catch(() => undefined);
      await qr.release();
    }
    expect(await heads()).toEqual(before);
  });

  it('has DELETE and TRUNCATE revoked from the role that owns it; INSERT and UPDATE stay for appends', async () => {
    const rows: Array<{ privilege_type: string }> = await sql(
      `SELECT a.privilege_type FROM pg_class c, aclexplode(c.relacl) a
        WHERE c.relname = 'audit_heads' AND c.relnamespace = to_regnamespace(current_schema()) AND a.grantee = c.relowner`,
    );
    const held = rows.map((r) => r.privilege_type);
    expect(held).toEqual(expect.arrayContaining(['INSERT', 'SELECT', 'UPDATE']));
    for (const p of ['DELETE', 'TRUNCATE']) expect(held).not.toContain(p);
  });

  it("still moves forward with the service's appends, for a new tenant too", async () => {
    const api = client(server.url);
    await api.post('/v1/conversations', await server.token('bot', ['agent'], { tenant: TENANT }), { id: 'c-next' });
    await api.post('/v1/conversations', await server.token('bot', ['agent'], { tenant: 'heads-new' }), {
      id: 'c-first',
    });
    expect(await heads()).toEqual([
      { tenant_id: TENANT, seq: '4', hash: (await eventAt(4)).hash },
      {
        tenant_id: 'heads-new',
        seq: '1',
        hash: (await sql(`SELECT hash FROM events WHERE tenant_id = 'heads-new' AND seq = 1`))[0].hash,
      },
    ]);
    const auditor = await server.token('audrey', ['auditor'], { tenant: TENANT });
    expect((await api.get('/v1/audit/verify', auditor)).body).toEqual({ ok: true, checked: 4 });
  });
});
