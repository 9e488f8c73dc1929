import { ValidationError } from '../../domain/shared/domain-error';
import { MAX_DEPTH } from '../api/validation';

/**
 * JSON ⇄ the well-known types as @grpc/proto-loader carries them: it maps no well-known type to JSON, so a
 * `google.protobuf.Struct` travels as `{fields: {k: {stringValue | numberValue | boolValue | nullValue |
 * structValue | listValue}}}` and a `Timestamp` as `{seconds, nanos}`.
 */

/** A google.protobuf.Value as proto-loader hands it over (`kind` names the member set, with `oneofs: true`). */
export interface PbValue {
  kind?: string;
  nullValue?: string | number;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: PbStruct;
  listValue?: { values?: PbValue[] };
}

export interface PbStruct {
  fields?: Record<string, PbValue>;
}

export interface PbTimestamp {
  seconds: string;
  nanos: number;
}

export function toValue(v: unknown): PbValue {
  if (v === null || v === undefined) return { nullValue: 'NULL_VALUE' };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return { numberValue: v };
  if (typeof v === 'string') return { stringValue: v };
  if (Array.isArray(v)) return { listValue: { values: v.map(toValue) } };
  return { structValue: toStruct(v as Record<string, unknown>) };
}

export function toStruct(o: Record<string, unknown>): PbStruct {
  return { fields: Object.fromEntries(Object.entries(o).map(([k, v]) => [k, toValue(v)])) };
}

/**
 * A request's Struct as the JSON object REST would have received, checked on the way: as deep as the REST
 * body limit allows, numbers finite (JSON has no NaN or Infinity), every Value with a kind. `path` names the
 * field in a fault, as REST's validation does.
 */
export function fromStruct(s: PbStruct, path: string, depth = 1): Record<string, unknown> {
  if (depth > MAX_DEPTH) throw invalid(path, `is nested more than ${MAX_DEPTH} levels deep`);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s.fields ?? {})) {
    // A plain object, so that a key such as __proto__ is a member like any other (REST's JSON.parse does the same).
    Object.defineProperty(out, k, {
      value: fromValue(v, `${path}.${k}`, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

export function fromValue(v: PbValue, path: string, depth = 1): unknown {
  if (depth > MAX_DEPTH) throw invalid(path, `is nested more than ${MAX_DEPTH} levels deep`);
  switch (v.kind) {
    case 'nullValue':
      return null;
    case 'boolValue':
      return v.boolValue;
    case 'stringValue':
      return v.stringValue;
    case 'numberValue':
      if (!Number.isFinite(v.numberValue)) throw invalid(path, 'must be a finite number (JSON has no NaN or Infinity)');
      return v.numberValue;
    case 'listValue':
      return (v.listValue?.values ?? []).map((item, i) => fromValue(item, `${path}[${i}]`, depth + 1));
    case 'structValue':
      return fromStruct(v.structValue ?? {}, path, depth);
    default:
      throw invalid(path, 'is a google.protobuf.Value with no kind set');
  }
}

export function toTimestamp(iso: string): PbTimestamp {
  const ms = Date.parse(iso);
  const seconds = Math.floor(ms / 1000);
  return { seconds: String(seconds), nanos: (ms - seconds * 1000) * 1_000_000 };
}

function invalid(path: string, message: string): ValidationError {
  return new ValidationError([{ path, message }]);
}
