import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ConfigError } from '../config/config';

export interface EmbeddedPostgres {
  /** pg connection settings: a Unix socket directory and port. */
  host: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * PostgreSQL's defaults are for a server of its own: a 128 MB buffer cache that PGlite's WebAssembly memory
 * commits in full (about 130 MB of the process's RSS). The embedded database is small and its files stay in the
 * OS's page cache, so 16 MB does. Passed at start, not written to the data dir's postgresql.conf.
 */
const EMBEDDED_SETTINGS = ['-c', 'shared_buffers=16MB'];

/**
 * Real PostgreSQL in-process (PGlite), served over the wire protocol by pglite-socket so the
 * ordinary `pg` driver and TypeORM work unchanged. PGlite runs one query at a time: use pool size 1.
 */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  mkdirSync(dataDir, { recursive: true });
  const release = takeLock(join(dataDir, 'pglite.lock'));
  const db = await PGlite.create(join(dataDir, 'pgdata'), {
    startParams: [...PGlite.defaultStartParams, ...EMBEDDED_SETTINGS],
  });
  // A private socket directory: short path (Unix socket limit) and nothing else can be listening there.
  const socketDir = mkdtempSync(join(tmpdir(), 'tollgate-pg-'));
  const server = new PGLiteSocketServer({ db, path: join(socketDir, '.s.PGSQL.5432'), maxConnections: 4 });
  await server.start();
  return {
    host: socketDir,
    port: 5432,
    async stop() {
      await server.stop().catch(() => undefined);
      await db.close().catch(() => undefined);
      rmSync(socketDir, { recursive: true, force: true });
      release();
    },
  };
}

/** One process per data dir: PGlite has no locking of its own. A lock left by a killed process is taken over. */
function takeLock(path: string): () => void {
  if (existsSync(path)) {
    const pid = Number(readFileSync(path, 'utf8'));
    if (pid && pid !== process.pid && isAlive(pid)) {
      throw new ConfigError(
        `the data dir ${dirname(path)} is in use by process ${pid} (another tollgate?); stop it, or set TOLLGATE_DATA_DIR to another directory`,
      );
    }
  }
  writeFileSync(path, String(process.pid));
  return () => rmSync(path, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
