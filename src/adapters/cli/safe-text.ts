/**
 * Text from outside (an agent's tool call, a provider, names a server passes on) made safe for a terminal. A control
 * character reaching the terminal is an instruction to it: `ESC[8m` hides what follows, cursor moves and `\r`
 * overwrite lines, a bidi override reorders them, so an agent could print a fake "arguments:" line and prompt
 * over the real ones. Everything a person reads before deciding goes through here first.
 */

/** C0 and DEL, C1 (0x9b alone is a CSI on some terminals), and the bidi embeddings, overrides, isolates and marks. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** What JSON.stringify leaves as is but a terminal acts on (it escapes C0 itself), and the line separators. */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** Shown in place of a line break in text kept to one line: the person sees there was one, and where. */
export const LINE_BREAK_MARK = '↵';

function bounded(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** No control characters at all (line breaks included), bounded. */
export function printable(s: string, max = 2048): string {
  return bounded(s.replace(UNSAFE, ''), max);
}

/**
 * Agent text on one line: a line break shows as ↵ (so a fake line cannot pass for the terminal's own), a tab as a
 * space, every other control character gone. `undefined`/`null` stay empty.
 */
export function oneLineText(s: string | null | undefined, max = Infinity): string {
  if (s === undefined || s === null) return '';
  const flat = String(s)
    .replace(/\r\n|[\r\n\u2028\u2029\u0085]/g, LINE_BREAK_MARK)
    .replace(/\t/g, ' ')
    .replace(UNSAFE, '');
  return bounded(flat, max);
}

/**
 * JSON as shown to a person: still valid JSON with the same value, but whatever a terminal would act on inside its
 * strings written as a `\uXXXX` escape (JSON.stringify escapes only C0), so the real characters stay visible.
 */
export function safeJson(value: unknown, indent?: number): string {
  return (JSON.stringify(value, null, indent) ?? '').replace(
    UNSAFE_IN_JSON,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
