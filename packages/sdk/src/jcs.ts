/**
 * RFC 8785 JSON Canonicalization Scheme (JCS) for JSON values: object members sorted by their names' UTF-16
 * code units, no whitespace, strings and numbers written as ECMAScript's JSON.stringify writes them (for
 * numbers that is Number.prototype.toString, which is what JCS specifies). It gives the same text as the
 * `canonicalize` package the server hashes with, so digests agree. A string with a lone surrogate is refused
 * (TypeError): RFC 8785 takes I-JSON, which forbids them, and the server refuses them at input.
 */
export function canonicalJson(value: unknown): string {
  const out = write(value, new Set());
  if (out === undefined) throw new TypeError(`${typeof value} is not a JSON value`);
  return out;
}

function write(value: unknown, seen: Set<object>): string | undefined {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError(`${value} is not allowed in JSON`);
  if (typeof value === 'bigint') throw new TypeError('BigInt is not a JSON value');
  if (typeof value === 'string') return text(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value); // undefined, functions, symbols: undefined
  const withToJson = value as { toJSON?: unknown };
  if (typeof withToJson.toJSON === 'function') return write((withToJson.toJSON as () => unknown).call(value), seen);
  if (seen.has(value)) throw new TypeError('a cyclic structure is not JSON');
  seen.add(value);
  try {
    if (Array.isArray(value)) return `[${value.map((v) => write(v, seen) ?? 'null').join(',')}]`;
    const members: string[] = [];
    for (const key of Object.keys(value).sort()) {
      const v = write((value as Record<string, unknown>)[key], seen);
      if (v !== undefined) members.push(`${text(key)}:${v}`);
    }
    return `{${members.join(',')}}`;
  } finally {
    seen.delete(value);
  }
}

/** In a `u` regular expression a surrogate pair is one code point, so this finds only lone surrogates. */
const LONE_SURROGATE = /\p{Cs}/u;

function text(s: string): string {
  if (LONE_SURROGATE.test(s))
    throw new TypeError('a string with a lone surrogate (U+D800 to U+DFFF unpaired) is not JSON Tollgate keeps');
  return JSON.stringify(s);
}

/** SHA-256 of the JCS text, in hex: the receipt's `args` claim and the audit trail's `argumentsDigest`. */
export async function argumentsDigest(value: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalJson(value));
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}
