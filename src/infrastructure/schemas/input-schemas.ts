import { Injectable } from '@nestjs/common';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';
import type { InputSchemas } from '../../application/ports/input-schema.port';
import { DomainError, type ValidationFault } from '../../domain/shared/domain-error';

/** The most a tool's input schema may hold, serialised (UTF-8 bytes). */
export const MAX_INPUT_SCHEMA_BYTES = 64 * 1024;
/** The deepest a tool's input schema may nest (objects and arrays). */
export const MAX_INPUT_SCHEMA_DEPTH = 32;
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
 * A tool's input schema as registered, checked: a JSON object of at most 64 KiB and 32 levels, of a JSON Schema
 * dialect Ajv knows (draft-07 by default; 2019-09, 2020-12 by `$schema`), valid against its meta-schema, and
 * compilable without fetching anything. Otherwise 400 `input_schema_invalid`, with the meta-schema's faults.
 */
export function checkInputSchema(schema: unknown): Record<string, unknown> {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema))
    throw invalid('must be a JSON object (a JSON Schema)');
  const s = schema as Record<string, unknown>;
  if (Buffer.byteLength(JSON.stringify(s)) > MAX_INPUT_SCHEMA_BYTES) throw invalid('is larger than 64 KiB');
  if (depthOf(s, MAX_INPUT_SCHEMA_DEPTH) > MAX_INPUT_SCHEMA_DEPTH)
    throw invalid(`nests deeper than ${MAX_INPUT_SCHEMA_DEPTH} levels`);
  const d = dialectOf(s);
  if (!d) throw invalid('names a $schema this server does not know (draft-07, 2019-09 or 2020-12)');
  const ajv = AJV[d];
  if (!ajv.validateSchema(s)) throw invalid('is not a valid JSON Schema', faultsOf(ajv.errors, '/inputSchema'));
  compiled(s);
  return s;
}

const cache = new Map<string, ValidateFunction>();

/** The schema's compiled validator, from the cache when its content was compiled before. */
function compiled(schema: Record<string, unknown>): ValidateFunction {
  const key = createHash('sha256')
    .update(canonicalize(schema) ?? 'null')
    .digest('base64url');
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const d = dialectOf(schema) ?? 'draft-07';
  let fn: ValidateFunction;
  try {
    fn = AJV[d].compile(schema);
  } catch (e) {
    // An unresolvable $ref (remote or missing), an unknown format, a bad pattern: the compile's reason, no stack.
    throw invalid(`does not compile: ${(e as Error).message.slice(0, 300)}`);
  }
  cache.set(key, fn);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  return fn;
}

@Injectable()
export class AjvInputSchemas implements InputSchemas {
  check(schema: Record<string, unknown>, value: unknown): ValidationFault[] {
    const fn = compiled(schema);
    return fn(value) ? [] : faultsOf(fn.errors);
  }
}
