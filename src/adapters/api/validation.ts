import { plainToInstance } from 'class-transformer';
import { ValidationError as CvError, validateSync } from 'class-validator';
import { ValidationError, ValidationFault } from '../../domain/shared/domain-error';

type Ctor<T> = new () => T;
type Path = Array<string | number>;

/** The free-JSON members of the documented bodies (CONTRACT §11): kept exactly as sent, never transformed. */
const FREE_JSON = new Set(['arguments', 'metadata', 'output']);
/** No documented field has these names; class-transformer would choke on or silently drop them. */
const RESERVED_KEYS = new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__', 'prototype']);
export const MAX_DEPTH = 64;

/**
 * Validates a request body against its DTO: unknown fields are refused at every documented
 * level, each fault names its path, and free JSON (`arguments`, `metadata`, `output`) comes back
 * exactly as sent — class-transformer only ever sees a placeholder for it.
 */
export function parseBody<T extends object>(dto: Ctor<T>, raw: unknown, fast?: (raw: unknown) => boolean): T {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ValidationError([{ path: '', message: 'the body must be a JSON object' }]);
  }
  inspect(raw);
  // A hot-path body its compiled schema takes is taken as it is (compiled-bodies.ts); the rest are judged below.
  if (fast?.(raw)) return raw as T;
  const free: Array<{ path: Path; value: unknown }> = [];
  const instance = plainToInstance(dto, shell(raw, [], free));
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true });
  if (errors.length > 0) throw new ValidationError(flatten(errors, ''));
  for (const { path, value } of free) restore(instance, path, value);
  return instance;
}

function show(path: Path): string {
  return path.reduce<string>((s, k) => (typeof k === 'number' ? `${s}[${k}]` : s ? `${s}.${k}` : k), '') || '(body)';
}

/**
 * One iterative pass before anything recursive runs: bounded depth, no NUL characters (PostgreSQL text and
 * jsonb cannot hold them), no reserved key names outside free JSON.
 */
function inspect(root: unknown): void {
  const stack: Array<{ v: unknown; path: Path; free: boolean }> = [{ v: root, path: [], free: false }];
  while (stack.length > 0) {
    const { v, path, free } = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000'))
        throw new ValidationError([{ path: show(path), message: 'text may not contain the NUL character (\\u0000)' }]);
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (path.length >= MAX_DEPTH)
      throw new ValidationError([{ path: show(path), message: `is nested more than ${MAX_DEPTH} levels deep` }]);
    if (Array.isArray(v)) {
      v.forEach((child, i) => stack.push({ v: child, path: [...path, i], free }));
      continue;
    }
    for (const [k, child] of Object.entries(v)) {
      const at = [...path, k];
      if (k.includes('\u0000'))
        throw new ValidationError([{ path: show(at), message: 'names may not contain the NUL character (\\u0000)' }]);
      if (!free && RESERVED_KEYS.has(k))
        throw new ValidationError([{ path: show(at), message: `unknown field "${k}"` }]);
      stack.push({ v: child, path: at, free: free || FREE_JSON.has(k) });
    }
  }
}

/** A copy for class-transformer in which each free-JSON object or array is an empty placeholder of its kind (so its type is still checked). */
function shell(v: unknown, path: Path, free: Array<{ path: Path; value: unknown }>): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((child, i) => shell(child, [...path, i], free));
  const out: Record<string, unknown> = {};
  for (const [k, child] of Object.entries(v)) {
    if (FREE_JSON.has(k) && child !== null && typeof child === 'object') {
      free.push({ path: [...path, k], value: child });
      out[k] = Array.isArray(child) ? [] : {};
    } else {
      out[k] = shell(child, [...path, k], free);
    }
  }
  return out;
}

function restore(target: object, path: Path, value: unknown): void {
  let node = target as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) node = node[k] as Record<string | number, unknown>;
  Object.defineProperty(node, path[path.length - 1], { value, enumerable: true, writable: true, configurable: true });
}

function flatten(errors: CvError[], prefix: string): ValidationFault[] {
  const out: ValidationFault[] = [];
  for (const e of errors) {
    const path = prefix
      ? /^\d+$/.test(e.property)
        ? `${prefix}[${e.property}]`
        : `${prefix}.${e.property}`
      : e.property;
    if (e.constraints) {
      const unknown = e.constraints.whitelistValidation;
      out.push({
        path,
        message: unknown ? `unknown field "${e.property}"` : firstMessage(e.constraints).replace(/^\S+ /, ''),
      });
    }
    if (e.children?.length) out.push(...flatten(e.children, path));
  }
  return out;
}

/** The type of a value is wrong before its length or range is: say that first. */
const FIRST = ['isDefined', 'isObject', 'isArray', 'isString', 'isBoolean', 'isNumber', 'isIn', 'matches'];

function firstMessage(constraints: Record<string, string>): string {
  const key = FIRST.find((k) => k in constraints) ?? Object.keys(constraints)[0];
  return constraints[key];
}
