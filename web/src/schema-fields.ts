/**
 * The web card's edit form, as data: which field a tool's input schema makes of each argument (ui/SchemaForm.tsx
 * renders them), and how what a person types is read.
 */

type Schema = Record<string, unknown>;
export type Primitive = 'string' | 'number' | 'integer' | 'boolean';
export type FieldKind =
  | { kind: 'enum'; options: Array<string | number | boolean | null> }
  | { kind: Primitive }
  | { kind: 'object'; schema: Schema }
  | { kind: 'array'; item: Primitive | { enum: Array<string | number | boolean | null> } }
  | { kind: 'json' };

const PRIMITIVES = new Set(['string', 'number', 'integer', 'boolean']);
/** Fieldsets nest at most this deep; deeper objects are JSON fields. */
const MAX_NESTING = 6;

function typeOf(s: Schema): string | undefined {
  const t = s.type;
  if (typeof t === 'string') return t;
  // ["string", "null"]: the one type besides null.
  if (Array.isArray(t)) {
    const rest = t.filter((x) => x !== 'null');
    return rest.length === 1 && typeof rest[0] === 'string' ? rest[0] : undefined;
  }
  return undefined;
}

export function isSchema(v: unknown): v is Schema {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function isPrimitiveValue(v: unknown): v is string | number | boolean | null {
  return v === null || ['string', 'number', 'boolean'].includes(typeof v);
}

/** How one field of the schema is edited. */
export function fieldKind(s: unknown, depth = 0): FieldKind {
  if (!isSchema(s)) return { kind: 'json' };
  if (Array.isArray(s.enum) && s.enum.length > 0 && s.enum.every(isPrimitiveValue))
    return { kind: 'enum', options: s.enum };
  const t = typeOf(s);
  if (t && PRIMITIVES.has(t)) return { kind: t as Primitive };
  if (t === 'object' && isSchema(s.properties) && depth < MAX_NESTING) return { kind: 'object', schema: s };
  if (t === 'array' && isSchema(s.items)) {
    const items = s.items;
    if (Array.isArray(items.enum) && items.enum.every(isPrimitiveValue))
      return { kind: 'array', item: { enum: items.enum } };
    const it = typeOf(items);
    if (it && PRIMITIVES.has(it)) return { kind: 'array', item: it as Primitive };
  }
  return { kind: 'json' };
}

/** Whether the schema makes a form at all: an object with named properties (else the card keeps the JSON editor). */
export function formable(schema: unknown): schema is Schema {
  return isSchema(schema) && fieldKind(schema).kind === 'object';
}

/** A field's value from what was typed: numbers parsed (an empty box leaves the member out), text as it is. */
export function parseField(kind: Primitive, text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (kind === 'string') return { ok: true, value: text };
  if (kind === 'boolean') return { ok: true, value: text === 'true' };
  if (text.trim() === '') return { ok: true, value: undefined };
  const n = Number(text);
  if (!Number.isFinite(n)) return { ok: false, error: 'Not a number' };
  if (kind === 'integer' && !Number.isInteger(n)) return { ok: false, error: 'Not a whole number' };
  return { ok: true, value: n };
}

/** A copy of `obj` with `key` set, or left out when `value` is undefined. */
export function withMember(obj: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const next = { ...obj };
  if (value === undefined) delete next[key];
  else next[key] = value;
  return next;
}
