import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { ConfigError } from '../../infrastructure/config/config';
import { packageVersion } from '../../infrastructure/package-info';
import { CliError, EXIT } from './client/api-client';
import { addClientCommands, reportError } from './client/client-commands';
import { addGrantCommands } from './client/grant-commands';
import { addChangeCommands } from './client/change-commands';
import { addStepCommands } from './client/step-commands';
import { addQuestionCommands } from './client/question-commands';
import { addLoginCommands } from './login/login-commands';
import { addHookCommands } from './hook-cli';
import type { TokenOptions } from './token-command';

/**
 * `tollgate` — the server, its operator commands, and the client commands that talk to a running server.
 * Exit codes: 0 ok, 1 the server refused the request (a 4xx problem) or the command failed (e.g. `audit verify`
 * found the trail altered), or the server crashed (with its stack), 2 bad usage or configuration (for `serve`
 * also a busy port, a data dir in use or not writable, a database it cannot reach: one line saying what to set),
 * 3 the server is unreachable or failed (5xx), 130 `login` cancelled with Ctrl-C.
 */
export function buildCli(): Command {
  const program = new Command('tollgate')
    .description('Self-hosted approval service for AI-agent tool calls')
    .showHelpAfterError()
    .version(packageVersion(), '-V, --version', 'print the version and exit')
    .exitOverride(); // usage errors reach main(), which exits with 2

  program
    .command('serve')
    .description('Run the HTTP service (embedded PostgreSQL unless DATABASE_URL is set)')
    .option(
      '--approve-in-terminal',
      'single-user mode: ask for each call the policy holds for a person on this terminal (y/n), one at a time',
    )
    .option('--as <name>', 'who answers in the terminal (default: the OS user)')
    .option('--tenant <tenant>', 'the tenant whose requests the terminal answers', 'default')
    .action((o: { approveInTerminal?: boolean; as?: string; tenant: string }) => {
      if (o.approveInTerminal && !(process.stdin.isTTY && process.stdout.isTTY)) {
        throw new ConfigError(
          '--approve-in-terminal asks on this terminal, but stdin/stdout is not a terminal (run it in one, or decide with `tollgate inbox` or the web inbox instead)',
        );
      }
      // Tracing first: its instrumentations must be in place before the server loads http and pg.
      const tracing = tracingModule().startTracing();
      return serverCommands().serve(o, tracing);
    });

  program
    .command('migrate')
    .description('Apply database migrations and exit')
    .action(() => serverCommands().migrate());

  program
    .command('token')
    .description(
      'Print a token signed with TOLLGATE_JWT_SECRET or the dev secret in the data dir (for development and tests)',
    )
    .requiredOption('--sub <id>', 'subject: the person or agent id')
    .option(
      '--role <role>',
      'a role (agent, approver, admin, auditor); repeat for more',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option('--tenant <tenant>', 'tenant', 'default')
    .option('--name <name>', 'display name')
    .option(
      '--owner <person>',
      "an agent token's owner: the person answerable for it, who may not approve its calls where the policy says selfApproval: false",
    )
    .option('--ttl <ttl>', 'lifetime, e.g. 30m, 8h, 7d', ttlArg, '8h')
    .option(
      '--aud <audience>',
      "the token's audience instead of the server's (TOLLGATE_JWT_AUDIENCE): e.g. an end user's token to pass as user.token, for an audience of TOLLGATE_USER_TOKEN_AUDIENCE",
    )
    .option(
      '--data-dir <dir>',
      "the server's data dir, holding its dev secret (default: TOLLGATE_DATA_DIR, else ./.tollgate, else the .tollgate beside this Tollgate)",
    )
    .action((o: TokenOptions) => tokenCommand().token(o));

  program
    .command('version')
    .description('Print the version and exit')
    .action(() => console.log(packageVersion()));

  program
    .command('mcp')
    .description(
      'MCP gateway: front the MCP servers of a config file and gate every tools/call through Tollgate (stdio, or Streamable HTTP with --http)',
    )
    .requiredOption('--config <file>', 'the gateway config (YAML or JSON): mcpServers to front, the end user, limits')
    .option(
      '--http <[host]:port>',
      'serve Streamable HTTP at /mcp with bearer auth instead of stdio (host 127.0.0.1 unless given)',
    )
    .action((o: { config: string; http?: string }) => mcpCommand().runMcp(o));

  addHookCommands(program);

  addClientCommands(program);
  addGrantCommands(program);
  addChangeCommands(program);
  addStepCommands(program);
  addQuestionCommands(program);
  addLoginCommands(program);
  return program;
}

/** Loaded on use: the client commands start without Nest, TypeORM and the database drivers. */
function serverCommands(): typeof import('./server-commands') {
  return require('./server-commands') as typeof import('./server-commands');
}

/** Loaded on use, and light: a token needs the config, the dev secret and jose, not the server. */
function tokenCommand(): typeof import('./token-command') {
  return require('./token-command') as typeof import('./token-command');
}

/** Loaded on use: only `tollgate mcp` needs the MCP SDK. */
function mcpCommand(): typeof import('./mcp-command') {
  return require('./mcp-command') as typeof import('./mcp-command');
}

/** Small and loaded on use too: it loads the OpenTelemetry SDK only when the OTEL_* env asks for traces. */
function tracingModule(): typeof import('../../infrastructure/observability/tracing') {
  return require('../../infrastructure/observability/tracing') as typeof import('../../infrastructure/observability/tracing');
}

function ttlArg(v: string): string {
  if (!/^\d+\s*(s|m|h|d|w)$/.test(v)) throw new InvalidArgumentError('use a number and a unit: 90s, 30m, 8h, 7d, 2w');
  return v;
}

export async function main(argv = process.argv): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and --version end with 0; every other commander error is bad usage (already printed).
      process.exit(e.exitCode === 0 ? 0 : EXIT.usage);
    }
    if (e instanceof ConfigError) {
      console.error(`tollgate: ${e.message}`);
      process.exit(EXIT.usage);
    }
    if (e instanceof CliError) {
      reportError(e);
      process.exit(e.exitCode);
    }
    console.error(`tollgate: ${(e as Error).stack ?? e}`);
    process.exit(1);
  }
}
