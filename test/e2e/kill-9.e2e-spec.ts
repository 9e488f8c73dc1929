import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintToken } from '../../src/infrastructure/auth/jwt-verifier';
import { freshDatabase, TestDatabase } from '../support/database';
import { client } from '../support/http';
import { exited, ServerProcess, spawnServer } from '../support/process';

const SECRET = 'kill-9-test-secret-long-enough-for-hs256-000000';

/**
 * kill -9 under load: every proposal that was answered 2xx is in the database after a restart, and the
 * audit chain verifies. Run against PostgreSQL when DATABASE_URL is set, else the embedded PGlite.
 */
describe('an instance killed with SIGKILL under load', () => {
  let db: TestDatabase | undefined;
  let dataDir: string;
  let env: Record<string, string | undefined>;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'tollgate-kill9-'));
    if (process.env.DATABASE_URL) db = await freshDatabase();
    env = { DATABASE_URL: db?.url, TOLLGATE_DATA_DIR: dataDir, TOLLGATE_JWT_SECRET: SECRET, TOLLGATE_RATE_LIMIT: '0' };
  });

  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('loses no answered proposal and leaves an intact audit chain', async () => {
    server = await spawnServer(env);
    const agent = await mintToken(SECRET, { sub: 'bot', roles: ['agent'] });
    const api = client(server.url);
    const CONVERSATIONS = 20;
    for (let i = 0; i < CONVERSATIONS; i++)
      expect((await api.post('/v1/conversations', agent, { id: `k${i}` })).status).toBe(201);

    // Eight clients propose as fast as they can; the process is killed mid-stream.
    const answered: string[] = [];
    let failures = 0;
    let stop = false;
    const worker = async (w: number) => {
      for (let n = 0; !stop; n++) {
        try {
          const r = await api.post(`/v1/conversations/k${(w * 7 + n) % CONVERSATIONS}/tool-calls`, agent, {
            toolCalls: [{ toolName: 'read_thing', arguments: { w, n }, annotations: { isReadOnly: true } }],
          });
          if (r.status === 201) answered.push(r.body.toolCalls[0].id);
        } catch {
          failures += 1; // the connection died with the process: not answered, so nothing is promised
          return;
        }
      }
    };
    const workers = Array.from({ length: 8 }, (_, w) => worker(w));
    while (answered.length < 150) await new Promise((r) => setTimeout(r, 20));
    server.child.kill('SIGKILL');
    await exited(server.child);
    stop = true;
    await Promise.all(workers);
    expect(answered.length).toBeGreaterThanOrEqual(150);

    server = await spawnServer(env);
    const again = client(server.url);
    const auditor = await mintToken(SECRET, { sub: 'audrey', roles: ['auditor'] });
    for (const id of answered) {
      const r = await again.get(`/v1/tool-calls/${id}`, agent);
      expect({ id, status: r.status, state: r.body.status }).toEqual({ id, status: 200, state: 'approved' });
    }
    expect((await again.get('/v1/audit/verify', auditor)).body).toMatchObject({ ok: true });
    // The service keeps working where it stopped.
    expect(
      (
        await again.post('/v1/conversations/k0/tool-calls', agent, {
          toolCalls: [{ toolName: 'read_thing', arguments: {}, annotations: { isReadOnly: true } }],
        })
      ).status,
    ).toBe(201);
    server.child.kill('SIGTERM');
    expect(await exited(server.child)).toBe(0);
  }, 180_000);
});
