import { isAbsolute, posix } from 'node:path';
import type { Display, ToolAnnotations } from '@tollgate/sdk';

/**
 * Claude Code's built-in tools as Tollgate sees them: the flags they are proposed with (counted only while the
 * tenant has not registered the tool; a policy rule wins over both), what people are shown, and paths made
 * absolute and plain so that path globs match what runs.
 */

const READ_ONLY = ['Read', 'Glob', 'Grep', 'LS', 'NotebookRead', 'BashOutput', 'TodoRead'];
/** They change files or run programs on the machine. */
const DESTRUCTIVE = ['Bash', 'Write', 'Edit', 'MultiEdit', 'NotebookEdit', 'KillShell', 'KillBash'];
/** They reach the network with what the model wrote: a request can carry the project's secrets out. */
const NEEDS_APPROVAL = ['WebFetch', 'WebSearch'];
/** Claude Code's own bookkeeping, and subagents whose every tool call comes through this hook itself. */
const NO_FLAGS = ['Task', 'Agent', 'TodoWrite'];

/**
 * Tools through which Claude Code asks the user something itself (a question, the plan): an allow from the hook
 * would skip that dialog, so the hook answers nothing and Claude Code goes on as without it.
 */
export const PASS_THROUGH = ['AskUserQuestion', 'ExitPlanMode'];

/** The flags a built-in tool is proposed with; none for others (MCP tools…): the policy's `unknownTools` decides. */
export function builtInFlags(toolName: string): ToolAnnotations | undefined {
  const flags = (isReadOnly: boolean, requiresApproval: boolean, destructive: boolean) => ({
    isReadOnly,
    requiresApproval,
    destructive,
  });
  if (READ_ONLY.includes(toolName)) return flags(true, false, false);
  if (DESTRUCTIVE.includes(toolName)) return flags(false, false, true);
  if (NEEDS_APPROVAL.includes(toolName)) return flags(false, true, false);
  if (NO_FLAGS.includes(toolName)) return flags(false, false, false);
  return undefined;
}

/** The arguments that name a file or directory on this machine, and the built-in tools that take them. */
const PATH_KEYS = ['file_path', 'notebook_path', 'path'];
const FILE_TOOLS = ['Read', 'Write', 'Edit', 'MultiEdit', 'NotebookRead', 'NotebookEdit', 'Glob', 'Grep', 'LS'];

/**
 * The tool input with its paths absolute (against `cwd`) and without `.`, `..` or doubled slashes, so a rule such
 * as `Edit(file_path=/srv/app/*)` never matches `/srv/app/../../etc/passwd`. Symbolic links are not followed: a
 * glob matches the path as written. Returns the same object when nothing changed.
 */
export function plainPaths(
  toolName: string,
  input: Record<string, unknown>,
  cwd: string | undefined,
): Record<string, unknown> {
  // Another tool's `path` may be anything (a repository's, a URL's): it is left as the tool was given it.
  if (!FILE_TOOLS.includes(toolName)) return input;
  let out = input;
  for (const key of PATH_KEYS) {
    const v = input[key];
    if (typeof v !== 'string' || v === '') continue;
    const base = cwd && isAbsolute(cwd) ? cwd : undefined;
    if (!isAbsolute(v) && !base) continue; // nothing to resolve it against: matched as written
    const plain = base ? posix.resolve(base, v) : posix.normalize(v);
    if (plain !== v) out = { ...out, [key]: plain };
  }
  return out;
}

/** The arguments that are globs of paths below the tool's `path`: Glob's `pattern`, Grep's `glob`. */
const GLOB_KEYS: Record<string, string> = { Glob: 'pattern', Grep: 'glob' };

/**
 * Why the call is refused before it is proposed, if it is: a `..` in a path glob reaches above the `path` a rule
 * such as `Glob(path=/srv/app/*)` sees, and no rule on `path` can tell. Glob syntax is taken out first (`{.,.}.`
 * expands to `..`), so a name with two dots in a row is refused too: rare in a glob, and the sound side to err on.
 */
export function refusedGlob(toolName: string, input: Record<string, unknown>): string | undefined {
  const key = GLOB_KEYS[toolName];
  const v = key === undefined ? undefined : input[key];
  if (typeof v !== 'string' || !v.replace(/[{}[\](),|\\!@+]/g, '').includes('..')) return undefined;
  return `Tollgate: ${toolName}'s ${key} must not hold ".." (it could reach outside the path Tollgate's rules see); give the directory as an absolute path instead`;
}

const TITLE_CHARS = 300;

/** What people see in the inbox: the tool and what it acts on, where, in which permission mode. */
export function displayOf(
  toolName: string,
  input: Record<string, unknown>,
  cwd: string | undefined,
  mode: string | undefined,
): Display {
  const subject = ['command', 'file_path', 'notebook_path', 'url', 'query', 'pattern', 'path', 'description']
    .map((k) => input[k])
    .find((v): v is string => typeof v === 'string' && v !== '');
  const title = subject ? `${toolName}: ${subject}` : toolName;
  const fields = [
    ...(cwd ? [{ label: 'Directory', value: cwd.slice(0, 1000) }] : []),
    ...(mode ? [{ label: 'Permission mode', value: mode }] : []),
  ];
  return {
    title: title.length > TITLE_CHARS ? `${title.slice(0, TITLE_CHARS - 1)}…` : title,
    ...(fields.length ? { fields } : {}),
  };
}
