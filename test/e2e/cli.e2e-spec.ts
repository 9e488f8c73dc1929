import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabase, TestDatabase } from '../support/database';
import { freePort } from '../support/process';

/** The `tollgate` bin as an operator runs it (built by `npm install` / `npm test`). */
const BIN = join(__dirname, '..', '..', 'bin', 'tollgate.js');

function env(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, TOLLGATE_GRPC_PORT: '0', ...extra }; // parallel servers must not share gRPC's 8081
  for (const k of ['DATABASE_URL', 'TOLLGATE_JWT_SECRET', 'TOLLGATE_JWKS_URL']) if (!(k in extra)) delete e[k];
  for (const [k, v] of Object.entries(extra)) if (v === undefined) delete e[k];
  return e;
}

async function waitReady(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/health/ready`)).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('server did not become ready');
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  );
}

describe('the tollgate command', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'tollgate-cli-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('refuses to start on DATABASE_URL without authentication, saying what to set', () => {
    const r = spawnSync(process.execPath, [BIN, 'serve'], {
      env: env({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', TOLLGATE_DATA_DIR: dataDir }),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/TOLLGATE_JWT_SECRET/);
  });

  it('explains how to get a secret when a token is asked for before any exists', () => {
    const r = spawnSync(process.execPath, [BIN, 'token', '--sub', 'alice', '--role', 'approver'], {
      env: env({ TOLLGATE_DATA_DIR: dataDir }),
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/npm start|TOLLGATE_JWT_SECRET/);
  });

  it('serves, mints working tokens with the dev secret, and stops cleanly on SIGTERM', async () => {
    let db: TestDatabase | undefined;
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // Embedded mode makes the dev secret; with DATABASE_URL the test brings its own secret.
    const extra: Record<string, string | undefined> = {
      PORT: String(port),
      TOLLGATE_DATA_DIR: dataDir,
      TOLLGATE_SWEEP_INTERVAL_MS: '200',
    };
    if (process.env.DATABASE_URL) {
      db = await freshDatabase();
      Object.assign(extra, {
        DATABASE_URL: db.url,
        TOLLGATE_JWT_SECRET: 'cli-test-secret-long-enough-for-hs256-xxxxxxxx',
      });
    }
    const child = spawn(process.execPath, [BIN, 'serve'], { env: env(extra), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    try {
      await waitReady(url, child);
      if (!db) expect(out).toContain('npx tollgate token --sub alice --role approver');

      const token = spawnSync(process.execPath, [BIN, 'token', '--sub', 'bot', '--role', 'agent', '--ttl', '5m'], {
        env: env(extra),
        encoding: 'utf8',
      });
      expect(token.status).toBe(0);
      const res = await fetch(`${url}/v1/conversations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token.stdout.trim()}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'from the cli test' }),
      });
      expect(res.status).toBe(201);

      // A long-poll in flight is answered, not cut, when the server stops.
      const approver = spawnSync(process.execPath, [BIN, 'token', '--sub', 'ann', '--role', 'admin'], {
        env: env(extra),
        encoding: 'utf8',
      }).stdout.trim();
      const convId = ((await res.json()) as { id: string }).id;
      const proposed = await fetch(`${url}/v1/conversations/${convId}/tool-calls`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token.stdout.trim()}`, 'content-type': 'application/json' },
        body: JSON.stringify({ toolCalls: [{ toolName: 'unknown_tool', arguments: {} }] }),
      });
      const callId = ((await proposed.json()) as { toolCalls: Array<{ id: string }> }).toolCalls[0].id;
      const poll = fetch(`${url}/v1/tool-calls/${callId}?wait=60`, {
        headers: { authorization: `Bearer ${approver}` },
      });
      await new Promise((r) => setTimeout(r, 300));

      child.kill('SIGTERM');
      const answered = await poll;
      expect(answered.status).toBe(200);
      expect(((await answered.json()) as { status: string }).status).toBe('pending');
      expect(await exited(child)).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await db?.drop();
    }
  }, 120_000);
});
