import { Command, InvalidArgumentError } from 'commander';
import { mintToken } from '../../infrastructure/auth/jwt-verifier';
import { readDevSecret } from '../../infrastructure/auth/dev-secret';
import { ConfigError, loadConfig } from '../../infrastructure/config/config';
import { openDataSource } from '../../infrastructure/database/data-source';
import { startEmbeddedPostgres } from '../../infrastructure/database/embedded-postgres';
import { startServer } from '../../server';

/** `tollgate` — the server and its operator commands. Exit codes: 0 ok, 1 failure, 2 bad usage or configuration. */
export function buildCli(): Command {
  const program = new Command('tollgate').description('Self-hosted approval service for AI-agent tool calls').showHelpAfterError();

  program
    .command('serve')
    .description('Run the HTTP service (embedded PostgreSQL unless DATABASE_URL is set)')
    .action(serve);

  program
    .command('migrate')
    .description('Apply database migrations and exit')
    .action(async () => {
      const config = loadConfig();
      const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres(config.dataDir);
      const ds = await openDataSource({ url: config.databaseUrl, embedded }, false);
      try {
        const applied = await ds.runMigrations({ transaction: 'each' });
        console.log(applied.length ? `Applied ${applied.map((m) => m.name).join(', ')}` : 'The schema is up to date');
      } finally {
        await ds.destroy();
        await embedded?.stop();
      }
    });

  program
    .command('token')
    .description('Print a token signed with TOLLGATE_JWT_SECRET or the dev secret in the data dir (for development and tests)')
    .requiredOption('--sub <id>', 'subject: the person or agent id')
    .option('--role <role>', 'a role (agent, approver, admin, auditor); repeat for more', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--tenant <tenant>', 'tenant', 'default')
    .option('--name <name>', 'display name')
    .option('--ttl <ttl>', 'lifetime, e.g. 30m, 8h, 7d', ttlArg, '8h')
    .action(async (o: { sub: string; role: string[]; tenant: string; name?: string; ttl: string }) => {
      const config = loadConfig();
      const secret = config.auth.secret ?? readDevSecret(config.dataDir);
      if (!secret) {
        throw new ConfigError(
          config.auth.jwksUrl
            ? 'Tokens come from your identity provider (TOLLGATE_JWKS_URL is set); this command signs only with a shared secret'
            : `No secret: set TOLLGATE_JWT_SECRET, or start the server once (npm start) to make a dev secret in ${config.dataDir}`,
        );
      }
      console.log(await mintToken(secret, { sub: o.sub, roles: o.role, tenant: o.tenant, name: o.name }, o.ttl));
    });

  return program;
}

async function serve(): Promise<void> {
  // Signals are handled from the first moment: a stop during start-up waits for it, then closes cleanly.
  let stopping = false;
  const starting = startServer(loadConfig());
  const stop = (signal: string) => {
    if (stopping) {
      // A second Ctrl-C means "now"; a repeated SIGTERM (supervisors send them) changes nothing.
      if (signal === 'SIGINT') process.exit(130);
      return;
    }
    stopping = true;
    console.log(`${signal}: finishing in-flight requests and stopping`);
    const force = setTimeout(() => process.exit(1), 15_000).unref();
    starting
      .then((server) => server.close())
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
  const { config, url } = server;
  console.log(`Tollgate listening on ${url} (${config.databaseUrl ? 'PostgreSQL from DATABASE_URL' : `embedded PostgreSQL in ${config.dataDir}`})`);
  console.log(`OpenAPI: ${url}/docs   health: ${url}/health/ready   metrics: ${url}/metrics`);
  if (config.auth.devSecret) {
    console.log(`Dev auth: a signing secret was made in ${config.dataDir}. Mint a token with:`);
    console.log('  npx tollgate token --sub alice --role approver');
  }
}

function ttlArg(v: string): string {
  if (!/^\d+\s*(s|m|h|d|w)$/.test(v)) throw new InvalidArgumentError('use a number and a unit: 90s, 30m, 8h, 7d, 2w');
  return v;
}

export async function main(argv = process.argv): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`tollgate: ${e.message}`);
      process.exit(2);
    }
    console.error(`tollgate: ${(e as Error).stack ?? e}`);
    process.exit(1);
  }
}
