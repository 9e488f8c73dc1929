import { useState } from 'preact/hooks';
import { pretty } from '../format';
import { fieldKind, isSchema, parseField, withMember, type Primitive } from '../schema-fields';

export { formable } from '../schema-fields';

/**
 * The arguments as a form, made from the tool's JSON Schema: strings, numbers and integers, booleans, enums as
 * selects, nested objects as fieldsets, arrays of primitives as lists; any other field keeps a JSON editor of its
 * own. Arguments the schema does not name are kept as they are. The server checks the result against the schema
 * (400 arguments_invalid names each fault as a JSON pointer, shown under its field).
 */

type Schema = Record<string, unknown>;

function labelOf(key: string, s: unknown): string {
  return isSchema(s) && typeof s.title === 'string' && s.title !== '' ? s.title : key;
}

function pointerId(pointer: string): string {
  return `sf${pointer.replace(/[^A-Za-z0-9_-]/g, (c) => `_${c.charCodeAt(0).toString(16)}`)}`;
}

interface FormProps {
  schema: Schema;
  value: Record<string, unknown>;
  onChange(value: Record<string, unknown>): void;
  /** Faults by JSON pointer (`/amount`), as the server named them. */
  faults?: Record<string, string>;
  /** Called with whether every field parses (a number box holding "abc" does not). */
  onValidity?(ok: boolean): void;
  /** The form's own id: the card moves focus to it when the edit opens. */
  id?: string;
}

export function SchemaForm({ schema, value, onChange, faults = {}, onValidity, id }: FormProps) {
  const [bad, setBad] = useState<Set<string>>(new Set());
  const mark = (pointer: string, ok: boolean) => {
    const next = new Set(bad);
    if (ok) next.delete(pointer);
    else next.add(pointer);
    setBad(next);
    onValidity?.(next.size === 0);
  };
  return (
    <div class="schema-form" data-testid="schema-form" id={id} tabIndex={-1} role="group" aria-label="Arguments to run">
      <ObjectFields
        schema={schema}
        value={value}
        onChange={onChange}
        pointer=""
        depth={0}
        faults={faults}
        mark={mark}
      />
    </div>
  );
}

interface FieldsProps {
  schema: Schema;
  value: Record<string, unknown>;
  onChange(value: Record<string, unknown>): void;
  pointer: string;
  depth: number;
  faults: Record<string, string>;
  mark(pointer: string, ok: boolean): void;
}

function ObjectFields({ schema, value, onChange, pointer, depth, faults, mark }: FieldsProps) {
  const props = schema.properties as Record<string, unknown>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const others = Object.keys(value).filter((k) => !(k in props));
  return (
    <>
      {Object.entries(props).map(([key, s]) => (
        <Field
          key={key}
          name={key}
          schema={s}
          required={required.has(key)}
          value={value[key]}
          onChange={(v) => onChange(withMember(value, key, v))}
          pointer={`${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`}
          depth={depth}
          faults={faults}
          mark={mark}
        />
      ))}
      {others.length > 0 && (
        <p class="hint">
          Kept as proposed (not in the tool&apos;s schema):{' '}
          {others.map((k) => (
            <code key={k}>{k} </code>
          ))}
        </p>
      )}
    </>
  );
}

function Field({
  name,
  schema,
  required,
  value,
  onChange,
  pointer,
  depth,
  faults,
  mark,
}: {
  name: string;
  schema: unknown;
  required: boolean;
  value: unknown;
  onChange(v: unknown): void;
  pointer: string;
  depth: number;
  faults: Record<string, string>;
  mark(pointer: string, ok: boolean): void;
}) {
  const kind = fieldKind(schema, depth + 1);
  const id = pointerId(pointer);
  const fault = faults[pointer];
  const label = labelOf(name, schema);
  const description = isSchema(schema) && typeof schema.description === 'string' ? schema.description : undefined;
  const [local, setLocal] = useState<string | null>(null);
  const errorId = `${id}-error`;
  const hint = description && (
    <p class="hint" id={`${id}-hint`}>
      {description}
    </p>
  );
  const err = (text?: string) =>
    text ? (
      <p class="field-error" id={errorId} data-testid={`fault-${pointer}`}>
        {text}
      </p>
    ) : null;
  const described =
    [description ? `${id}-hint` : '', fault || local ? errorId : ''].filter(Boolean).join(' ') || undefined;

  if (kind.kind === 'object') {
    const obj = isSchema(value) ? value : {};
    return (
      <fieldset class="schema-fieldset" data-field={pointer}>
        <legend>
          {label}
          {required && <span aria-hidden="true"> *</span>}
        </legend>
        {hint}
        <ObjectFields
          schema={kind.schema}
          value={obj}
          onChange={onChange}
          pointer={pointer}
          depth={depth + 1}
          faults={faults}
          mark={mark}
        />
        {err(fault)}
      </fieldset>
    );
  }
  if (kind.kind === 'boolean') {
    return (
      <div class="schema-field" data-field={pointer}>
        <label class="check" for={id}>
          <input
            id={id}
            type="checkbox"
            checked={value === true}
            aria-describedby={described}
            onChange={(e) => onChange(e.currentTarget.checked)}
          />{' '}
          {label}
        </label>
        {hint}
        {err(fault)}
      </div>
    );
  }
  if (kind.kind === 'enum') {
    const index = kind.options.findIndex((o) => o === value);
    return (
      <div class="schema-field" data-field={pointer}>
        <label for={id}>
          {label}
          {required && <span aria-hidden="true"> *</span>}
        </label>
        <select
          id={id}
          value={index < 0 ? '' : String(index)}
          aria-invalid={!!fault}
          aria-describedby={described}
          onChange={(e) => {
            const i = e.currentTarget.value;
            onChange(i === '' ? undefined : kind.options[Number(i)]);
          }}
        >
          {(index < 0 || !required) && (
            <option value="">{index < 0 && value !== undefined ? `(${pretty(value)})` : '—'}</option>
          )}
          {kind.options.map((o, i) => (
            <option key={i} value={String(i)}>
              {o === null ? 'null' : String(o)}
            </option>
          ))}
        </select>
        {hint}
        {err(fault)}
      </div>
    );
  }
  if (kind.kind === 'string' || kind.kind === 'number' || kind.kind === 'integer') {
    const shown = local ?? (value === undefined || value === null ? '' : String(value));
    const long = kind.kind === 'string' && (shown.length > 80 || shown.includes('\n'));
    const input = (e: { currentTarget: { value: string } }) => {
      const text = e.currentTarget.value;
      const parsed = parseField(kind.kind as Primitive, text);
      if (parsed.ok) {
        setLocal(kind.kind === 'string' ? null : text);
        mark(pointer, true);
        onChange(parsed.value);
      } else {
        setLocal(text);
        mark(pointer, false);
      }
    };
    const localError = local !== null ? (parseField(kind.kind, local) as { ok: boolean; error?: string }) : undefined;
    return (
      <div class="schema-field" data-field={pointer}>
        <label for={id}>
          {label}
          {required && <span aria-hidden="true"> *</span>}
        </label>
        {long ? (
          <textarea
            id={id}
            rows={4}
            value={shown}
            aria-invalid={!!fault}
            aria-describedby={described}
            onInput={input}
          />
        ) : (
          <input
            id={id}
            type="text"
            inputMode={kind.kind === 'string' ? undefined : kind.kind === 'integer' ? 'numeric' : 'decimal'}
            value={shown}
            aria-invalid={!!fault || (localError && !localError.ok)}
            aria-describedby={described}
            onInput={input}
          />
        )}
        {hint}
        {err(localError && !localError.ok ? localError.error : fault)}
      </div>
    );
  }
  if (kind.kind === 'array') {
    const items = Array.isArray(value) ? value : [];
    const item = kind.item;
    return (
      <fieldset class="schema-fieldset schema-array" data-field={pointer}>
        <legend>
          {label}
          {required && <span aria-hidden="true"> *</span>}
        </legend>
        {hint}
        {items.map((v, i) => (
          <div class="schema-array-item" key={i}>
            {typeof item === 'object' ? (
              <select
                aria-label={`${label} ${i + 1}`}
                value={String(item.enum.findIndex((o) => o === v))}
                onChange={(e) =>
                  onChange(items.map((x, j) => (j === i ? item.enum[Number(e.currentTarget.value)] : x)))
                }
              >
                {item.enum.map((o, k) => (
                  <option key={k} value={String(k)}>
                    {String(o)}
                  </option>
                ))}
              </select>
            ) : item === 'boolean' ? (
              <input
                type="checkbox"
                aria-label={`${label} ${i + 1}`}
                checked={v === true}
                onChange={(e) => onChange(items.map((x, j) => (j === i ? e.currentTarget.checked : x)))}
              />
            ) : (
              <input
                type="text"
                aria-label={`${label} ${i + 1}`}
                value={v === undefined || v === null ? '' : String(v)}
                onInput={(e) => {
                  const parsed = parseField(item, e.currentTarget.value);
                  mark(`${pointer}/${i}`, parsed.ok);
                  if (parsed.ok) onChange(items.map((x, j) => (j === i ? (parsed.value ?? null) : x)));
                }}
              />
            )}{' '}
            <button
              type="button"
              onClick={() => onChange(items.filter((_, j) => j !== i))}
              aria-label={`Remove ${label} ${i + 1}`}
            >
              Remove
            </button>
            {err(faults[`${pointer}/${i}`])}
          </div>
        ))}
        <button
          type="button"
          onClick={() =>
            onChange([
              ...items,
              typeof item === 'object' ? item.enum[0] : item === 'boolean' ? false : item === 'string' ? '' : 0,
            ])
          }
        >
          Add
        </button>
        {err(fault)}
      </fieldset>
    );
  }
  // Anything else: this field's own JSON editor.
  const text = local ?? (value === undefined ? '' : pretty(value));
  let jsonError: string | undefined;
  if (local !== null && local.trim() !== '') {
    try {
      JSON.parse(local);
    } catch (e) {
      jsonError = `Not valid JSON: ${(e as Error).message}`;
    }
  }
  return (
    <div class="schema-field" data-field={pointer}>
      <label for={id}>
        {label} <span class="muted">(JSON)</span>
        {required && <span aria-hidden="true"> *</span>}
      </label>
      <textarea
        id={id}
        class="json-editor"
        rows={Math.min(10, Math.max(2, text.split('\n').length))}
        spellcheck={false}
        value={text}
        aria-invalid={!!fault || !!jsonError}
        aria-describedby={described}
        onInput={(e) => {
          const t = e.currentTarget.value;
          setLocal(t);
          if (t.trim() === '') {
            mark(pointer, true);
            onChange(undefined);
            return;
          }
          try {
            const v: unknown = JSON.parse(t);
            mark(pointer, true);
            onChange(v);
          } catch {
            mark(pointer, false);
          }
        }}
      />
      {hint}
      {err(jsonError ?? fault)}
    </div>
  );
}
