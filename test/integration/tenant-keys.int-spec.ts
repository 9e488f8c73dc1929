/**
 * Distribution by tenant stays possible (issue 14, "Past one machine"): read from the catalog of the migrated
 * schema, not from a list of today's tables and indexes, so a migration that adds a table or an index breaking
 * one of these rules fails here.
 * - a table with a `tenant_id` column has it NOT NULL and has a primary key;
 * - every unique index (primary keys and unique constraints included) and every exclusion constraint leads with
 *   `tenant_id`: nothing is unique across tenants;
 * - a foreign key pairs `tenant_id` with `tenant_id`: no reference crosses tenants. A tenant table may refer to a
 *   global table; a global table may not refer to a tenant table;
 * - a table without `tenant_id` is on the short list of global tables below, with the reason it is global.
 * Partitions are tables too and are checked the same way.
 */
import { QueryRunner } from 'typeorm';
import { startTestServer, TestServer } from '../support/server';

/** Instance-wide tables: replicated to every node (a Citus reference table) or local to the instance. */
const GLOBAL_TABLES: Record<string, string> = {
  signing_keys: 'the keys that sign audit checkpoints and receipts belong to the instance, not to a tenant',
  vapid_keys:
    'the key pair that signs Web Push requests (VAPID) belongs to the instance: push services know it by its public key',
  tollgate_migrations: "TypeORM's record of the migrations run on this database",
};

type Query = (sql: string) => Promise<any[]>;

interface Table {
  oid: number;
  name: string;
  tenant_att: number | null;
  tenant_not_null: boolean | null;
}

/** Every rule broken by the schema as the catalog describes it, as sentences; empty when all hold. */
async function violations(query: Query): Promise<string[]> {
  const out: string[] = [];
  const tables: Table[] = await query(`
    SELECT c.oid::int AS oid, c.relname AS name, a.attnum::int AS tenant_att, a.attnotnull AS tenant_not_null
      FROM pg_class c
      LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
     WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')`);
  const byOid = new Map(tables.map((t) => [t.oid, t]));
  // Only tables of this schema: catalogs and extensions' tables elsewhere are not ours to distribute.
  const constraints: Array<{
    name: string;
    type: string;
    rel: number;
    frel: number;
    key: number[];
    fkey: number[] | null;
  }> = await query(`
    SELECT conname AS name, contype AS type, conrelid::int AS rel, confrelid::int AS frel, conkey AS key, confkey AS fkey
      FROM pg_constraint
     WHERE connamespace = current_schema()::regnamespace AND contype IN ('p', 'f', 'x')`);
  const uniqueIndexes: Array<{ name: string; rel: number; first: number }> = await query(`
    SELECT ic.relname AS name, i.indrelid::int AS rel, i.indkey[0]::int AS first
      FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
     WHERE ic.relnamespace = current_schema()::regnamespace AND i.indisunique`);

  for (const t of tables) {
    if (t.tenant_att === null) {
      if (!(t.name in GLOBAL_TABLES))
        out.push(`table ${t.name} has no tenant_id and is not on the list of global tables`);
      continue;
    }
    if (!t.tenant_not_null) out.push(`table ${t.name}: tenant_id may be null`);
    if (!constraints.some((c) => c.type === 'p' && c.rel === t.oid)) out.push(`table ${t.name} has no primary key`);
  }
  for (const ix of uniqueIndexes) {
    const t = byOid.get(ix.rel);
    // A unique index on a global table may be anything; on a tenant table it must start with tenant_id (0: an expression).
    if (t && t.tenant_att !== null && ix.first !== t.tenant_att)
      out.push(`unique index ${ix.name} on ${t.name} does not lead with tenant_id`);
  }
  for (const c of constraints) {
    const t = byOid.get(c.rel);
    if (!t) continue;
    if (c.type === 'x' && t.tenant_att !== null && c.key[0] !== t.tenant_att)
      out.push(`exclusion constraint ${c.name} on ${t.name} does not lead with tenant_id`);
    if (c.type !== 'f') continue;
    const target = byOid.get(c.frel);
    const targetName = target?.name ?? `relation ${c.frel}`;
    if (target && target.tenant_att === null) {
      // A reference to a global table crosses no tenant: that table is on every node.
      continue;
    }
    if (t.tenant_att === null) {
      out.push(`foreign key ${c.name} from global table ${t.name} refers to tenant table ${targetName}`);
      continue;
    }
    const paired = c.key.some((k, i) => k === t.tenant_att && c.fkey?.[i] === target?.tenant_att);
    if (!paired)
      out.push(`foreign key ${c.name} from ${t.name} to ${targetName} does not pair tenant_id with tenant_id`);
  }
  return out;
}

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ sweepIntervalMs: 0 });
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

describe('the migrated schema, read from pg_catalog', () => {
  it('keys every tenant table by tenant: primary keys and unique indexes lead with tenant_id, foreign keys stay within a tenant', async () => {
    expect(await violations((sql) => server.dataSource.query(sql))).toEqual([]);
  });

  it('has tenant_id on every table but the listed global ones, and each listed one exists without it', async () => {
    const rows: Array<{ name: string; has_tenant: boolean }> = await server.dataSource.query(`
      SELECT c.relname AS name, EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped) AS has_tenant
        FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')`);
    const global = rows
      .filter((r) => !r.has_tenant)
      .map((r) => r.name)
      .sort();
    // A stale entry would let a future table of that name through unchecked.
    expect(global).toEqual(Object.keys(GLOBAL_TABLES).sort());
    // Several tenant tables exist, so the checks above really looked at something.
    expect(rows.filter((r) => r.has_tenant).map((r) => r.name)).toEqual(
      expect.arrayContaining(['conversations', 'tool_calls', 'events', 'audit_heads']),
    );
  });

  it('fails for a table, an index or a foreign key that would cross tenants (checked inside a transaction that is rolled back)', async () => {
    const qr: QueryRunner = server.dataSource.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      await qr.query(`CREATE TABLE zz_unlisted (id text PRIMARY KEY)`);
      await qr.query(`CREATE TABLE zz_no_pk (tenant_id text NOT NULL, id text)`);
      await qr.query(`CREATE TABLE zz_nullable (tenant_id text, id text NOT NULL, PRIMARY KEY (id))`);
      await qr.query(`CREATE UNIQUE INDEX zz_tool_names ON tools (name)`);
      await qr.query(`CREATE UNIQUE INDEX zz_events_by_id ON events (id, tenant_id, seq, at)`);
      await qr.query(`
        CREATE TABLE zz_links (
          tenant_id text NOT NULL, id text NOT NULL, other_tenant text NOT NULL, conversation_id text NOT NULL,
          PRIMARY KEY (tenant_id, id),
          CONSTRAINT zz_links_cross FOREIGN KEY (other_tenant, conversation_id) REFERENCES conversations (tenant_id, id))`);
      await qr.query(`ALTER TABLE signing_keys ADD COLUMN conversation_tenant text, ADD COLUMN conversation_id text`);
      await qr.query(
        `ALTER TABLE signing_keys ADD CONSTRAINT zz_global_to_tenant FOREIGN KEY (conversation_tenant, conversation_id) REFERENCES conversations (tenant_id, id)`,
      );
      const found = await violations((sql) => qr.query(sql));
      expect(found).toEqual(
        expect.arrayContaining([
          'table zz_unlisted has no tenant_id and is not on the list of global tables',
          'table zz_no_pk has no primary key',
          'table zz_nullable: tenant_id may be null',
          'unique index zz_nullable_pkey on zz_nullable does not lead with tenant_id',
          'unique index zz_tool_names on tools does not lead with tenant_id',
          'unique index zz_events_by_id on events does not lead with tenant_id',
          'foreign key zz_links_cross from zz_links to conversations does not pair tenant_id with tenant_id',
          'foreign key zz_global_to_tenant from global table signing_keys refers to tenant table conversations',
        ]),
      );
      expect(found).toHaveLength(new Set(found).size);
    } finally {
      if (qr.isTransactionActive) await qr.rollbackTransaction();
      await qr.release();
    }
    expect(await violations((sql) => server.dataSource.query(sql))).toEqual([]);
  });
});
