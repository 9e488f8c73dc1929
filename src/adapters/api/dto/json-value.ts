/**
 * Any JSON value. Nest describes an `unknown` member as an object; a member that may hold anything (a tool's
 * output) refers to this schema instead, which openapi.ts adds to the document's components.
 */
export const JSON_VALUE = {
  name: 'JsonValue',
  schema: { description: 'Any JSON value: an object, array, string, number, boolean or null' },
};
export const ANY_JSON = { allOf: [{ $ref: `#/components/schemas/${JSON_VALUE.name}` }] };
