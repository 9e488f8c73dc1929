/*
 * Secret redaction of a call's arguments (pure). A tool's registration and the policy name sensitive arguments
 * (`redact: ["password", "headers.authorization", "*token*"]`); their values are replaced by a marker carrying a
 * short keyed digest, `[redacted:hmac-3f9a0c1b2d4e]`, everywhere a call is shown or recorded. The real values are
 * kept sealed beside the call for the claim only (application/redaction).
 *
 * What a name matches:
 * - a name with a dot is a path from the top (`headers.authorization`): each segment a key name;
 * - a name without a dot is a key name at any depth (`password`, `*token*`);
 * - `*` in a segment matches any run of characters; key names compare case-insensitively (HTTP headers);
 * - arrays are transparent: a segment applies to each element.
 * The whole value at a matching key is replaced (a string, a number, an object alike).
 */

/** How a masked value reads: the marker and its digest (12 hex digits of a keyed HMAC). */
export const REDACTED_MARKER = /^\[redacted:hmac-[0-9a-f]{12}\]$/;
/** Paths one list may name, and how long each may be. */
export const MAX_REDACTIONS = 50;
export const MAX_REDACTION_LENGTH = 200;

/** A keyed digest of a value: 12 lowercase hex digits (the caller holds the key). */
export type RedactionDigest = (value: unknown) => string;

export function isRedactedMarker(v: unknown): v is string {
  return typeof v === 'string' && REDACTED_MARKER.test(v);
}

export function redactedMarker(digestHex: string): string {
  if (!/^[0-9a-f]{12}$/.test(digestHex)) throw new Error('a redaction digest is 12 lowercase hex digits');
  return `[redacted:hmac-${digestHex}]`;
}

/** Why one `redact` entry is unusable, or undefined when it is fine. */
export function redactionFault(entry: unknown): string | undefined {
  if (typeof entry !== 'string' || entry.trim() === '') return 'must be a non-empty string';
  if (entry.length > MAX_REDACTION_LENGTH) return `must be at most ${MAX_REDACTION_LENGTH} characters`;
  if (entry.split('.').some((s) => s === '')) return 'must be a dotted path without empty segments';
  return undefined;
}

/** The union of several lists, each name once (first spelling kept, compared case-insensitively). */
export function unionRedactions(...lists: ReadonlyArray<readonly string[] | undefined>): string[] {
  const seen = new Map<string, string>();
  for (const list of lists) for (const n of list ?? []) if (!seen.has(n.toLowerCase())) seen.set(n.toLowerCase(), n);
  return [...seen.values()];
}

interface Compiled {
  /** Names without a dot: key globs at any depth. */
  anywhere: RegExp[];
  /** Dotted names: one glob per segment, from the top. */
  paths: RegExp[][];
}

function glob(segment: string): RegExp {
  const body = segment
    .split('*')
    .map((part) => part.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, 'is');
}

function compile(names: readonly string[]): Compiled {
  const anywhere: RegExp[] = [];
  const paths: RegExp[][] = [];
  for (const n of names) {
    if (redactionFault(n)) continue;
    if (n.includes('.')) paths.push(n.split('.').map(glob));
    else anywhere.push(glob(n));
  }
  return { anywhere, paths };
}

/** A dotted path reached so far: which name, and how many of its segments matched. */
type Cursor = readonly [path: number, matched: number];

function step(c: Compiled, cursors: readonly Cursor[], key: string): { hit: boolean; next: Cursor[] } {
  if (c.anywhere.some((g) => g.test(key))) return { hit: true, next: [] };
  const next: Cursor[] = [];
  for (const [p, i] of cursors) {
    if (!c.paths[p][i].test(key)) continue;
    if (i + 1 === c.paths[p].length) return { hit: true, next: [] };
    next.push([p, i + 1]);
  }
  return { hit: false, next };
}

/** Sets an own property, `__proto__` included (JSON may carry that key; plain assignment would not keep it). */
function put(o: Record<string, unknown>, k: string, value: unknown): void {
  Object.defineProperty(o, k, { value, enumerable: true, writable: true, configurable: true });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The arguments with every value at a named path replaced by its marker, and how many were replaced. Values that
 * are markers already stay as they are (masking twice changes nothing); nothing else changes; the input is not
 * modified.
 */
export function maskArguments(
  args: Record<string, unknown>,
  names: readonly string[],
  digest: RedactionDigest,
): { masked: Record<string, unknown>; count: number } {
  const c = compile(names);
  if (c.anywhere.length === 0 && c.paths.length === 0) return { masked: args, count: 0 };
  let count = 0;
  const mark = (v: unknown): unknown => {
    if (isRedactedMarker(v)) return v;
    count += 1;
    return redactedMarker(digest(v));
  };
  const walk = (v: unknown, cursors: readonly Cursor[]): unknown => {
    if (Array.isArray(v)) return v.map((e) => walk(e, cursors));
    if (!isObject(v)) return v;
    const out: Record<string, unknown> = {};
    for (const [k, child] of Object.entries(v)) {
      const { hit, next } = step(c, cursors, k);
      put(out, k, hit ? mark(child) : walk(child, next));
    }
    return out;
  };
  const start: Cursor[] = c.paths.map((_, p) => [p, 0] as const);
  const masked = walk(args, start) as Record<string, unknown>;
  return { masked, count };
}

/**
 * What a person's edit means for the real arguments: they edit what they were shown (masked). A value still the
 * exact marker that was shown at the same place keeps its real value; anything else is what they typed. A marker
 * moved elsewhere is not restored there (a secret never moves to a place that is not masked).
 */
export function restoreEdit(edited: unknown, shown: unknown, real: unknown): unknown {
  if (isRedactedMarker(edited)) return edited === shown ? real : edited;
  if (Array.isArray(edited)) {
    const s = Array.isArray(shown) ? shown : [];
    const r = Array.isArray(real) ? real : [];
    return edited.map((e, i) => restoreEdit(e, s[i], r[i]));
  }
  if (!isObject(edited)) return edited;
  const s = isObject(shown) ? shown : {};
  const r = isObject(real) ? real : {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(edited)) {
    const has = Object.prototype.hasOwnProperty.call(s, k);
    put(out, k, restoreEdit(v, has ? s[k] : undefined, has ? r[k] : undefined));
  }
  return out;
}
