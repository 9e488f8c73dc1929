import type { ValidationFault } from '../../domain/shared/domain-error';

/**
 * Checks values against a tool's registered input schema (JSON Schema): a person's edit is checked before it is
 * accepted. Compiled validators are cached by the schema's content, so a tool registered again with a new schema
 * gets a new one. Faults name the offending place as a JSON pointer into the value (`/amount`, `` for the root).
 */
export const INPUT_SCHEMAS = Symbol('InputSchemas');

export interface InputSchemas {
  /** The faults of `value` under `schema` (empty: it conforms). */
  check(schema: Record<string, unknown>, value: unknown): ValidationFault[];
}
