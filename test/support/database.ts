import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';

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

export async function freshDatabase(): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-test-'));
  const base = process.env.DATABASE_URL;
  if (!base) return { dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
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

async function admin(url: string, sql: string): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}
