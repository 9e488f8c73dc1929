import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { EmbeddedPostgres, startEmbeddedPostgres } from './embedded-postgres';

describe('the embedded database', () => {
  let dir: string;
  let pg: EmbeddedPostgres;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-embedded-'));
    pg = await startEmbeddedPostgres(dir);
  });

  afterAll(async () => {
    await pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs with a 16 MB buffer cache (not 128 MB, which its WebAssembly memory would hold), set at start only', async () => {
    const client = new Client({ host: pg.host, port: pg.port, user: 'postgres', database: 'postgres' });
    await client.connect();
    try {
      expect((await client.query('show shared_buffers')).rows[0].shared_buffers).toBe('16MB');
    } finally {
      await client.end();
    }
    // The data dir's own configuration is left as initdb wrote it.
    expect(readFileSync(join(dir, 'pgdata', 'postgresql.conf'), 'utf8')).toMatch(/^shared_buffers = 128MB/m);
  });
});
