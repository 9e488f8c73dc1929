/**
 * The chain head carries the `at` of its event (migration 1764900000002), so the forward-only check finds that
 * event in its own month instead of probing every month of `events`. A wrong `at` is refused like a wrong hash:
 * the head still only moves forward, onto an appended event. On PostgreSQL and on PGlite.
 */
import { randomUUID } from 'node:crypto';
import { QueryRunner } from 'typeorm';
import { ChainHeadAt1764900000002 } from '../../migrations/1764900000002-chain-head-at';
import { client } from '../support/http';
import { startTestServer, TestServer } from '../support/server';

jest.setTimeout(60_000);

let server: TestServer;
const TENANT = 'heads-at';

const sql = <T = any>(text: string, params: unknown[] = []): Promise<T[]> => server.dataSource.query(text, params);

/** Refused by the database (the trigger's exception), never a typo in the statement. */
async function expectRefused(qr: QueryRunner, text: string, params: unknown[]): Promise<void> {
  await qr.query(`SAVEPOINT refused`);
  const error = await qr.query(text, params).then(
    () => undefined,
    (e: { code?: string; driverError?: { code?: string } }) => e,
  );
  await qr.query(`ROLLBACK TO SAVEPOINT refused`);
  expect({ text, params, code: error?.driverError?.code ?? error?.code }).toEqual({ text, params, code: '42501' });
}

/** Runs `body` on a connection of its own inside a transaction that is rolled back. */
async function rolledBack(body: (qr: QueryRunner) => Promise<void>): Promise<void> {
  const qr = server.dataSource.createQueryRunner();
  await qr.connect();
  try {
    await qr.startTransaction();
    await body(qr);
  } finally {
    await qr.rollbackTransaction().catch(() => undefined);
    await qr.release();
  }
}

/** One event in the shape `tollgate_append_events` takes (its chain template and columns). */
const record = (at: Date) => ({
  head: `{"type":"Bench"`,
  mid: `,"seq":`,
  tail: `}`,
  id: randomUUID(),
  type: 'ChainHeadAtProbe',
  at: at.toISOString(),
  recordedAt: new Date().toISOString(),
  instanceId: 'test',
  actor: { kind: 'system', id: 'test' },
  data: {},
});

const head = async (qr?: QueryRunner) =>
  (await (qr ?? server.dataSource).query(`SELECT seq, hash, at FROM audit_heads WHERE tenant_id = $1`, [TENANT]))[0];

beforeAll(async () => {
  server = await startTestServer({ sweepIntervalMs: 0 });
  const agent = await server.token('bot', ['agent'], { tenant: TENANT });
  for (let i = 0; i < 3; i++)
    expect((await client(server.url).post('/v1/conversations', agent, { id: `c${i}` })).status).toBe(201);
  // Six past months and the default partition beside this month and the next three: 11 partitions.
  await sql(`SELECT tollgate_events_ensure_partitions(now() - interval '6 months', now())`);
});

afterAll(async () => {
  await server?.stop();
});

describe('the chain head and its at', () => {
  it("holds the at of the event it names, set by the service's appends", async () => {
    const h = await head();
    const [event] = await sql(`SELECT seq, hash, at FROM events WHERE tenant_id = $1 ORDER BY seq DESC LIMIT 1`, [
      TENANT,
    ]);
    expect(h).toEqual({ seq: '3', hash: event.hash, at: event.at });
    expect(h.at).toBeInstanceOf(Date);
  });

  it('refuses a head moved onto a missing event, backwards, or with a wrong or stale at', async () => {
    await rolledBack(async (qr) => {
      const before = await head(qr);
      const previous = (
        await qr.query(`SELECT seq, hash, at FROM events WHERE tenant_id = $1 AND seq = $2`, [TENANT, before.seq - 1])
      )[0];
      // An event at seq 4 written behind the service's back (INSERT is allowed on events), one second later.
      const at = new Date(before.at.getTime() + 1000);
      const hash = 'e'.repeat(64);
      await qr.query(
        `INSERT INTO events (tenant_id, seq, id, type, at, instance_id, actor, data, prev_hash, hash)
         VALUES ($1, 4, $2, 'ChainHeadAtProbe', $3, 'test', '{}', '{}', $4, $5)`,
        [TENANT, randomUUID(), at, before.hash, hash],
      );
      const move = `UPDATE audit_heads SET seq = $2, hash = $3, at = $4 WHERE tenant_id = $1`;
      // Onto an event that is not there, with a plausible at.
      await expectRefused(qr, move, [TENANT, 5, hash, at]);
      await expectRefused(qr, move, [TENANT, 4, 'f'.repeat(64), at]);
      // Back, onto an event that is there with its own hash and at.
      await expectRefused(qr, move, [TENANT, previous.seq, previous.hash, previous.at]);
      // Onto seq 4 with a wrong at: a millisecond off, a month off, or the previous event's (a mover that kept it).
      await expectRefused(qr, move, [TENANT, 4, hash, new Date(at.getTime() + 1)]);
      await expectRefused(qr, move, [TENANT, 4, hash, new Date(at.getTime() - 31 * 86_400_000)]);
      await expectRefused(qr, `UPDATE audit_heads SET seq = $2, hash = $3 WHERE tenant_id = $1`, [TENANT, 4, hash]);
      // A wrong at alone, at the same seq.
      await expectRefused(qr, `UPDATE audit_heads SET at = $2 WHERE tenant_id = $1`, [TENANT, at]);
      expect(await head(qr)).toEqual(before);

      // The same moves with the event's own at pass: the refusals above were the at's doing. NULL means unknown:
      // the check then looks in every month, as before the migration.
      await qr.query(`SAVEPOINT ok`);
      await qr.query(move, [TENANT, 4, hash, at]);
      expect(await head(qr)).toEqual({ seq: '4', hash, at });
      await qr.query(`ROLLBACK TO SAVEPOINT ok`);
      await qr.query(move, [TENANT, 4, hash, null]);
      expect(await head(qr)).toEqual({ seq: '4', hash, at: null });
      await qr.query(`UPDATE audit_heads SET at = $2 WHERE tenant_id = $1`, [TENANT, at]);
      expect(await head(qr)).toEqual({ seq: '4', hash, at });
    });
  });

  it('refuses a new head whose at is not its event', async () => {
    await rolledBack(async (qr) => {
      await qr.query(`ALTER TABLE audit_heads DISABLE TRIGGER audit_heads_forward_only`);
      await qr.query(`DELETE FROM audit_heads WHERE tenant_id = $1`, [TENANT]);
      await qr.query(`ALTER TABLE audit_heads ENABLE ALWAYS TRIGGER audit_heads_forward_only`);
      const last = `SELECT tenant_id, seq, hash, at + $2::interval FROM events WHERE tenant_id = $1 AND seq = 3`;
      await expectRefused(qr, `INSERT INTO audit_heads (tenant_id, seq, hash, at) ${last}`, [TENANT, '1 second']);
      await qr.query(`INSERT INTO audit_heads (tenant_id, seq, hash, at) ${last}`, [TENANT, '0 seconds']);
      await expectRefused(
        qr,
        `INSERT INTO audit_heads (tenant_id, seq, hash, at) VALUES ($1, 0, repeat('0', 64), now())`,
        ['heads-at-fresh'],
      );
    });
  });
});

/**
 * The partitions of `events` that appends touch. `scanned`: those one append reads, from the statistics of the
 * running transaction (taken before and after it, so nothing earlier counts). `opened`: those with an index the
 * transaction's appends opened (a lock is held on each until the end): a plan that was not pruned opens the
 * indexes of months it never reads. The appends before the one counted let plpgsql settle on its cached plans.
 */
async function partitionsTouchedByAppends(
  qr: QueryRunner,
  tenant: string,
): Promise<{ scanned: string[]; opened: string[] }> {
  const scans = async (): Promise<Map<string, number>> => {
    const rows: Array<{ name: string; n: string }> = await qr.query(
      `SELECT s.relname AS name, coalesce(s.seq_scan, 0) + coalesce(s.idx_scan, 0) AS n
         FROM pg_stat_xact_user_tables s JOIN pg_inherits i ON i.inhrelid = s.relid
        WHERE i.inhparent = 'events'::regclass`,
    );
    return new Map(rows.map((r) => [r.name, Number(r.n)]));
  };
  const append = (at: Date) =>
    qr.query(`SELECT out_seq FROM tollgate_append_events($1, $2::jsonb)`, [tenant, JSON.stringify([record(at)])]);
  for (let i = 0; i < 8; i++) await append(new Date());
  const before = await scans();
  await append(new Date());
  const after = await scans();
  const opened: Array<{ name: string }> = await qr.query(
    `SELECT DISTINCT p.relname AS name FROM pg_locks l
       JOIN pg_index x ON x.indexrelid = l.relation
       JOIN pg_class p ON p.oid = x.indrelid JOIN pg_inherits i ON i.inhrelid = p.oid
      WHERE l.pid = pg_backend_pid() AND i.inhparent = 'events'::regclass`,
  );
  return {
    scanned: [...after].filter(([name, n]) => n > (before.get(name) ?? 0)).map(([name]) => name),
    opened: opened.map((r) => r.name).sort(),
  };
}

const thisMonth = () => {
  const now = new Date();
  return `events_${now.getUTCFullYear()}_${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
};

describe("an append's check", () => {
  const partitions = async (qr: QueryRunner): Promise<string[]> =>
    (
      await qr.query(
        `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = 'events'::regclass ORDER BY 1`,
      )
    ).map((r: { name: string }) => r.name);

  it("reads and opens only the partition of the head's event, among 11", async () => {
    await rolledBack(async (qr) => {
      expect((await partitions(qr)).length).toBeGreaterThanOrEqual(11);
      const touched = await partitionsTouchedByAppends(qr, TENANT);
      expect(touched.scanned).toEqual([thisMonth()]);
      // This month is opened by the INSERT too.
      expect(touched.opened).toEqual([thisMonth()]);
    });
  });

  it("before the migration (down) it read every month up to the event's; after it (up) that month only", async () => {
    await rolledBack(async (qr) => {
      const all = await partitions(qr);
      const column = () =>
        qr.query(`SELECT 1 FROM information_schema.columns WHERE table_name = 'audit_heads' AND column_name = 'at'`);
      await new ChainHeadAt1764900000002().down(qr);
      expect(await column()).toEqual([]);
      const before = await partitionsTouchedByAppends(qr, TENANT);
      // Which of them it opened depends on the plan (an empty month analysed as empty is read without an index).
      // Partitions in the order of their bounds: the check stops at the month that holds the event.
      expect(before.scanned.sort()).toEqual(all.filter((p) => /_\d{4}_\d{2}$/.test(p) && p <= thisMonth()));

      await new ChainHeadAt1764900000002().up(qr);
      expect((await column()).length).toBe(1);
      // Heads from before the migration have no at: the first append sets it.
      expect((await head(qr)).at).toBeNull();
      // The partitions stay open from the appends above until the transaction ends: only the reads tell here.
      expect((await partitionsTouchedByAppends(qr, TENANT)).scanned).toEqual([thisMonth()]);
      const h = await head(qr);
      const [event] = await qr.query(`SELECT hash, at FROM events WHERE tenant_id = $1 AND seq = $2`, [TENANT, h.seq]);
      expect(h).toEqual({ seq: h.seq, hash: event.hash, at: event.at });
    });
  });

  it('leaves the chain verifiable', async () => {
    const auditor = await server.token('audrey', ['auditor'], { tenant: TENANT });
    expect((await client(server.url).get('/v1/audit/verify', auditor)).body).toEqual({ ok: true, checked: 3 });
  });
});
