'use strict';
/**
 * A private PgBouncer in transaction mode, for the benchmark (`npm run bench`) and the pooler tests
 * (test/e2e/pgbouncer.e2e-spec.ts): its own ini and userlist in a temp dir, a free port on 127.0.0.1, one
 * database entry pointing at the PostgreSQL database of `serverUrl`. Nothing system-wide is touched: the Debian
 * package's own service is neither used nor started. As root it drops to the `postgres` user (PgBouncer refuses
 * to run as root), which then owns the temp dir.
 */
const { spawn } = require('node:child_process');
const { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const net = require('node:net');
const { tmpdir } = require('node:os');
const { delimiter, join } = require('node:path');

const INSTALL_HINT = 'apt-get install pgbouncer';

/** The pgbouncer binary on PATH or in the sbin directories Debian installs it to; undefined when absent. */
function findPgbouncer() {
  const dirs = [
    ...(process.env.PATH ?? '').split(delimiter),
    '/usr/sbin',
    '/usr/local/sbin',
    '/usr/bin',
    '/usr/local/bin',
  ];
  for (const d of dirs) {
    if (d && existsSync(join(d, 'pgbouncer'))) return join(d, 'pgbouncer');
  }
  return undefined;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** The user to drop to when running as root: `postgres` if it exists, else `nobody`, with its uid and gid. */
function unprivilegedUser() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const passwd = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((l) => l.split(':'));
  const row = passwd.find((f) => f[0] === 'postgres') ?? passwd.find((f) => f[0] === 'nobody');
  if (!row) throw new Error('running as root and neither a postgres nor a nobody user exists for pgbouncer to run as');
  return { name: row[0], uid: Number(row[2]), gid: Number(row[3]) };
}

const quote = (s) => `"${String(s).replace(/"/g, '""')}"`;

function canConnect(port) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port }, () => {
      sock.destroy();
      resolve(true);
    });
    sock.on('error', () => resolve(false));
  });
}

/**
 * Starts pgbouncer in front of the database of `serverUrl` (postgres://user[:password]@host:port/db).
 * @param {object} o
 * @param {string} o.serverUrl         the PostgreSQL database the pooler serves
 * @param {number} [o.poolSize]        server connections per database and user (default_pool_size)
 * @param {number} [o.maxClientConn]   client connections accepted at most
 * @param {boolean} [o.adminConsole]   let the same user run SHOW STATS etc. on the `pgbouncer` database
 * @returns {Promise<{name: string, child: import('node:child_process').ChildProcess, url: string, adminUrl: string, port: number, pid: number, dir: string, version: string, output(): string, stop(): Promise<void>}>}
 */
async function startPgbouncer({
  serverUrl,
  poolSize = 10,
  maxClientConn = 200,
  adminConsole = false,
  timeoutMs = 10_000,
}) {
  const binary = findPgbouncer();
  if (!binary) throw new Error(`pgbouncer not installed (${INSTALL_HINT})`);
  const server = new URL(serverUrl);
  const db = decodeURIComponent(server.pathname.slice(1)) || 'postgres';
  const user = decodeURIComponent(server.username) || 'postgres';
  const password = decodeURIComponent(server.password);
  const host = server.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-pgbouncer-'));
  const ini = join(dir, 'pgbouncer.ini');
  const userlist = join(dir, 'userlist.txt');
  writeFileSync(
    ini,
    [
      '[databases]',
      `${db} = host=${host} port=${server.port || 5432} dbname=${db}`,
      '',
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      // With a password the pooler checks it (md5) and logs in to PostgreSQL with it; without one PostgreSQL
      // trusts this host (as the test and bench PostgreSQL here does), and so does the pooler.
      `auth_type = ${password ? 'md5' : 'trust'}`,
      `auth_file = ${userlist}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'min_pool_size = 0',
      'reserve_pool_size = 0',
      `max_client_conn = ${maxClientConn}`,
      `max_db_connections = ${poolSize}`,
      'ignore_startup_parameters = extra_float_digits',
      'log_connections = 0',
      'log_disconnections = 0',
      ...(adminConsole ? [`admin_users = ${user}`, `stats_users = ${user}`] : []),
      '',
    ].join('\n'),
  );
  writeFileSync(userlist, `${quote(user)} ${quote(password)}\n`);
  const drop = unprivilegedUser();
  if (drop) for (const p of [dir, ini, userlist]) chownSync(p, drop.uid, drop.gid);
  chmodSync(userlist, 0o600);

  const child = spawn(binary, [...(drop ? ['-u', drop.name] : []), ini], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = [];
  const keep = (chunk) => {
    for (const l of chunk.toString('utf8').split('\n')) {
      if (!l) continue;
      lines.push(l);
      if (lines.length > 200) lines.shift();
    }
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = null;
  const exit = new Promise((resolve) => child.on('exit', (code, signal) => resolve((exited = { code, signal }))));
  child.on('error', (e) => lines.push(`spawn failed: ${e.message}`));

  const deadline = Date.now() + timeoutMs;
  while (!(await canConnect(port))) {
    if (exited || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(
        `pgbouncer did not start (${exited ? `exited: code ${exited.code}, signal ${exited.signal}` : `not listening after ${timeoutMs} ms`})\n${lines.join('\n')}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const version = /PgBouncer (\d+\.\d+\.\d+)/.exec(lines.join('\n'))?.[1] ?? '';
  const pooled = new URL(serverUrl);
  pooled.hostname = '127.0.0.1';
  pooled.port = String(port);
  const admin = new URL(pooled);
  admin.pathname = '/pgbouncer';
  return {
    name: 'pgbouncer',
    child,
    url: pooled.toString(),
    adminUrl: admin.toString(),
    port,
    pid: child.pid,
    dir,
    version,
    output: () => lines.join('\n'),
    /** SIGTERM (PgBouncer's immediate shutdown), SIGKILL after 5 s; removes the temp dir. */
    async stop() {
      if (!exited) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exit;
        clearTimeout(killer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

module.exports = { startPgbouncer, findPgbouncer, INSTALL_HINT };
