import { ConfigError } from './config';

/**
 * Start-up failures the operator fixes with a setting (a busy port, a data dir in use or not writable, a
 * database that cannot be reached), turned into one line naming what to set: the CLI prints a ConfigError's
 * message alone and exits with 2. Anything else stays as it was, a crash with its stack (exit 1).
 */

type Errno = Error & { code?: string; syscall?: string; path?: string; hostname?: string; address?: string };

const FS_REFUSALS: Record<string, string> = {
  EACCES: 'is not writable by this user',
  EPERM: 'is not writable by this user',
  EROFS: 'is on a read-only file system',
  ENOTDIR: 'is not a directory',
  EEXIST: 'is not a directory',
  ENOSPC: 'is on a full disk',
};

export function dataDirProblem(e: unknown, dataDir: string): ConfigError | undefined {
  if (e instanceof ConfigError) return e;
  const err = e as Errno;
  const why = err?.code ? FS_REFUSALS[err.code] : undefined;
  if (!why) return undefined;
  const where = err.path && err.path !== dataDir ? ` (${err.path}: ${err.code})` : ` (${err.code})`;
  return new ConfigError(
    `the data dir ${dataDir} ${why}${where}; set TOLLGATE_DATA_DIR to a directory this user can write, or fix its permissions`,
  );
}

/** `o`: the listener's own setting (gRPC's TOLLGATE_GRPC_PORT, which may also be `off`); HTTP's PORT by default. */
export function listenProblem(
  e: unknown,
  host: string,
  port: number,
  o: { setting?: string; what?: string; example?: number; orOff?: boolean } = {},
): ConfigError | undefined {
  const err = e as Errno;
  if (err?.syscall !== 'listen' && err?.code !== 'ENOTFOUND') return undefined;
  const { setting = 'PORT', what = 'port', example = 8080 } = o;
  switch (err.code) {
    case 'EADDRINUSE':
      return new ConfigError(
        `${what} ${port} on ${host} is in use; set ${setting} to a free port${o.orOff ? ' (or off)' : ''}, or stop what holds it`,
      );
    case 'EACCES':
    case 'EPERM':
      return new ConfigError(
        `this user may not listen on ${what} ${port}${port < 1024 ? ' (ports below 1024 need privileges)' : ''}; set ${setting}, e.g. ${setting}=${example}`,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ConfigError(
        `HOST ${host} is not an address of this machine; set HOST, e.g. 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)`,
      );
    default:
      return undefined;
  }
}

/**
 * A gRPC bind that failed. @grpc/grpc-js reports it as one Error whose message holds the listen error's code
 * ("No address added … [listen EADDRINUSE: …]") or a name resolution failure; read as listenProblem reads a
 * listen error, naming TOLLGATE_GRPC_PORT.
 */
export function grpcListenProblem(e: unknown, host: string, port: number): ConfigError | undefined {
  const message = (e as Error)?.message ?? '';
  const code =
    /listen (E[A-Z]+)/.exec(message)?.[1] ?? (/^Name resolution failed/.test(message) ? 'ENOTFOUND' : undefined);
  if (!code) return undefined;
  return listenProblem({ syscall: 'listen', code }, host, port, {
    setting: 'TOLLGATE_GRPC_PORT',
    what: 'gRPC port',
    example: 8081,
    orOff: true,
  });
}

const PG_REFUSALS: Record<string, string> = {
  '28P01': 'the password was refused',
  '28000': 'the server refused this user (no such role, or pg_hba.conf does not let it in)',
  '3D000': 'the database does not exist',
  '57P03': 'the database is starting up or in recovery',
  '53300': 'the server has no free connection slots',
  '42501':
    'this user lacks a privilege the start needs (migrations create tables: run `tollgate migrate` as the owner and set TOLLGATE_MIGRATE=false)',
};

const NET_REFUSALS: Record<string, string> = {
  ECONNREFUSED: 'nothing accepts connections there',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved now',
  ETIMEDOUT: 'no answer in time',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ECONNRESET: 'the connection was reset',
};

/**
 * A failure to open (or migrate) the PostgreSQL of DATABASE_URL (or of `setting`, e.g. TOLLGATE_DATABASE_DIRECT_URL
 * for the migrations); the URL is shown without its password. A ConfigError already made for it passes through.
 */
export function databaseProblem(e: unknown, url: string, setting = 'DATABASE_URL'): ConfigError | undefined {
  if (e instanceof ConfigError) return e;
  const err = e as Errno;
  const where = describeDatabaseUrl(url, { user: true });
  if (where === undefined)
    return new ConfigError(
      `${setting} is not a URL such as postgres://user:password@host:5432/database; set it, or unset it for the embedded database`,
    );
  const code = err?.code ?? '';
  const why =
    PG_REFUSALS[code] ??
    NET_REFUSALS[code] ??
    (/timeout|timed out/i.test(err?.message ?? '') ? 'no answer in time' : undefined) ??
    (/^(08|28)/.test(code) ? err.message : undefined);
  if (!why) return undefined;
  return new ConfigError(`cannot use the database ${where}: ${why}; check ${setting} and that PostgreSQL is running`);
}

/** `host:port/database` (and ` as user`), never the password; undefined when the URL does not parse. */
export function describeDatabaseUrl(raw: string, o: { user?: boolean } = {}): string | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return undefined;
  }
  if (!/^postgres(ql)?:$/.test(u.protocol)) return undefined;
  const host = u.hostname || u.searchParams.get('host') || 'localhost';
  const db = decodeURIComponent(u.pathname.slice(1)) || u.username || 'postgres';
  return `${host}:${u.port || 5432}/${db}${o.user && u.username ? ` as ${decodeURIComponent(u.username)}` : ''}`;
}
