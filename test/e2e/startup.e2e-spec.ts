import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migratedDataDir, migratedTemplate } from '../support/database';
import { BIN, freePort, serverEnv } from '../support/process';
import { TEST_SECRET } from '../support/server';

/**
 * What an operator sees when `tollgate serve` cannot start. Something they fix with a setting (a busy port,
 * a data dir in use or not writable, a database out of reach, a bad value) is one line on stderr naming what
 * to set, and exit 2; a real crash stays exit 1 with its stack.
 */

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `tollgate serve` until it exits (it must: every case here fails), optionally as another user. */
function serve(env: Record<string, string | undefined>, uid?: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve'], {
      env: serverEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(uid !== undefined ? { uid, gid: uid } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Exit 2 and exactly one line on stderr, no stack. */
function expectOneLine(r: Run, pattern: RegExp): void {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: expect.stringMatching(pattern) });
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(/^tollgate: /);
  expect(`${r.stdout}${r.stderr}`).not.toMatch(/\n\s+at /);
}

describe('tollgate serve when it cannot start', () => {
  // The listeners and the policy file come after the database: those cases start on an already migrated data dir
  // (a new one costs seconds of migrations), so what is tested is only what comes after. The template they copy is
  // made here, once, if no earlier run left it in the temp dir.
  beforeAll(() => migratedTemplate(), 180_000);
  let scratch: string;
  beforeEach(() => (scratch = mkdtempSync(join(tmpdir(), 'tollgate-startup-'))));
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  it('names PORT when the port is in use', async () => {
    const port = await freePort();
    const holder: Server = createServer();
    await new Promise<void>((r) => holder.listen(port, '127.0.0.1', r));
    try {
      const r = await serve({ PORT: String(port), TOLLGATE_DATA_DIR: await migratedDataDir(scratch) });
      expectOneLine(r, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is in use; set PORT`));
    } finally {
      await new Promise<void>((r) => holder.close(() => r()));
    }
  }, 60_000);

  it('names HOST when it is not an address of this machine', async () => {
    // 192.0.2.0/24 is TEST-NET-1: documentation only, never assigned to a machine.
    const r = await serve({
      HOST: '192.0.2.10',
      PORT: String(await freePort()),
      TOLLGATE_DATA_DIR: await migratedDataDir(scratch),
    });
    expectOneLine(r, /HOST 192\.0\.2\.10 is not an address of this machine; set HOST/);
  }, 60_000);

  it('names TOLLGATE_DATA_DIR when another live process holds the data dir', async () => {
    // The lock of a live process: this test's own.
    writeFileSync(join(scratch, 'pglite.lock'), String(process.pid));
    const r = await serve({ PORT: String(await freePort()), TOLLGATE_DATA_DIR: scratch });
    expectOneLine(r, new RegExp(`the data dir ${scratch} is in use by process ${process.pid}.*TOLLGATE_DATA_DIR`));
  }, 60_000);

  it('names TOLLGATE_DATA_DIR when the data dir cannot be made', async () => {
    const file = join(scratch, 'a-file');
    writeFileSync(file, 'in the way');
    const r = await serve({ PORT: String(await freePort()), TOLLGATE_DATA_DIR: join(file, 'data') });
    expectOneLine(r, /the data dir .*a-file\/data is not a directory .*; set TOLLGATE_DATA_DIR/);
  }, 60_000);

  it('names TOLLGATE_DATA_DIR when this user may not write there', async () => {
    const dir = join(scratch, 'read-only');
    mkdirSync(dir);
    chmodSync(scratch, 0o755);
    chmodSync(dir, 0o555);
    // root writes anywhere: run the server as nobody then, as a service account would run.
    const asNobody = process.getuid?.() === 0 ? 65534 : undefined;
    const r = await serve({ PORT: String(await freePort()), TOLLGATE_DATA_DIR: join(dir, 'data') }, asNobody);
    expectOneLine(r, /the data dir .*read-only\/data is not writable by this user \(EACCES\); set TOLLGATE_DATA_DIR/);
  }, 60_000);

  it('names DATABASE_URL when nothing answers there, and never prints the password', async () => {
    const port = await freePort();
    const r = await serve({
      DATABASE_URL: `postgres://tollgate:hunter2-in-the-url@127.0.0.1:${port}/tollgate`,
      TOLLGATE_JWT_SECRET: TEST_SECRET,
      PORT: String(await freePort()),
      TOLLGATE_DATA_DIR: scratch,
    });
    expectOneLine(
      r,
      new RegExp(
        `cannot use the database 127\\.0\\.0\\.1:${port}/tollgate as tollgate: nothing accepts connections there; check DATABASE_URL`,
      ),
    );
    expect(r.stderr).not.toContain('hunter2');
  }, 60_000);

  it('names DATABASE_URL when it is not a URL', async () => {
    const r = await serve({
      DATABASE_URL: 'db.internal/tollgate',
      TOLLGATE_JWT_SECRET: TEST_SECRET,
      PORT: String(await freePort()),
      TOLLGATE_DATA_DIR: scratch,
    });
    expectOneLine(r, /DATABASE_URL is not a URL such as postgres:/);
  }, 60_000);

  (process.env.DATABASE_URL ? it : it.skip)(
    'says so when the database does not exist on a PostgreSQL that answers',
    async () => {
      const url = new URL(process.env.DATABASE_URL!);
      url.pathname = '/tollgate_no_such_database';
      const r = await serve({
        DATABASE_URL: url.toString(),
        TOLLGATE_JWT_SECRET: TEST_SECRET,
        PORT: String(await freePort()),
        TOLLGATE_DATA_DIR: scratch,
      });
      expectOneLine(
        r,
        /cannot use the database .*\/tollgate_no_such_database.*: the database does not exist; check DATABASE_URL/,
      );
    },
    60_000,
  );

  it.each([
    [{ PORT: 'eighty' }, /PORT must be a whole number, got "eighty"/],
    [{ TOLLGATE_LOG_FORMAT: 'xml' }, /TOLLGATE_LOG_FORMAT must be json or pretty/],
    [{ LOG_LEVEL: 'chatty' }, /LOG_LEVEL must be one of/],
  ])(
    'names a setting with a bad value: %o',
    async (bad, pattern) => {
      const r = await serve({ PORT: String(await freePort()), TOLLGATE_DATA_DIR: scratch, ...bad });
      expectOneLine(r, pattern);
    },
    60_000,
  );

  it('names TOLLGATE_POLICY_FILE when the policy in it is not valid', async () => {
    const file = join(scratch, 'policy.yaml');
    writeFileSync(file, 'rules:\n  - match: delete_*\n    level: sometimes\n');
    const r = await serve({
      PORT: String(await freePort()),
      TOLLGATE_DATA_DIR: await migratedDataDir(join(scratch, 'data')),
      TOLLGATE_POLICY_FILE: file,
    });
    expectOneLine(r, /TOLLGATE_POLICY_FILE .*policy\.yaml is not a valid policy: rules\[0\]\.level/);
  }, 60_000);

  it('exits 1 with the stack on a real crash (a data dir whose database files are damaged)', async () => {
    mkdirSync(join(scratch, 'pgdata'));
    writeFileSync(join(scratch, 'pgdata', 'PG_VERSION'), '99\n');
    const r = await serve({ PORT: String(await freePort()), TOLLGATE_DATA_DIR: scratch });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^tollgate: .*\n\s+at /);
  }, 60_000);
});
