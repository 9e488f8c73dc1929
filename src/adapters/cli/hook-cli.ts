import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { ConfigError } from '../../infrastructure/config/config-error';
import type { HookOptions } from './hook-command';

/**
 * `tollgate hook …`: an agent's own hook, started once per tool call. bin/tollgate.js runs these commands from
 * here without loading the rest of the CLI (its client commands, the config, the server's modules): the agent
 * waits for the process's start on every call. `tollgate --help` lists them through main.ts, which adds them too.
 */
export function addHookCommands(program: Command): void {
  const hook = program
    .command('hook')
    .description("An agent's own hook that asks Tollgate before each tool call: tollgate hook claude-code");
  hook
    .command('claude-code')
    .description(
      "Claude Code's PreToolUse (or PermissionRequest) hook: propose the call on stdin, wait, answer allow/deny/ask on stdout; as PostToolUse(Failure), report the result",
    )
    .option('--url <url>', 'Tollgate (default: TOLLGATE_URL, else http://127.0.0.1:8080)')
    .option('--token-file <file>', 'a file holding the agent token (default: TOLLGATE_TOKEN)')
    .option(
      '--wait <seconds>',
      "the whole budget for an answer (proposal, a person's decision, the claim); below the hook's timeout in Claude Code",
      waitArg,
      50,
    )
    .option(
      '--on-error <deny|ask>',
      'when Tollgate cannot be reached or answers an error: deny, or ask the user',
      onErrorArg,
      'deny',
    )
    .option('--user <id>', "the sessions' end user in Tollgate (the requester of policies)")
    .option(
      '--role <role>',
      'a role of --user; repeat for more',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option('--install', "write the hook entries into Claude Code's .claude/settings.json, keeping what is there")
    .option(
      '--scope <project|user>',
      "--install: the current directory's .claude (project) or ~/.claude (user)",
      scopeArg,
      'project',
    )
    .action((o: HookOptions) => hookCommand().claudeCode(o));
}

/** Loaded on use: the SDK, and nothing of the server. */
function hookCommand(): typeof import('./hook-command') {
  return require('./hook-command') as typeof import('./hook-command');
}

function waitArg(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1 || n > 3600) throw new InvalidArgumentError('whole seconds, 1 to 3600');
  return n;
}

function onErrorArg(v: string): 'deny' | 'ask' {
  if (v !== 'deny' && v !== 'ask') throw new InvalidArgumentError('deny or ask');
  return v;
}

function scopeArg(v: string): 'project' | 'user' {
  if (v !== 'project' && v !== 'user') throw new InvalidArgumentError('project or user');
  return v;
}

/** `tollgate hook …` from bin/tollgate.js, with main()'s exit codes: 2 for bad usage or config, 1 otherwise. */
export async function hookMain(argv = process.argv): Promise<void> {
  const program = new Command('tollgate').exitOverride();
  addHookCommands(program);
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) process.exit(e.exitCode === 0 ? 0 : 2);
    if (e instanceof ConfigError) {
      console.error(`tollgate: ${e.message}`);
      process.exit(2);
    }
    console.error(`tollgate: ${(e as Error).stack ?? e}`);
    process.exit(1);
  }
}
