import { userInfo } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { describeAnchoring, loadConfig } from '../../infrastructure/config/config';
import { openDataSource } from '../../infrastructure/database/data-source';
import { startEmbeddedPostgres } from '../../infrastructure/database/embedded-postgres';
import { describeDatabaseUrl } from '../../infrastructure/config/startup-errors';
import { resolveLogFormat } from '../../infrastructure/observability/logging';
import type { Tracing } from '../../infrastructure/observability/tracing';
import { packageVersion } from '../../infrastructure/package-info';
import { RunningServer, startServer } from '../../server';
import { passkeyBase } from './client/passkey-link';
import { TerminalChannel } from './terminal/terminal-channel';
import { packageRoot } from './token-command';
import { outdatedNode } from './node-support';

/**
 * The commands that run the server itself. Kept apart from main.ts and loaded only when used, so that
 * the client commands (approve, audit, …) start without loading Nest, TypeORM and the database drivers.
 */

export interface ServeOptions {
  approveInTerminal?: boolean;
  as?: string;
  tenant?: string;
}

export async function serve(o: ServeOptions = {}, tracing?: Tracing): Promise<void> {
  let terminal: TerminalChannel | undefined;
  if (o.approveInTerminal) {
    const id = o.as ?? osUser();
    terminal = new TerminalChannel({ id, tenant: o.tenant ?? 'default', roles: ['approver', 'admin'], via: 'cli' });
  }
  // Signals are handled from the first moment: a stop during start-up waits for it, then closes cleanly.
  let stopping = false;
  const config = loadConfig();
  // The terminal is the approver's screen: a line per request would land in the middle of its questions.
  if (terminal && !process.env.LOG_LEVEL && !process.env.TOLLGATE_LOG_LEVEL) config.logLevel = 'warn';
  const starting = startServer(config, { outboxConsumers: terminal ? [terminal.consumer] : undefined });
  const stop = (signal: string) => {
    if (stopping) {
      // A second Ctrl-C means "now"; a repeated SIGTERM (supervisors send them) changes nothing.
      if (signal === 'SIGINT') process.exit(130);
      return;
    }
    stopping = true;
    terminal?.close();
    const force = setTimeout(() => process.exit(1), 15_000).unref();
    starting
      .then((server) => {
        server.logger.info(`${signal}: finishing in-flight requests and stopping`);
        return server.close();
      })
      .then(() => tracing?.shutdown()) // the last spans go out before the process does
      .then(
        () => {
          clearTimeout(force);
          process.exit(0);
        },
        (e) => {
          console.error(`tollgate: ${(e as Error).message}`);
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  const server = await starting;
  announce(server, banner(server, !!tracing));
  const outdated = outdatedNode(process.versions.node);
  if (outdated) server.logger.warn(outdated);
  if (terminal) {
    announce(server, [
      `Approving in this terminal as ${terminal.decider.id} (tenant ${terminal.decider.tenant}): calls the policy holds for a person are asked here, one at a time.`,
    ]);
    await terminal.attach(server.app, server.config.publicUrl ?? server.url);
  }
}

interface Banner {
  lines: string[];
  fields?: Record<string, string>;
}

const PUSH_OFF = 'off (set TOLLGATE_VAPID_SUBJECT, e.g. mailto:ops@example.com, or an https TOLLGATE_PUBLIC_URL)';

/** What a newcomer needs on start: where it listens (HTTP and gRPC), which database, where the inbox is and how to sign in, the docs. */
function banner(server: RunningServer, traced: boolean): Banner {
  const { config, url } = server;
  const version = packageVersion();
  const database = config.databaseUrl
    ? `PostgreSQL ${describeDatabaseUrl(config.databaseUrl) ?? '(DATABASE_URL)'}`
    : `embedded PostgreSQL in ${config.dataDir}`;
  const token = tokenHint(config.auth.devSecret ? config.dataDir : undefined);
  const signIn = config.auth.devSecret
    ? `the page's dev sign-in (from this machine), or a token: ${token}`
    : config.auth.secret
      ? `paste a token, e.g. from ${token} (signs with TOLLGATE_JWT_SECRET)`
      : 'paste a token from your identity provider';
  const grpc = server.grpcAddress ?? 'off';
  // Where people open the inbox: the public address, else localhost for a loopback address (passkeys need a name).
  const inbox = `${config.publicUrl ?? passkeyBase(url)}/`;
  const fields = {
    version,
    url,
    grpc,
    database,
    inbox,
    signIn,
    docs: `${url}/docs`,
    tracing: traced ? 'on' : 'off',
    // Push needs a contact for push services (VAPID); without one, say how to turn it on.
    push: config.push.subject ? 'on' : PUSH_OFF,
    email: config.email ? 'on' : 'off',
    // Signed audit checkpoints outside the database (issue 28): where, how often, or off and how to turn it on.
    anchoring: describeAnchoring(config),
  };
  return {
    fields,
    lines: [
      `Tollgate listening on ${url} (version ${version})`,
      `  gRPC       ${server.grpcAddress ? `${grpc} (tollgate.v1.Tollgate, health, reflection)` : 'off (TOLLGATE_GRPC_PORT=off)'}`,
      `  database   ${database}`,
      `  web inbox  ${inbox}  sign in with ${signIn}`,
      `  API docs   ${url}/docs   health ${url}/health/ready   metrics ${url}/metrics${traced ? '   tracing on' : ''}`,
      `  reach      push ${config.push.subject ? 'on' : PUSH_OFF}; email ${config.email ? 'on' : 'off (TOLLGATE_SMTP_URL)'}`,
      `  audit      ${fields.anchoring}`,
    ],
  };
}

/**
 * Start-up news, shown whatever the log level (but silent): as plain lines on a terminal, as one JSON log line
 * otherwise, so a log shipper gets JSON only. Its first line reads "Tollgate listening on <url> …" either way.
 */
function announce(server: RunningServer, b: Banner | string[]): void {
  const { lines, fields } = Array.isArray(b) ? { lines: b, fields: undefined } : b;
  if (server.config.logLevel === 'silent') return;
  if (resolveLogFormat(server.config.logFormat) === 'pretty') {
    for (const line of lines) console.log(line);
    return;
  }
  server.logger.child({}, { level: 'info' }).info(fields ?? {}, fields ? lines[0] : lines.join(' '));
}

export async function migrate(): Promise<void> {
  const config = loadConfig();
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres(config.dataDir);
  // Migrations need a session of their own: PostgreSQL itself, not a pooler (TOLLGATE_DATABASE_DIRECT_URL).
  const ds = await openDataSource({ url: config.databaseDirectUrl ?? config.databaseUrl, embedded }, false);
  try {
    const applied = await ds.runMigrations({ transaction: 'each' });
    console.log(applied.length ? `Applied ${applied.map((m) => m.name).join(', ')}` : 'The schema is up to date');
  } finally {
    await ds.destroy();
    await embedded?.stop();
  }
}

/**
 * The token command to suggest, as it runs where the operator is: `npx tollgate` only in the checkout (elsewhere npx
 * would fetch a registry package of that name), and the data dir when it is not one the command finds by itself.
 */
function tokenHint(devSecretDir: string | undefined): string {
  const root = packageRoot();
  const script = process.argv[1] ?? '';
  const cli =
    root && resolve(process.cwd()) === root
      ? 'npx tollgate'
      : basename(script) === 'tollgate'
        ? 'tollgate'
        : `node ${shellWord(script)}`;
  const found = [resolve('.tollgate'), ...(root ? [join(root, '.tollgate')] : [])];
  const dataDir = devSecretDir && !found.includes(devSecretDir) ? ` --data-dir ${shellWord(devSecretDir)}` : '';
  return `${cli} token --sub alice --role approver${dataDir}`;
}

function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function osUser(): string {
  try {
    return userInfo().username || 'operator';
  } catch {
    return process.env.USER ?? 'operator';
  }
}
