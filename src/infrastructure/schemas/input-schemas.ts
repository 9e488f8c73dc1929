import { Injectable } from '@nestjs/common';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';
import type { InputSchemas } from '../../application/ports/input-schema.port';
import { DomainError, type ValidationFault } from '../../domain/shared/domain-error';

/** The most a tool's input schema may hold, serialised (UTF-8 bytes): compiling costs in proportion. */
export const MAX_INPUT_SCHEMA_BYTES = 16 * 1024;
/** The deepest a tool's input schema may nest (objects and arrays). */
export const MAX_INPUT_SCHEMA_DEPTH = 32;
/** The most objects (subschemas and the maps that hold them) a tool's input schema may hold. */
export const MAX_INPUT_SCHEMA_NODES = 1000;
/** The most `$ref`s (and `$dynamicRef`s, `$recursiveRef`s) a tool's input schema may hold. */
export const MAX_INPUT_SCHEMA_REFS = 64;
/** Compiled validators kept at once (the least recently used is dropped first). */
const CACHE_SIZE = 500;
/** The most faults an answer lists. */
const MAX_FAULTS = 50;

type Dialect = 'draft-07' | '2019-09' | '2020-12';

/**
 * One Ajv per dialect: strict off (tools' schemas carry keywords of their own: `title`, `x-…`), every error, the
 * standard formats, and no `loadSchema`: a `$ref` to anything outside the schema fails the compile, so nothing is
 * ever fetched.
 */
function makeAjv(d: Dialect): Ajv {
  const o = { strict: false, allErrors: true, validateSchema: true, addUsedSchema: false, logger: false } as const;
  const ajv = d === '2020-12' ? new Ajv2020(o) : d === '2019-09' ? new Ajv2019(o) : new Ajv(o);
  addFormats(ajv);
  return ajv;
}

const AJV: Record<Dialect, Ajv> = {
  'draft-07': makeAjv('draft-07'),
  '2019-09': makeAjv('2019-09'),
  '2020-12': makeAjv('2020-12'),
};

function dialectOf(schema: Record<string, unknown>): Dialect | undefined {
  const s = schema.$schema;
  if (s === undefined) return 'draft-07';
  if (typeof s !== 'string') return undefined;
  if (/json-schema\.org\/draft\/2020-12\/schema#?$/.test(s)) return '2020-12';
  if (/json-schema\.org\/draft\/2019-09\/schema#?$/.test(s)) return '2019-09';
  if (/json-schema\.org\/draft-0[467]\/schema#?$/.test(s)) return 'draft-07';
  return undefined;
}

function depthOf(v: unknown, limit: number): number {
  // Iterative: a hostile document must not overflow the stack before its depth is known.
  let max = 0;
  const stack: Array<[unknown, number]> = [[v, 0]];
  while (stack.length > 0) {
    const [x, d] = stack.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (d + 1 > max) max = d + 1;
    if (max > limit) return max;
    for (const child of Array.isArray(x) ? x : Object.values(x)) stack.push([child, d + 1]);
  }
  return max;
}

/** How many objects the schema holds, and how many references (any `$ref`-like member), stopping past the caps. */
function countOf(v: unknown): { nodes: number; refs: number } {
  let nodes = 0;
  let refs = 0;
  const stack: unknown[] = [v];
  while (stack.length > 0 && nodes <= MAX_INPUT_SCHEMA_NODES && refs <= MAX_INPUT_SCHEMA_REFS) {
    const x = stack.pop();
    if (x === null || typeof x !== 'object') continue;
    if (!Array.isArray(x)) {
      nodes += 1;
      for (const k of ['$ref', '$dynamicRef', '$recursiveRef']) if (k in x) refs += 1;
    }
    for (const child of Array.isArray(x) ? x : Object.values(x)) stack.push(child);
  }
  return { nodes, refs };
}

/** Keywords whose value is data, not a schema: nothing in them is ever compiled, nor may a `$ref` point into them. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);
/** Keywords whose value maps names (of properties, of definitions) to schemas: its keys are names, not keywords. */
const NAME_MAPS = new Set([
  'properties',
  'definitions',
  '$defs',
  'dependentSchemas',
  'dependencies',
  'patternProperties',
]);

/**
 * The schema as it is compiled for validation: no regular expression of the agent's is ever run on a value (a
 * pattern such as `^(a|a)*$` takes seconds per character added), so `pattern` and `format: "regex"` are dropped
 * and `patternProperties` treated as not constraining (dropped, and with it an `additionalProperties` or
 * `unevaluatedProperties` of the same object, which would otherwise refuse what the patterns let through). The
 * schema as registered keeps them: forms show them as hints. A copy; the given schema is not changed.
 */
export function withoutPatterns(schema: unknown, inNames = false): unknown {
  if (Array.isArray(schema)) return schema.map((x) => withoutPatterns(x));
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  const o = schema as Record<string, unknown>;
  const patterned = !inNames && o.patternProperties !== undefined;
  for (const [k, v] of Object.entries(o)) {
    if (inNames) {
      out[k] = withoutPatterns(v);
      continue;
    }
    if (k === 'pattern' && typeof v === 'string') continue;
    if (k === 'format' && v === 'regex') continue;
    if (k === 'patternProperties') continue;
    if (patterned && (k === 'additionalProperties' || k === 'unevaluatedProperties')) continue;
    out[k] = DATA_KEYWORDS.has(k) ? v : withoutPatterns(v, NAME_MAPS.has(k));
  }
  return out;
}

/** Whether a `$ref` (a JSON pointer into this schema) reaches into a value (`default`, `const`, `enum`, `examples`). */
function refIntoData(v: unknown): boolean {
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (x === null || typeof x !== 'object') continue;
    for (const [k, c] of Object.entries(x)) {
      if ((k === '$ref' || k === '$dynamicRef' || k === '$recursiveRef') && typeof c === 'string') {
        const hash = c.indexOf('#');
        const pointer = hash < 0 ? '' : decodeURIComponent(c.slice(hash + 1));
        if (pointer.split('/').some((seg) => DATA_KEYWORDS.has(seg.replace(/~1/g, '/').replace(/~0/g, '~'))))
          return true;
      }
      stack.push(c);
    }
  }
  return false;
}

function faultsOf(errors: ErrorObject[] | null | undefined, prefix = ''): ValidationFault[] {
  return (errors ?? []).slice(0, MAX_FAULTS).map((e) => ({
    path: `${prefix}${e.instancePath}`,
    message: `${e.message ?? 'is not allowed'}${
      e.keyword === 'additionalProperties'
        ? ` (${String((e.params as { additionalProperty?: unknown }).additionalProperty)})`
        : ''
    }${e.keyword === 'enum' ? `: ${JSON.stringify((e.params as { allowedValues?: unknown }).allowedValues)}` : ''}`,
  }));
}

function invalid(message: string, faults: ValidationFault[] = []): DomainError {
  return new DomainError('input_schema_invalid', 'invalid', `inputSchema ${message}`, { errors: faults });
}

/**
 * A tool's input schema as registered, checked: a JSON object of at most 16 KiB, 32 levels, 1,000 objects and 64
 * `$ref`s (none into a value), of a JSON Schema
 * dialect Ajv knows (draft-07 by default; 2019-09, 2020-12 by `$schema`), valid against its meta-schema, and
 * compilable without fetching anything. Otherwise 400 `input_schema_invalid`, with the meta-schema's faults.
 */
export function checkInputSchema(schema: unknown): Record<string, unknown> {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema))
    throw invalid('must be a JSON object (a JSON Schema)');
  const s = schema as Record<string, unknown>;
  if (Buffer.byteLength(JSON.stringify(s)) > MAX_INPUT_SCHEMA_BYTES) throw invalid('is larger than 16 KiB');
  if (depthOf(s, MAX_INPUT_SCHEMA_DEPTH) > MAX_INPUT_SCHEMA_DEPTH)
    throw invalid(`nests deeper than ${MAX_INPUT_SCHEMA_DEPTH} levels`);
  const { nodes, refs } = countOf(s);
  if (nodes > MAX_INPUT_SCHEMA_NODES) throw invalid(`holds more than ${MAX_INPUT_SCHEMA_NODES} objects (subschemas)`);
  if (refs > MAX_INPUT_SCHEMA_REFS) throw invalid(`holds more than ${MAX_INPUT_SCHEMA_REFS} $refs`);
  if (refIntoData(s)) throw invalid('has a $ref into a value (default, const, enum or examples)');
  const d = dialectOf(s);
  if (!d) throw invalid('names a $schema this server does not know (draft-07, 2019-09 or 2020-12)');
  const ajv = AJV[d];
  if (!ajv.validateSchema(s)) throw invalid('is not a valid JSON Schema', faultsOf(ajv.errors, '/inputSchema'));
  // A pattern that is not a regular expression is refused (forms would show it), though no pattern is ever run.
  const bad = badPattern(s);
  if (bad) throw invalid(`does not compile: ${bad}`);
  compiled(s);
  return s;
}

/** The first `pattern` or `patternProperties` key that is not a JavaScript regular expression (its reason), if any. */
function badPattern(v: unknown): string | undefined {
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (x === null || typeof x !== 'object') continue;
    const o = x as Record<string, unknown>;
    const sources = [
      ...(typeof o.pattern === 'string' ? [o.pattern] : []),
      ...(o.patternProperties && typeof o.patternProperties === 'object' ? Object.keys(o.patternProperties) : []),
    ];
    for (const p of sources) {
      try {
        new RegExp(p, 'u'); // compiled, never run
      } catch (e) {
        return (e as Error).message.slice(0, 300);
      }
    }
    for (const c of Array.isArray(x) ? x : Object.values(x)) stack.push(c);
  }
  return undefined;
}

/** Compiled validators by the schema's digest, or the reason it does not compile (a refusal is not compiled again). */
const cache = new Map<string, ValidateFunction | string>();

/**
 * The schema's compiled validator (its patterns left out: withoutPatterns), compiled at most once per content
 * digest while it stays among the CACHE_SIZE most recently used: a tool registered again with the same schema, and
 * every edit checked against it, reuse it.
 */
function compiled(schema: Record<string, unknown>): ValidateFunction {
  const key = createHash('sha256')
    .update(canonicalize(schema) ?? 'null')
    .digest('base64url');
  let hit = cache.get(key);
  if (hit === undefined) {
    const d = dialectOf(schema) ?? 'draft-07';
    try {
      hit = AJV[d].compile(withoutPatterns(schema) as Record<string, unknown>);
    } catch (e) {
      // An unresolvable $ref (remote or missing), an unknown format: the compile's reason, no stack.
      hit = (e as Error).message.slice(0, 300);
    }
  } else cache.delete(key);
  cache.set(key, hit);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  if (typeof hit === 'string') throw invalid(`does not compile: ${hit}`);
  return hit;
}

@Injectable()
export class AjvInputSchemas implements InputSchemas {
  check(schema: Record<string, unknown>, value: unknown): ValidationFault[] {
    const fn = compiled(schema);
    return fn(value) ? [] : faultsOf(fn.errors);
  }
}
