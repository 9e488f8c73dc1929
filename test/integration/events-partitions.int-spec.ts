/**
 * `events` partitioned by month of `at` (migration 1764700000000): partitions made ahead of time, a default
 * partition so an append never fails for lack of one, every partition as append-only as the table, time windows
 * read from their months only (EXPLAIN), and retention dropping whole months where it can.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { QueryRunner } from 'typeorm';
import { loadConfig } from '../../src/infrastructure/config/config';
import { mintToken } from '../../src/infrastructure/auth/jwt-verifier';
import { RunningServer, startServer } from '../../src/server';
import { EventsPartitioned1764700000000 } from '../../migrations/1764700000000-events-partitioned';
import { EventPartitionMaintenance } from '../../src/infrastructure/persistence/event-partitions';
import { pageQuery, seqRangeQuery } from '../../src/infrastructure/persistence/sql-audit-log';
import { client } from '../support/http';
import { startTestServer, TEST_SECRET, TestServer } from '../support/server';

let server: TestServer;
let api: ReturnType<typeof client>;

const sql = <T = any>(text: string, params: unknown[] = []): Promise<T[]> => server.dataSource.query(text, params);

/** Refused by the database: a privilege error or a raised exception (a trigger), never a typo in the statement. */
async function expectRefused(statement: Promise<unknown>, message?: RegExp): Promise<void> {
  const error = await statement.then(
    () => undefined,
    (e: { code?: string; message?: string; driverError?: { code?: string } }) => e,
  );
  expect(error).toBeDefined();
  expect(['42501', 'P0001']).toContain(error?.driverError?.code ?? error?.code);
  if (message) expect(error?.message).toMatch(message);
}

/** The first instant of the UTC month `offset` months from now's. */
function monthStart(offset: number, from = new Date()): Date {
  return new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + offset, 1));
}
const partitionName = (d: Date) => `events_${d.toISOString().slice(0, 7).replace('-', '_')}`;
const partitions = async () =>
  (await sql<{ name: string }>(`SELECT name FROM tollgate_events_partitions()`)).map((p) => p.name);
const partitionOf = async (tenant: string, seq: number) =>
  (await sql(`SELECT tableoid::regclass::text AS p FROM events WHERE tenant_id = $1 AND seq = $2`, [tenant, seq]))[0]
    ?.p;

/** Rows straight into the table, numbered from 1, for tests about where rows go and how they are read (not the chain). */
async function insertEvents(tenant: string, ats: Date[]): Promise<void> {
  for (const [i, at] of ats.entries()) {
    await sql(
      `INSERT INTO events (tenant_id, seq, id, type, at, recorded_at, instance_id, actor, data, prev_hash, hash)
       VALUES ($1, $2, $3, 'TestEvent', $4, $4, 'test', '{"id":"x"}', '{}', repeat('0', 64), repeat('1', 64))`,
      [tenant, i + 1, randomUUID(), at],
    );
  }
}

/** Moves events back in time behind the service's back, as the retention test does: their hashes stay. */
async function age(tenant: string, seqs: number[], at: Date): Promise<void> {
  await sql(`ALTER TABLE events DISABLE TRIGGER events_no_update_delete`);
  try {
    await sql(`UPDATE events SET at = $3 WHERE tenant_id = $1 AND seq = ANY($2::bigint[])`, [tenant, seqs, at]);
  } finally {
    await sql(`ALTER TABLE events ENABLE ALWAYS TRIGGER events_no_update_delete`);
  }
}

/** The tables an EXPLAIN reads. */
async function scanned(query: { sql: string; params: unknown[] }): Promise<string[]> {
  const [row] = await sql(`EXPLAIN (FORMAT JSON) ${query.sql}`, query.params);
  const plan = typeof row['QUERY PLAN'] === 'string' ? JSON.parse(row['QUERY PLAN']) : row['QUERY PLAN'];
  const names = new Set<string>();
  const walk = (node: any) => {
    if (node['Relation Name']) names.add(node['Relation Name']);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan[0].Plan);
  return [...names].sort();
}

async function expectEveryPartitionGuarded(): Promise<void> {
  const rows: Array<{ name: string; triggers: string[]; held: string[] }> = await sql(`
    SELECT c.relname AS name,
           ARRAY(SELECT t.tgname || ':' || t.tgenabled::text FROM pg_trigger t WHERE t.tgrelid = c.oid AND NOT t.tgisinternal ORDER BY t.tgname) AS triggers,
           ARRAY(SELECT a.privilege_type FROM aclexplode(c.relacl) a WHERE a.grantee = c.relowner ORDER BY 1) AS held
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'events'::regclass`);
  expect(rows.length).toBeGreaterThanOrEqual(10);
  for (const r of rows) {
    expect({ name: r.name, triggers: r.triggers }).toEqual({
      name: r.name,
      triggers: ['events_no_truncate:A', 'events_no_update_delete:A'],
    });
    expect(r.held).toEqual(expect.arrayContaining(['INSERT', 'SELECT']));
    for (const p of ['UPDATE', 'DELETE', 'TRUNCATE'])
      expect({ name: r.name, held: r.held }).not.toEqual({ name: r.name, held: expect.arrayContaining([p]) });
  }
}

beforeAll(async () => {
  server = await startTestServer({ sweepIntervalMs: 0 });
  api = client(server.url);
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

describe('the events table, partitioned by month', () => {
  it('is partitioned by range of at, with this month and the next three made ahead and a default partition', async () => {
    const [key] = await sql(`
      SELECT p.partstrat AS strategy, a.attname AS column FROM pg_partitioned_table p
        JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
       WHERE p.partrelid = 'events'::regclass`);
    expect(key).toEqual({ strategy: 'r', column: 'at' });
    expect(await partitions()).toEqual(expect.arrayContaining([0, 1, 2, 3].map((n) => partitionName(monthStart(n)))));
    const [def] = await sql(
      `SELECT c.relname AS name FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partdefid WHERE p.partrelid = 'events'::regclass`,
    );
    expect(def).toEqual({ name: 'events_default' });
  });

  it('keeps a primary key on (tenant_id, seq, at): the partition key must be in it', async () => {
    const [pk] = await sql(
      `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'events'::regclass AND contype = 'p'`,
    );
    expect(pk.def).toBe('PRIMARY KEY (tenant_id, seq, at)');
  });

  it('takes an event whose month has no partition into the default partition: an append never fails for lack of one', async () => {
    const far = new Date('2099-05-10T12:00:00Z');
    await insertEvents('stray', [far]);
    expect(await partitionOf('stray', 1)).toBe('events_default');
    // That month cannot get a partition any more (its rows cannot move out of an append-only table); the others can.
    const [r] = await sql(`SELECT tollgate_events_ensure_partitions($1, $2) AS made`, [
      new Date('2099-04-01T00:00:00Z'),
      new Date('2099-07-01T00:00:00Z'),
    ]);
    expect(r.made).toBe(2);
    expect(await partitions()).toEqual(expect.arrayContaining(['events_2099_04', 'events_2099_06']));
    expect(await partitions()).not.toContain('events_2099_05');
    const [again] = await sql(`SELECT tollgate_events_ensure_partitions($1, $2) AS made`, [
      new Date('2099-04-01T00:00:00Z'),
      new Date('2099-07-01T00:00:00Z'),
    ]);
    expect(again.made).toBe(0);
  });

  it('gets its next months from the service, by the service clock, at start-up and every hour', async () => {
    const maintenance = server.app.get(EventPartitionMaintenance);
    expect(await maintenance.ensure(new Date('2031-01-15T08:00:00Z'))).toBe(4);
    expect(await partitions()).toEqual(
      expect.arrayContaining(['events_2031_01', 'events_2031_02', 'events_2031_03', 'events_2031_04']),
    );
    expect(await maintenance.ensure(new Date('2031-01-31T23:00:00Z'))).toBe(0);
  });

  it('guards every partition as the table: row trigger and TRUNCATE trigger ALWAYS on, UPDATE/DELETE/TRUNCATE revoked from the owner', async () => {
    await expectEveryPartitionGuarded();
  });

  it('refuses UPDATE, DELETE and TRUNCATE sent to a partition directly', async () => {
    const agent = await server.token('bot', ['agent'], { tenant: 'direct' });
    expect((await api.post('/v1/conversations', agent, { id: 'c1' })).status).toBe(201);
    const p = await partitionOf('direct', 1);
    expect(p).toBe(partitionName(monthStart(0)));
    await expectRefused(sql(`UPDATE ${p} SET type = 'x' WHERE tenant_id = 'direct'`));
    await expectRefused(sql(`DELETE FROM ${p} WHERE tenant_id = 'direct'`));
    await expectRefused(sql(`TRUNCATE ${p}`));
    await expectRefused(sql(`TRUNCATE events_default`));
    expect(await partitionOf('direct', 1)).toBe(p);
  });

  it('refuses to drop a partition outside a purge, or one younger than six months inside one', async () => {
    const current = partitionName(monthStart(0));
    await expectRefused(sql(`SELECT tollgate_events_drop_partition($1)`, [current]), /outside a retention purge/);
    const qr: QueryRunner = server.dataSource.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      await qr.query(`SELECT set_config('tollgate.retention_purge', 'on', true)`);
      await expectRefused(qr.query(`SELECT tollgate_events_drop_partition($1)`, [current]), /younger than six months/);
    } finally {
      if (qr.isTransactionActive) await qr.rollbackTransaction();
      await qr.release();
    }
    expect(await partitions()).toContain(current);
  });
});

describe('a time window', () => {
  const TENANT = 'prune';

  beforeAll(async () => {
    await sql(`SELECT tollgate_events_ensure_partitions($1, $2)`, [
      new Date('2025-01-01T00:00:00Z'),
      new Date('2025-07-01T00:00:00Z'),
    ]);
    await insertEvents(
      TENANT,
      ['2025-01-10', '2025-02-10', '2025-03-10', '2025-04-10', '2025-05-10'].map((d) => new Date(`${d}T10:00:00Z`)),
    );
  });

  it('is read from the partitions of its months only (EXPLAIN of the queries the service sends)', async () => {
    const week = { tenantId: TENANT, from: new Date('2025-02-08T00:00:00Z'), to: new Date('2025-02-15T00:00:00Z') };
    expect(await scanned(seqRangeQuery(week)!)).toEqual(['events_2025_02']);
    expect(await scanned(pageQuery(week, 101, { lo: 2, hi: 2 }))).toEqual(['events_2025_02']);
    const straddling = {
      tenantId: TENANT,
      from: new Date('2025-02-20T00:00:00Z'),
      to: new Date('2025-03-20T00:00:00Z'),
    };
    expect(await scanned(pageQuery(straddling, 101, { lo: 2, hi: 3 }))).toEqual(['events_2025_02', 'events_2025_03']);
    // Without a window, every month is read (each by its own index, in seq order).
    const all = await scanned(pageQuery({ tenantId: TENANT }, 101));
    expect(all).toEqual(
      expect.arrayContaining(['events_2025_01', 'events_2025_05', 'events_default', partitionName(monthStart(0))]),
    );
  });

  it('answers over HTTP with the events of its months', async () => {
    const auditor = await server.token('audrey', ['auditor'], { tenant: TENANT });
    const r = await api.get('/v1/audit/events?from=2025-02-20T00:00:00Z&to=2025-04-20T00:00:00Z', auditor);
    expect(r.status).toBe(200);
    expect(r.body.events.map((e: { seq: number }) => e.seq)).toEqual([3, 4]);
  });
});

describe('retention', () => {
  const A = 'ret-a';
  const B = 'ret-b';
  const older = monthStart(-14); // both well past six months
  const old = monthStart(-13);
  const cutOff = monthStart(-12);
  let adminA: string;
  let adminB: string;

  beforeAll(async () => {
    for (const [tenant, n] of [
      [A, 4],
      [B, 2],
    ] as const) {
      const agent = await server.token('bot', ['agent'], { tenant });
      for (let i = 0; i < n; i++)
        expect((await api.post('/v1/conversations', agent, { id: `c${i}` })).status).toBe(201);
    }
    adminA = await server.token('ann', ['admin'], { tenant: A });
    adminB = await server.token('bob', ['admin'], { tenant: B });
    await sql(`SELECT tollgate_events_ensure_partitions($1, $2)`, [older, cutOff]);
    // A's first two events in the older month alone; A's third and B's first share the old month.
    await age(A, [1, 2], new Date(older.getTime() + 86_400_000));
    await age(A, [3], new Date(old.getTime() + 86_400_000));
    await age(B, [1], new Date(old.getTime() + 2 * 86_400_000));
    expect(await partitionOf(A, 1)).toBe(partitionName(older));
    expect(await partitionOf(B, 1)).toBe(partitionName(old));
  });

  it('drops a month that held only the purged events, deletes the rows of a month shared with another tenant, and the rest verifies', async () => {
    const r = await api.post('/v1/audit/purge', adminA, { before: cutOff.toISOString(), reason: 'retention' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ purgedCount: 3, firstPurgedSeq: 1, lastPurgedSeq: 3 });
    expect(await partitions()).not.toContain(partitionName(older));
    expect(await partitions()).toContain(partitionName(old));
    expect(await sql(`SELECT seq FROM events WHERE tenant_id = $1 ORDER BY seq`, [A])).toEqual([
      { seq: '4' },
      { seq: '5' },
    ]);
    expect(await partitionOf(B, 1)).toBe(partitionName(old));
    const auditor = await server.token('audrey', ['auditor'], { tenant: A });
    expect((await api.get('/v1/audit/verify', auditor)).body).toEqual({ ok: true, checked: 2 });
  });

  it('drops the shared month once the last tenant in it purges', async () => {
    const r = await api.post('/v1/audit/purge', adminB, { before: cutOff.toISOString(), reason: 'retention' });
    expect(r.body).toMatchObject({ purgedCount: 1, firstPurgedSeq: 1, lastPurgedSeq: 1 });
    expect(await partitions()).not.toContain(partitionName(old));
    expect(await sql(`SELECT seq FROM events WHERE tenant_id = $1 ORDER BY seq`, [B])).toEqual([
      { seq: '2' },
      { seq: '3' },
    ]);
  });
});

describe('the migration', () => {
  it('converts a table that holds events, every row into its month, and back (down), keeping the chain', async () => {
    const snapshot = () =>
      sql(
        `SELECT tenant_id, seq, id, type, at, recorded_at, actor, data, prev_hash, hash FROM events ORDER BY tenant_id, seq, at`,
      );
    const before = await snapshot();
    expect(before.length).toBeGreaterThan(10);
    const migration = new EventsPartitioned1764700000000();
    const qr: QueryRunner = server.dataSource.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      await migration.down(qr);
      expect(await qr.query(`SELECT relkind FROM pg_class WHERE oid = 'events'::regclass`)).toEqual([{ relkind: 'r' }]);
      expect(
        await qr.query(
          `SELECT tenant_id, seq, id, type, at, recorded_at, actor, data, prev_hash, hash FROM events ORDER BY tenant_id, seq, at`,
        ),
      ).toEqual(before);
      await migration.up(qr);
      await qr.commitTransaction();
    } finally {
      if (qr.isTransactionActive) await qr.rollbackTransaction();
      await qr.release();
    }
    expect(await sql(`SELECT relkind FROM pg_class WHERE oid = 'events'::regclass`)).toEqual([{ relkind: 'p' }]);
    expect(await snapshot()).toEqual(before);
    // A month per month of events: the stray event of 2099-05 has its own partition now.
    expect(await partitions()).toEqual(
      expect.arrayContaining(['events_2025_01', 'events_2025_05', 'events_2099_05', partitionName(monthStart(3))]),
    );
    expect(await partitionOf('stray', 1)).toBe('events_2099_05');
    expect(await sql(`SELECT count(*)::int AS n FROM events_default`)).toEqual([{ n: 0 }]);
    await expectEveryPartitionGuarded();
    const auditor = await server.token('audrey', ['auditor'], { tenant: 'ret-a' });
    expect((await api.get('/v1/audit/verify', auditor)).body).toEqual({ ok: true, checked: 2 });
  });
});

describe('seq per tenant', () => {
  it('is no longer refused by the table when repeated in another month (the key holds at), but verify reports it', async () => {
    const TENANT = 'dup';
    const agent = await server.token('bot', ['agent'], { tenant: TENANT });
    for (const id of ['c1', 'c2']) expect((await api.post('/v1/conversations', agent, { id })).status).toBe(201);
    const auditor = await server.token('audrey', ['auditor'], { tenant: TENANT });
    expect((await api.get('/v1/audit/verify', auditor)).body).toEqual({ ok: true, checked: 2 });
    await sql(
      `INSERT INTO events SELECT tenant_id, seq, gen_random_uuid(), type, at - interval '40 days', recorded_at, instance_id, conversation_id, tool_call_id,
                 tool_name, actor, data, prev_hash, hash, correlation_id FROM events WHERE tenant_id = $1 AND seq = 2`,
      [TENANT],
    );
    expect((await api.get('/v1/audit/verify', auditor)).body).toMatchObject({ ok: false });
  });
});

// The production layout (docs/OPERATIONS.md): migrations as an owner role, the service as a role that owns nothing.
// PostgreSQL only: PGlite has a single superuser.
const onPostgres = process.env.DATABASE_URL ? describe : describe.skip;
onPostgres('a service role that does not own events', () => {
  it('appends, and still makes the next months (as the owner, through the SECURITY DEFINER function)', async () => {
    const admin = new Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    const suffix = randomBytes(5).toString('hex');
    const owner = `tollgate_owner_${suffix}`;
    const app = `tollgate_app_${suffix}`;
    const db = `tollgate_roles_${suffix}`;
    const urlOf = (role: string) => {
      const url = new URL(process.env.DATABASE_URL!);
      url.username = role;
      url.password = '';
      url.pathname = `/${db}`;
      return url.toString();
    };
    const config = (role: string, migrate: boolean) => ({
      ...loadConfig({}),
      host: '127.0.0.1',
      port: 0,
      grpcPort: undefined,
      databaseUrl: urlOf(role),
      auth: { secret: TEST_SECRET, devSecret: false },
      sweepIntervalMs: 0,
      migrate,
    });
    let running: RunningServer | undefined;
    try {
      await admin.query(`CREATE ROLE ${owner} LOGIN NOSUPERUSER`);
      await admin.query(`CREATE ROLE ${app} LOGIN NOSUPERUSER`);
      await admin.query(`CREATE DATABASE ${db} OWNER ${owner}`);
      running = await startServer(config(owner, true), { logLevels: false });
      await running.dataSource.query(`GRANT USAGE ON SCHEMA public TO ${app}`);
      await running.dataSource.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${app}`);
      await running.dataSource.query(`REVOKE UPDATE, DELETE, TRUNCATE ON events FROM ${app}`);
      await running.close();
      running = await startServer(config(app, false), { logLevels: false });
      const agent = await mintToken(TEST_SECRET, { sub: 'bot', roles: ['agent'] });
      expect((await client(running.url).post('/v1/conversations', agent, { id: 'c1' })).status).toBe(201);
      expect(await running.app.get(EventPartitionMaintenance).ensure(new Date('2031-01-15T08:00:00Z'))).toBe(4);
      const owners = await running.dataSource.query(
        `SELECT DISTINCT pg_get_userbyid(c.relowner) AS owner FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass`,
      );
      expect(owners).toEqual([{ owner }]);
      await expect(running.dataSource.query(`DELETE FROM events`)).rejects.toThrow(/permission denied/);
    } finally {
      await running?.close();
      await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      await admin.query(`DROP ROLE IF EXISTS ${app}`);
      await admin.query(`DROP ROLE IF EXISTS ${owner}`);
      await admin.end();
    }
  }, 60_000);
});
