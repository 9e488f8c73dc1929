import {
  chmodSync,
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * What `tollgate login` keeps: one login per server URL, in the user's config dir, readable by the user only
 * (file 0600, dir 0700), replaced atomically so a crash or a second CLI never leaves half a file.
 */
export interface StoredLoginEntry {
  /** The Tollgate server: origin and path, no trailing slash (api-client's `serverUrl`). */
  url: string;
  issuer: string;
  clientId: string;
  access_token: string;
  refresh_token?: string;
  /** Epoch seconds; from the token response's `expires_in`. */
  expires_at?: number;
  id_token?: string;
  /** Epoch seconds the tokens were received: with the expiry, how long they live, so refresh comes in time. */
  obtained_at: number;
}

interface CredentialsDocument {
  version: 1;
  logins: StoredLoginEntry[];
}

/** More than any real set of logins; a larger file is not ours and is not read into memory. */
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_TOKEN_CHARS = 64 * 1024;

/** The file's place: $XDG_CONFIG_HOME, else the platform's config dir (%APPDATA%, ~/Library/Application Support, ~/.config). */
export function credentialsPath(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  return join(configDir(env, platform), 'credentials.json');
}

function configDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string {
  const xdg = env.XDG_CONFIG_HOME?.trim();
  // The XDG spec: a relative value is invalid and ignored.
  if (xdg && xdg.startsWith('/')) return join(xdg, 'tollgate');
  if (platform === 'win32' && env.APPDATA) return join(env.APPDATA, 'tollgate');
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'tollgate');
  return join(homedir(), '.config', 'tollgate');
}

export class CredentialsError extends Error {}

/** The stored logins; a missing file is none. A file that is not ours (bad JSON, wrong shape) is an error, never overwritten silently. */
export function readLogins(path = credentialsPath()): StoredLoginEntry[] {
  let text: string;
  try {
    if (statSync(path).size > MAX_FILE_BYTES)
      throw new CredentialsError(`${path} is larger than 1 MB: not a Tollgate credentials file`);
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    if (e instanceof CredentialsError) throw e;
    throw new CredentialsError(`cannot read ${path}: ${(e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new CredentialsError(`${path} is not valid JSON (remove it and run tollgate login again)`);
  }
  const logins = (doc as Partial<CredentialsDocument>)?.logins;
  if (!Array.isArray(logins) || !logins.every(isEntry))
    throw new CredentialsError(`${path} is not a Tollgate credentials file (remove it and run tollgate login again)`);
  return logins;
}

function isEntry(e: unknown): e is StoredLoginEntry {
  const o = e as Record<string, unknown>;
  const str = (v: unknown, optional = false) =>
    (optional && v === undefined) || (typeof v === 'string' && v.length > 0 && v.length <= MAX_TOKEN_CHARS);
  const num = (v: unknown, optional = false) => (optional && v === undefined) || Number.isFinite(v);
  return (
    typeof o === 'object' &&
    o !== null &&
    str(o.url) &&
    str(o.issuer) &&
    str(o.clientId) &&
    str(o.access_token) &&
    str(o.refresh_token, true) &&
    str(o.id_token, true) &&
    num(o.expires_at, true) &&
    num(o.obtained_at)
  );
}

export function findLogin(url: string, path = credentialsPath()): StoredLoginEntry | undefined {
  return readLogins(path).find((l) => l.url === url);
}

/** Adds or replaces the login for `entry.url`. */
export function saveLogin(entry: StoredLoginEntry, path = credentialsPath()): void {
  const others = readLogins(path).filter((l) => l.url !== entry.url);
  writeLogins([...others, entry], path);
}

/** Forgets the login for `url`; true when there was one. The file goes when it holds no login. */
export function removeLogin(url: string, path = credentialsPath()): boolean {
  const logins = readLogins(path);
  const rest = logins.filter((l) => l.url !== url);
  if (rest.length === logins.length) return false;
  if (rest.length === 0) rmSync(path, { force: true });
  else writeLogins(rest, path);
  return true;
}

const LOCK_STALE_MS = 30_000;
const LOCK_WAIT_MS = 15_000;

/**
 * Runs `work` holding the credentials' lock (a file made with O_EXCL beside them): two tollgate commands refreshing
 * at once would both spend the same refresh token, and with rotation (most providers) the second is refused, or
 * ends the whole grant. A lock older than LOCK_STALE_MS is a command that died holding it, and is broken.
 */
export async function withCredentialsLock<T>(work: () => Promise<T>, path = credentialsPath()): Promise<T> {
  const lock = `${path}.lock`;
  makeDir(join(path, '..'));
  const giveUp = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST')
        throw new CredentialsError(`cannot lock ${path}: ${(e as Error).message}`);
    }
    try {
      if (Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS) rmSync(lock, { force: true });
    } catch {
      /* released meanwhile */
    }
    if (Date.now() > giveUp)
      throw new CredentialsError(`another tollgate command holds ${lock}; if none is running, remove it`);
    await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { force: true });
  }
}

function makeDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // mkdir's mode does not change a dir that already exists: one made looser by hand is tightened.
  if (process.platform !== 'win32' && (statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

/** Written to a new file beside it (created 0600, so never readable by others even for an instant), then renamed over it. */
function writeLogins(logins: StoredLoginEntry[], path: string): void {
  const dir = join(path, '..');
  makeDir(dir);
  const tmp = join(dir, `.credentials-${randomBytes(6).toString('hex')}.tmp`);
  const doc: CredentialsDocument = { version: 1, logins };
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(doc, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}
