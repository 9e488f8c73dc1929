import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
export const PYTHON_CLIENT = join(ROOT, 'clients', 'python');
const CACHE = join(ROOT, 'node_modules', '.cache', 'tollgate-python');

/**
 * The Python that runs the client's tests: TOLLGATE_PYTHON (a virtualenv's python, as .ci/run makes), else a
 * virtualenv kept in node_modules/.cache, made (and remade when the client's pyproject.toml or the setup script
 * change) by clients/python/scripts/test-env.sh. Undefined only when there is no python3 at all.
 */
export function testPython(): string | undefined {
  const given = process.env.TOLLGATE_PYTHON;
  if (given) {
    if (!existsSync(given)) throw new Error(`TOLLGATE_PYTHON=${given} does not exist`);
    return given;
  }
  if (spawnSync('python3', ['--version']).status !== 0) return undefined;
  const venv = join(CACHE, 'venv');
  const fingerprint = createHash('sha256')
    .update(readFileSync(join(PYTHON_CLIENT, 'pyproject.toml')))
    .update(readFileSync(join(PYTHON_CLIENT, 'scripts', 'test-env.sh')))
    .digest('hex');
  const marker = join(CACHE, 'fingerprint');
  const python = join(venv, 'bin', 'python');
  const fresh = existsSync(python) && existsSync(marker) && readFileSync(marker, 'utf8') === fingerprint;
  // Up to date: only the client itself is installed again (its sources may have changed).
  const args = fresh
    ? [python, '-m', 'pip', 'install', '--quiet', '--no-deps', '--force-reinstall', PYTHON_CLIENT]
    : ['bash', join(PYTHON_CLIENT, 'scripts', 'test-env.sh'), venv];
  mkdirSync(CACHE, { recursive: true });
  const r = spawnSync(args[0], args.slice(1), {
    encoding: 'utf8',
    timeout: 10 * 60_000,
    env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' },
  });
  if (r.status !== 0)
    throw new Error(`could not set up the Python test environment (${args.join(' ')}):\n${r.stdout}\n${r.stderr}`);
  if (!fresh) writeFileSync(marker, fingerprint);
  return python;
}

export interface RunResult {
  code: number | null;
  output: string;
}

/** Runs `python args…` in clients/python with `env` added, collecting stdout and stderr together. */
export function runPython(
  python: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, args, {
      cwd: PYTHON_CLIENT,
      env: { ...process.env, PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
