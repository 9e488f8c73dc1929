/**
 * The gateway config's field readers: each reads one value, or records a fault with its path and returns
 * undefined, so that every fault of a document is reported at once. Pure: no I/O.
 */

export type Env = Record<string, string | undefined>;

/** A bare host name, as `URL` reads it back (brackets kept for IPv6), or nothing. */
export function isHostName(s: string): boolean {
  try {
    return s !== '' && new URL(`http://${s}`).hostname === s;
  } catch {
    return false;
  }
}

/** `scheme://host[:port]` normalised as browsers send it in `Origin`, or undefined for anything else. */
export function originOf(s: string): string | undefined {
  try {
    const u = new URL(s);
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.origin !== s.replace(/\/$/, '').toLowerCase())
      return undefined;
    return u.origin;
  } catch {
    return undefined;
  }
}

/** `${VAR}` in every string of the document, after parsing: a value can never change the document's shape. */
export function expand(value: unknown, path: string, env: Env, faults: string[], depth: number): unknown {
  if (depth > 16) {
    faults.push(`${path || '(root)'}: nested too deeply`);
    return undefined;
  }
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
      const v = env[name];
      if (v === undefined) {
        faults.push(`${path || '(root)'}: \${${name}} is not set in the environment`);
        return '';
      }
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => expand(v, `${path}[${i}]`, env, faults, depth + 1));
  if (isObject(value))
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, expand(v, path ? `${path}.${k}` : k, env, faults, depth + 1)]),
    );
  return value;
}

/** `{ [key]: true }` for a true boolean field, `{}` when false or absent; anything else is a fault. */
export function flag(o: Record<string, unknown>, key: string, at: string, faults: string[]): Record<string, true> {
  const v = o[key];
  if (v === undefined || v === null || v === false) return {};
  if (v === true) return { [key]: true };
  faults.push(`${at}.${key}: must be true or false`);
  return {};
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

export function unknownKeys(o: Record<string, unknown>, allowed: string[], at: string, faults: string[]): void {
  for (const k of Object.keys(o))
    if (!allowed.includes(k)) faults.push(`${at ? `${at}.` : ''}${k}: unknown field (allowed: ${allowed.join(', ')})`);
}

export function optionalObject(v: unknown, at: string, faults: string[]): Record<string, unknown> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) {
    faults.push(`${at}: must be an object`);
    return undefined;
  }
  return v;
}

export function optionalString(v: unknown, at: string, faults: string[]): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') {
    faults.push(`${at}: must be a string`);
    return undefined;
  }
  if (v.length > 8192) {
    faults.push(`${at}: at most 8,192 characters`);
    return undefined;
  }
  return v;
}

export function optionalStringList(v: unknown, at: string, faults: string[], max: number): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
    faults.push(`${at}: must be a list of strings`);
    return undefined;
  }
  if (v.length > max) faults.push(`${at}: at most ${max} items`);
  return v as string[];
}

export function stringMap(v: unknown, at: string, faults: string[]): Record<string, string> | undefined {
  const o = optionalObject(v, at, faults);
  if (!o) return undefined;
  const bad = Object.entries(o).filter(([, x]) => typeof x !== 'string');
  for (const [k] of bad) faults.push(`${at}.${k}: must be a string`);
  if (Object.keys(o).length > 256) faults.push(`${at}: at most 256 entries`);
  return bad.length ? undefined : (o as Record<string, string>);
}

export function integer(v: unknown, at: string, faults: string[], min: number, max: number): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    faults.push(`${at}: must be a whole number from ${min} to ${max}`);
    return undefined;
  }
  return v;
}
