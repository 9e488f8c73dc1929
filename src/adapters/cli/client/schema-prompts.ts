import type { Preview } from '@tollgate/sdk';
import { oneLineText as clean } from '../safe-text';

/**
 * The inbox's field-by-field edit, made from a tool's input schema: one prompt per top-level field the terminal can
 * take on one line (a string, a number, an integer, a boolean, an enum); objects, arrays and anything else keep
 * their values and are edited as JSON in $EDITOR (E). The server checks the result against the schema.
 */
export interface PromptField {
  name: string;
  kind: 'string' | 'number' | 'integer' | 'boolean' | 'enum';
  options?: Array<string | number | boolean | null>;
  required: boolean;
  description?: string;
}

type Schema = Record<string, unknown>;
const isSchema = (v: unknown): v is Schema => v !== null && typeof v === 'object' && !Array.isArray(v);
const PRIMITIVE = new Set(['string', 'number', 'integer', 'boolean']);

function typeOf(s: Schema): string | undefined {
  if (typeof s.type === 'string') return s.type;
  if (Array.isArray(s.type)) {
    const rest = s.type.filter((t) => t !== 'null');
    return rest.length === 1 && typeof rest[0] === 'string' ? rest[0] : undefined;
  }
  return undefined;
}

/** The fields a terminal prompts for, in the schema's order; empty when the schema is not an object's. */
export function promptFields(schema: unknown): PromptField[] {
  if (!isSchema(schema) || typeOf(schema) !== 'object' || !isSchema(schema.properties)) return [];
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(schema.properties).flatMap(([name, s]): PromptField[] => {
    if (!isSchema(s)) return [];
    const description = typeof s.description === 'string' ? s.description : undefined;
    const base = { name, required: required.has(name), ...(description ? { description } : {}) };
    if (Array.isArray(s.enum) && s.enum.length > 0 && s.enum.every((o) => o === null || typeof o !== 'object'))
      return [{ ...base, kind: 'enum', options: s.enum as PromptField['options'] }];
    const t = typeOf(s);
    return t && PRIMITIVE.has(t) ? [{ ...base, kind: t as PromptField['kind'] }] : [];
  });
}

/** What the prompt starts with: the current value as it would be typed. */
export function answerText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The prompt's label: the field, its type (or choices), whether required. Agent-named: cleaned for the terminal. */
export function fieldLabel(f: PromptField, index: number, of: number): string {
  const what =
    f.kind === 'enum'
      ? `one of ${f.options!.map((o) => clean(String(o), 40)).join(' | ')}`
      : f.kind === 'boolean'
        ? 'y/n'
        : f.kind;
  return `${index + 1}/${of} ${clean(f.name, 60)} (${what}${f.required ? ', required' : ''}${f.description ? ` — ${clean(f.description, 80)}` : ''}): `;
}

/**
 * The value typed for a field: `undefined` leaves the member out (an empty answer to a field that is not required).
 * A number that is not one, a choice not offered, an empty required field: an error, and the prompt asks again.
 */
export function parseAnswer(f: PromptField, text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const t = text.trim();
  if (t === '' && f.kind !== 'string')
    return f.required ? { ok: false, error: `${f.name} is required` } : { ok: true, value: undefined };
  switch (f.kind) {
    case 'string':
      return t === '' && !f.required ? { ok: true, value: undefined } : { ok: true, value: text };
    case 'boolean':
      if (/^(y|yes|true)$/i.test(t)) return { ok: true, value: true };
      if (/^(n|no|false)$/i.test(t)) return { ok: true, value: false };
      return { ok: false, error: 'answer y or n' };
    case 'number':
    case 'integer': {
      const n = Number(t);
      if (!Number.isFinite(n)) return { ok: false, error: 'not a number' };
      if (f.kind === 'integer' && !Number.isInteger(n)) return { ok: false, error: 'not a whole number' };
      return { ok: true, value: n };
    }
    case 'enum': {
      const hit = f.options!.find((o) => String(o) === t);
      return hit === undefined && t !== 'null'
        ? { ok: false, error: `choose one of ${f.options!.join(', ')}` }
        : { ok: true, value: hit ?? null };
    }
  }
}

/** The most lines of a preview the details view shows (the arguments must still fit below it). */
export const CLI_PREVIEW_LINES = 12;

/**
 * A call's preview as the details view shows it: a heading, then its lines, each cleaned of what a terminal acts on
 * (the agent wrote them) and indented; a diff's added lines green and removed ones red; at most `max` lines, with
 * how many more. An image is named only.
 */
export function previewLines(
  p: Preview,
  paint: { green(s: string): string; red(s: string): string; dim(s: string): string },
  max = CLI_PREVIEW_LINES,
): string[] {
  const head = `Preview       ${clean(p.kind)}${p.title ? ` — ${clean(p.title, 120)}` : ''} ${paint.dim(`(digest ${p.digest.slice(0, 12)}…)`)}`;
  if (p.kind === 'image') return [head, `  ${paint.dim('an image: open the card in the web inbox to see it')}`];
  const lines: string[] = [];
  if (p.kind === 'email' && p.email)
    for (const k of ['from', 'to', 'cc', 'subject'] as const)
      if (p.email[k] !== undefined) lines.push(`${k[0].toUpperCase()}${k.slice(1)}: ${p.email[k]}`);
  if (p.kind === 'sql' && p.estimatedRows !== undefined) lines.push(`-- estimated rows: ${p.estimatedRows}`);
  lines.push(...p.content.split(/\r\n|\n/));
  const shown = lines.slice(0, max).map((l) => {
    const text = `  ${clean(l, 300)}`;
    if (p.kind !== 'diff' || l.startsWith('+++') || l.startsWith('---')) return text;
    return l.startsWith('+') ? paint.green(text) : l.startsWith('-') ? paint.red(text) : text;
  });
  if (lines.length > max)
    shown.push(`  ${paint.dim(`… ${lines.length - max} more lines: open the card in the web inbox`)}`);
  return [head, ...shown];
}
