import { ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The `tollgate` bin (built by `npm install` / `npm test`). */
export const BIN = join(__dirname, '..', '..', 'bin', 'tollgate.js');

/**
 * Ports handed out, across the test workers that run beside each other: the kernel may give a just-closed port
 * again to the next `listen(0)`, in this process or another. One file per port, made with O_EXCL; a reservation
 * lapses after ten minutes (runs that ended, or were killed, leave theirs behind).
 */
const RESERVATIONS = join(tmpdir(), 'tollgate-test-ports');
const LAPSE_MS = 10 * 60_000;

function reserve(port: number): boolean {
  mkdirSync(RESERVATIONS, { recursive: true });
  const file = join(RESERVATIONS, String(port));
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch {
    try {
      if (Date.now() - statSync(file).mtimeMs < LAPSE_MS) return false;
      writeFileSync(file, String(process.pid)); // lapsed: ours now
      return true;
    } catch {
      return false;
    }
  }
}

export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
      s.on('error', reject);
    });
    if (reserve(port)) return port;
  }
}

/**
 * The environment of a child server: only what the test sets, nothing inherited that changes auth, the
 * database, the logs or tracing.
 */
export function serverEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env };
  for (const k of [
    'DATABASE_URL',
    'TOLLGATE_JWT_SECRET',
    'TOLLGATE_JWKS_URL',
    'TOLLGATE_DATA_DIR',
    'PORT',
    'HOST',
    'LOG_LEVEL',
    'TOLLGATE_LOG_LEVEL',
    'TOLLGATE_LOG_FORMAT',
  ])
    delete e[k];
  for (const k of Object.keys(e)) if (k.startsWith('OTEL_')) delete e[k];
  e.TOLLGATE_GRPC_PORT = '0'; // a free port: 8081, the default, may be held by another server
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) e[k] = v;
  return e;
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** stdout and stderr together, as they came. */
  output(): string;
  stdout(): string;
  stderr(): string;
}

/** Starts `tollgate serve` as its own process and waits until /health/ready answers. */
export async function spawnServer(env: Record<string, string | undefined>): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: serverEnv({ ...env, PORT: String(port) }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => ((out += d), (stdout += d)));
  child.stderr!.on('data', (d) => ((out += d), (stderr += d)));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${out}`);
    try {
      if ((await fetch(`${url}/health/ready`)).ok)
        return { child, url, output: () => out, stdout: () => stdout, stderr: () => stderr };
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not become ready:\n${out}`);
}

export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null
      ? resolve(child.exitCode)
      : child.once('exit', (code) => resolve(code)),
  );
}
