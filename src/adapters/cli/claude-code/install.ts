import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError } from '../../../infrastructure/config/config';

/**
 * `--install`: the hook's entries written into a Claude Code settings file, keeping everything already there. An
 * event that already runs `hook claude-code` is left as it is, so installing twice adds nothing.
 */

/** Claude Code kills a hook after `timeout` seconds and then runs the tool; the hook's own wait ends well before. */
export const PRE_TOOL_TIMEOUT_SECONDS = 300;
export const WAIT_SECONDS = 270;
/** A report is one or two requests. */
export const REPORT_TIMEOUT_SECONDS = 30;

export interface HookCommandEntry {
  type: 'command';
  command: string;
  timeout: number;
}
export interface HookMatcherEntry {
  matcher: string;
  hooks: HookCommandEntry[];
}
export type HookEntries = Record<'PreToolUse' | 'PostToolUse' | 'PostToolUseFailure', HookMatcherEntry>;

/** The entries for a command that runs `tollgate` (its words before `hook claude-code`), and extra options. */
export function hookEntries(tollgate: string, extra: string[] = []): HookEntries {
  const base = [tollgate, 'hook', 'claude-code', ...extra].join(' ');
  const entry = (command: string, timeout: number): HookMatcherEntry => ({
    matcher: '*',
    hooks: [{ type: 'command', command, timeout }],
  });
  return {
    PreToolUse: entry(`${base} --wait ${WAIT_SECONDS}`, PRE_TOOL_TIMEOUT_SECONDS),
    PostToolUse: entry(base, REPORT_TIMEOUT_SECONDS),
    PostToolUseFailure: entry(base, REPORT_TIMEOUT_SECONDS),
  };
}

const OURS = /(^|\s|\/|')(tollgate|tollgate\.js)'?\s+hook\s+claude-code(\s|$)/;
const MAX_SETTINGS_BYTES = 1024 * 1024;

/** Settings with the entries added where missing; `added` names the events that got one. */
export function mergeHooks(settings: Record<string, unknown>, entries: HookEntries): { added: string[] } {
  const hooks = settings.hooks ?? (settings.hooks = {});
  if (!isObject(hooks)) throw new ConfigError('its "hooks" is not a JSON object; fix it by hand first');
  const added: string[] = [];
  for (const [event, entry] of Object.entries(entries)) {
    const list = hooks[event] ?? (hooks[event] = []);
    if (!Array.isArray(list)) throw new ConfigError(`its "hooks.${event}" is not a list; fix it by hand first`);
    const present = list.some(
      (m) =>
        isObject(m) &&
        Array.isArray(m.hooks) &&
        m.hooks.some((h) => isObject(h) && typeof h.command === 'string' && OURS.test(h.command)),
    );
    if (present) continue;
    list.push(entry);
    added.push(event);
  }
  return { added };
}

/**
 * Adds the entries to the settings file at `path` (made, with its directory, when missing). The file is read whole
 * and written to a new file renamed over it, so Claude Code never reads half of it; invalid JSON is left untouched.
 */
export function installInto(path: string, entries: HookEntries): { added: string[] } {
  let settings: Record<string, unknown> = {};
  let mode: number | undefined;
  try {
    const st = statSync(path);
    if (st.size > MAX_SETTINGS_BYTES) throw new ConfigError(`${path}: bigger than 1 MiB; not a settings file?`);
    mode = st.mode & 0o777;
    const text = readFileSync(path, 'utf8');
    const parsed: unknown = text.trim() === '' ? {} : JSON.parse(text);
    if (!isObject(parsed)) throw new ConfigError(`${path}: not a JSON object; fix it by hand first`);
    settings = parsed;
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new ConfigError(
        `${path}: ${e instanceof SyntaxError ? `not valid JSON (${e.message}); fix it by hand first` : (e as Error).message}`,
      );
  }
  let added: string[];
  try {
    ({ added } = mergeHooks(settings, entries));
  } catch (e) {
    if (e instanceof ConfigError) throw new ConfigError(`${path}: ${e.message}`);
    throw e;
  }
  if (added.length === 0) return { added };
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tollgate-${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(settings, null, 2)}\n`, { mode: mode ?? 0o644 });
  if (mode !== undefined) chmodSync(tmp, mode);
  renameSync(tmp, path);
  return { added };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
