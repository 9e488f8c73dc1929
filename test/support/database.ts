import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { openDataSource } from '../../src/infrastructure/database/data-source';
import { startEmbeddedPostgres } from '../../src/infrastructure/database/embedded-postgres';

/**
 * A fresh, empty database for one test file: a new database on the PostgreSQL of DATABASE_URL when
 * it is set, else a new embedded (PGlite) data dir. Never a mock: the same migrations run on it.
 */
export interface TestDatabase {
  /** Set for PostgreSQL; unset means embedded PGlite in `dataDir`. */
  url?: string;
  dataDir: string;
  drop(): Promise<void>;
}

export async function freshDatabase(opts: { empty?: boolean } = {}): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-test-'));
  const base = process.env.DATABASE_URL;
  if (!base) {
    // A copy of a data dir the same migrations already ran on: migrating a fresh PGlite costs ~9 s of CPU per
    // test server, which on a busy machine outlasted the hooks' timeout. `empty` is for tests of migrating.
    if (!opts.empty) cpSync(await migratedTemplate(), join(dataDir, 'pgdata'), { recursive: true });
    return { dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const name = `tollgate_t_${randomBytes(6).toString('hex')}`;
  await admin(base, `CREATE DATABASE ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dataDir,
    async drop() {
      rmSync(dataDir, { recursive: true, force: true });
      await admin(base, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * Makes `dataDir` an embedded data dir with every migration applied (a copy of the template), whatever DATABASE_URL
 * says: for a `tollgate serve` child whose test is about what happens after the database is up, so it does not pay
 * for migrating a new one.
 */
export async function migratedDataDir(dataDir: string): Promise<string> {
  cpSync(await migratedTemplate(), join(dataDir, 'pgdata'), { recursive: true });
  return dataDir;
}

async function admin(url: string, sql: string): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/**
 * An embedded data dir with every migration applied, made once per set of migrations (and PGlite version) and
 * kept in the temp dir: named by a hash of them, so a changed migration makes a new one. Built aside and renamed
 * into place, so a half-made template is never used.
 */
export async function migratedTemplate(): Promise<string> {
  const root = join(__dirname, '..', '..');
  const hash = createHash('sha256');
  const migrations = join(root, 'migrations');
  for (const f of readdirSync(migrations).sort()) hash.update(f).update(readFileSync(join(migrations, f)));
  hash.update(readFileSync(join(root, 'node_modules', '@electric-sql', 'pglite', 'package.json')));
  const dir = join(tmpdir(), `tollgate-pglite-template-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(dir)) return dir;
  const building = mkdtempSync(join(tmpdir(), 'tollgate-pglite-building-'));
  const pg = await startEmbeddedPostgres(building);
  try {
    const ds = await openDataSource({ embedded: pg }, true);
    await ds.destroy();
  } finally {
    await pg.stop();
  }
  try {
    renameSync(join(building, 'pgdata'), dir);
  } catch {
    // Another run made it first: theirs is as good.
  }
  rmSync(building, { recursive: true, force: true });
  return dir;
}
