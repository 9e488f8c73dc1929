import * as pty from 'node-pty';
import { spawn } from 'node:child_process';
import { BIN } from './process';

/** Drops ANSI escape sequences (colours, cursor moves, screen switches) so tests read what a person sees. */
export function plain(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s
    .replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, '')
    .replace(/\x1b[()][A-Za-z0-9]/g, '')
    .replace(/\x1b[=>]/g, '');
}

export const KEYS = {
  up: '\x1b[A',
  down: '\x1b[B',
  enter: '\r',
  esc: '\x1b',
  backspace: '\x7f',
  ctrlC: '\x03',
} as const;

export interface Terminal {
  /** Everything shown so far, ANSI stripped. */
  text(): string;
  /** An index into text(): `waitFor(…, mark())` looks only at what comes after now. */
  mark(): number;
  waitFor(pattern: string | RegExp, since?: number, ms?: number): Promise<string>;
  write(keys: string): void;
  exited(): Promise<{ exitCode: number; signal?: number }>;
  kill(signal?: string): void;
  pid: number;
}

/**
 * Runs `node bin/tollgate.js …` in a pseudo-terminal (node-pty), as a person at a terminal runs it:
 * stdin and stdout are a TTY, keys are typed, the screen is read back.
 */
export function spawnTerminal(
  args: string[],
  env: NodeJS.ProcessEnv,
  opts: { cols?: number; rows?: number } = {},
): Terminal {
  const p = pty.spawn(process.execPath, [BIN, ...args], {
    name: 'xterm-256color',
    cols: opts.cols ?? 160,
    rows: opts.rows ?? 40,
    cwd: process.cwd(),
    env: env as Record<string, string>,
  });
  let raw = '';
  let exit: { exitCode: number; signal?: number } | undefined;
  const exitWaiters: Array<(e: { exitCode: number; signal?: number }) => void> = [];
  p.onData((d) => (raw += d));
  p.onExit((e) => {
    exit = e;
    for (const w of exitWaiters.splice(0)) w(e);
  });
  const text = () => plain(raw);
  return {
    pid: p.pid,
    text,
    mark: () => text().length,
    async waitFor(pattern, since = 0, ms = 15_000) {
      const end = Date.now() + ms;
      for (;;) {
        const seen = text().slice(since);
        const m = typeof pattern === 'string' ? (seen.includes(pattern) ? pattern : null) : pattern.exec(seen)?.[0];
        if (m) return m;
        if (exit)
          throw new Error(`the terminal exited (${exit.exitCode}) before showing ${pattern}:\n${seen.slice(-3000)}`);
        if (Date.now() > end)
          throw new Error(`the terminal did not show ${pattern} in ${ms} ms; it shows:\n${seen.slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    write: (keys) => p.write(keys),
    exited: () => (exit ? Promise.resolve(exit) : new Promise((resolve) => exitWaiters.push(resolve))),
    kill: (signal) => {
      if (!exit) p.kill(signal);
    },
  };
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node bin/tollgate.js …` without a terminal, as a script does, and resolves when it exits.
 * Asynchronous on purpose: the server under test runs in this same process and must keep answering.
 */
export function runCli(args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

/** The environment of a client command: the URL and token given, nothing inherited that would change them. */
export function cliEnv(vars: { url: string; token?: string } & Record<string, string | undefined>): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env };
  for (const k of [
    'DATABASE_URL',
    'TOLLGATE_JWT_SECRET',
    'TOLLGATE_JWKS_URL',
    'TOLLGATE_DATA_DIR',
    'TOLLGATE_URL',
    'TOLLGATE_TOKEN',
    'EDITOR',
    'VISUAL',
  ])
    delete e[k];
  const { url, token, ...rest } = vars;
  e.TOLLGATE_URL = url;
  if (token) e.TOLLGATE_TOKEN = token;
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) e[k] = v;
  return e;
}
