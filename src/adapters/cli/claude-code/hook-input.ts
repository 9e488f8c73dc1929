/**
 * What Claude Code writes on a command hook's stdin, read once and checked: the events this command answers, the
 * fields it needs, every one bounded. A fault is a HookInputError, which the command reports on stderr with exit 2
 * (Claude Code blocks the tool on exit 2: fail closed).
 */

export type HookEvent = 'PreToolUse' | 'PermissionRequest' | 'PostToolUse' | 'PostToolUseFailure';

export const HOOK_EVENTS: readonly HookEvent[] = [
  'PreToolUse',
  'PermissionRequest',
  'PostToolUse',
  'PostToolUseFailure',
];

export interface HookInput {
  event: HookEvent;
  sessionId: string;
  /** Claude Code's working directory: where relative paths lead. */
  cwd?: string;
  permissionMode?: string;
  toolName: string;
  toolInput: Record<string, unknown>;
  /** Claude's id of this tool use; absent only on some PermissionRequest inputs. */
  toolUseId?: string;
  /** PostToolUse: what the tool answered. */
  toolResponse?: unknown;
  /** PostToolUseFailure: why it failed. */
  error?: string;
}

export class HookInputError extends Error {}

/** The server takes bodies up to 1 MiB: a bigger tool input could not be proposed anyway. */
export const MAX_STDIN_BYTES = 1024 * 1024;
const MAX_ID_CHARS = 256;
const MAX_PATH_CHARS = 4096;
const MAX_ERROR_CHARS = 16_000;

/**
 * Reads the stream to its end, keeping at most `max` bytes. Past that the rest is read and dropped (up to a bound)
 * rather than left unread: a writer whose pipe closes early fails on its side, and Claude Code should hear why.
 */
export async function readBounded(stream: NodeJS.ReadableStream, max = MAX_STDIN_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > max * 64) break;
    if (size <= max) chunks.push(b);
  }
  if (size > max) throw new HookInputError(`stdin: more than ${max / 1024} KiB; refused`);
  return Buffer.concat(chunks).toString('utf8');
}

export function parseHookInput(text: string): HookInput {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new HookInputError('stdin: not JSON (this command reads the JSON Claude Code sends a hook)');
  }
  if (!isObject(raw)) throw new HookInputError('stdin: not a JSON object');
  const event = raw.hook_event_name;
  if (typeof event !== 'string' || !(HOOK_EVENTS as readonly string[]).includes(event))
    throw new HookInputError(
      `stdin: hook_event_name ${JSON.stringify(event)} is not one this command answers (${HOOK_EVENTS.join(', ')})`,
    );
  const input: HookInput = {
    event: event as HookEvent,
    sessionId: text_(raw, 'session_id', MAX_ID_CHARS, true)!,
    toolName: text_(raw, 'tool_name', MAX_ID_CHARS, true)!,
    toolInput: {},
  };
  if (!isObject(raw.tool_input)) throw new HookInputError('stdin: tool_input must be a JSON object');
  input.toolInput = raw.tool_input;
  // PreToolUse and the reports need the id: it names the call in Tollgate, and the report finds the call by it.
  const toolUseId = text_(raw, 'tool_use_id', MAX_ID_CHARS, event !== 'PermissionRequest');
  if (toolUseId !== undefined) input.toolUseId = toolUseId;
  const cwd = text_(raw, 'cwd', MAX_PATH_CHARS, false);
  if (cwd !== undefined) input.cwd = cwd;
  const mode = text_(raw, 'permission_mode', 64, false);
  if (mode !== undefined) input.permissionMode = mode;
  if (event === 'PostToolUse') input.toolResponse = raw.tool_response;
  if (event === 'PostToolUseFailure') {
    const e = raw.error;
    input.error = storable(cut(typeof e === 'string' ? e : (JSON.stringify(e) ?? 'failed'), MAX_ERROR_CHARS));
  }
  return input;
}

/** NUL and a surrogate without its pair: the server refuses a string holding either (JSON it cannot store). */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The text with NUL and lone surrogates replaced by U+FFFD, so a tool's odd output is still reported. */
export function storable(s: string): string {
  return s.replace(UNSTORABLE, '\uFFFD');
}

/** At most `max` UTF-16 units, never ending between the two halves of a character (an emoji cut there). */
export function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  const c = s.charCodeAt(max - 1);
  return s.slice(0, c >= 0xd800 && c <= 0xdbff ? max - 1 : max);
}

/** A JSON value with every string, keys too, made storable. */
export function storableJson(text: string): unknown {
  return JSON.parse(text, function (_key, v: unknown) {
    if (typeof v === 'string') return storable(v);
    if (isObject(v) && Object.keys(v).some((k) => storable(k) !== k))
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [storable(k), x]));
    return v;
  });
}

function text_(raw: Record<string, unknown>, key: string, max: number, required: boolean): string | undefined {
  const v = raw[key];
  if (v === undefined || v === null) {
    if (required) throw new HookInputError(`stdin: ${key} is missing`);
    return undefined;
  }
  if (typeof v !== 'string' || v.length === 0) throw new HookInputError(`stdin: ${key} must be a non-empty string`);
  if (v.length > max) throw new HookInputError(`stdin: ${key} is longer than ${max} characters`);
  return v;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
