import Ajv from 'ajv';
import { DomainError } from '../../domain/shared/domain-error';
import {
  AjvInputSchemas,
  checkInputSchema,
  MAX_INPUT_SCHEMA_BYTES,
  MAX_INPUT_SCHEMA_NODES,
  MAX_INPUT_SCHEMA_REFS,
  withoutPatterns,
} from './input-schemas';

const code = (schema: unknown): string | undefined => {
  try {
    checkInputSchema(schema);
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    return (e as DomainError).code;
  }
};

const SCHEMA = {
  type: 'object',
  properties: {
    amount: { type: 'number', minimum: 0 },
    email: { type: 'string', format: 'email' },
    memo: { type: 'object', properties: { note: { type: 'string', maxLength: 3 } } },
  },
  required: ['amount'],
  additionalProperties: false,
};

describe('a tool input schema, as registered', () => {
  it('is taken when it is a JSON Schema of draft-07, 2019-09 or 2020-12, with keywords of its own', () => {
    expect(code(SCHEMA)).toBeUndefined();
    expect(code({ ...SCHEMA, 'x-ui': { order: 1 }, title: 'Pay' })).toBeUndefined();
    expect(
      code({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        prefixItems: [{ type: 'string' }],
      }),
    ).toBeUndefined();
    expect(code({ $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object' })).toBeUndefined();
    expect(code({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' })).toBeUndefined();
    expect(
      code({ type: 'object', $defs: { a: { type: 'string' } }, properties: { a: { $ref: '#/$defs/a' } } }),
    ).toBeUndefined();
  });

  it('is refused, with a stable code, when it is not one or reaches outside itself', () => {
    expect(code([])).toBe('input_schema_invalid');
    expect(code({ type: 'objectx' })).toBe('input_schema_invalid');
    expect(code({ type: 'object', properties: { a: { minimum: 'x' } } })).toBe('input_schema_invalid');
    expect(code({ $schema: 'https://example.com/my-dialect', type: 'object' })).toBe('input_schema_invalid');
    expect(code({ $ref: 'https://example.com/schema.json' })).toBe('input_schema_invalid');
    expect(code({ properties: { a: { $ref: '#/definitions/missing' } } })).toBe('input_schema_invalid');
    expect(code({ type: 'string', pattern: '(' })).toBe('input_schema_invalid');
  });

  it('is bounded: 16 KiB and 32 levels', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 31; i++) deep = { not: deep };
    expect(code(deep)).toBeUndefined(); // 32 levels
    expect(code({ not: deep })).toBe('input_schema_invalid');
    expect(code({ type: 'object', description: 'x'.repeat(MAX_INPUT_SCHEMA_BYTES) })).toBe('input_schema_invalid');
  });

  it('lists what the meta-schema found wrong', () => {
    try {
      checkInputSchema({ type: 'objectx' });
    } catch (e) {
      expect((e as DomainError).details.errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ path: expect.stringMatching(/^\/inputSchema/) })]),
      );
    }
  });
});

describe('checking an edit against the schema', () => {
  const schemas = new AjvInputSchemas();

  it('passes what conforms and names each fault by a JSON pointer', () => {
    expect(schemas.check(SCHEMA, { amount: 1, email: 'a@example.com', memo: { note: 'ok' } })).toEqual([]);
    const faults = schemas.check(SCHEMA, { amount: -1, email: 'nope', memo: { note: 'long' }, extra: 1 });
    expect(faults.map((f) => f.path).sort()).toEqual(['', '/amount', '/email', '/memo/note']);
    expect(faults.find((f) => f.path === '')?.message).toMatch(/additional properties \(extra\)/);
    expect(schemas.check(SCHEMA, {}).map((f) => f.message)).toEqual(["must have required property 'amount'"]);
  });

  it('gives the same answer from the cache, and a new schema its own validator', () => {
    expect(schemas.check(SCHEMA, { amount: -1 })).toEqual(schemas.check(structuredClone(SCHEMA), { amount: -1 }));
    expect(schemas.check({ ...SCHEMA, properties: { amount: { type: 'number' } } }, { amount: -1 })).toEqual([]);
  });
});

describe('a schema never runs its own regular expressions, nor costs much to compile', () => {
  const schemas = new AjvInputSchemas();
  const EVIL = '^(a|a)*$';

  it('ignores `pattern` and `format: regex` when checking a value: a value the pattern refuses is accepted', () => {
    const schema = checkInputSchema({
      type: 'object',
      properties: { name: { type: 'string', pattern: EVIL }, re: { type: 'string', format: 'regex' } },
    });
    // Kept as registered: a form may show the pattern as a hint.
    expect((schema.properties as any).name.pattern).toBe(EVIL);
    expect(schemas.check(schema, { name: `${'a'.repeat(30)}b`, re: '(' })).toEqual([]);
    // The other keywords still hold.
    expect(schemas.check(schema, { name: 1 }).map((f) => f.path)).toEqual(['/name']);
  });

  it('treats `patternProperties` as not constraining, and what it let through is not refused as additional', () => {
    const schema = checkInputSchema({
      type: 'object',
      properties: { fixed: { type: 'number' } },
      patternProperties: { [EVIL]: { type: 'number' } },
      additionalProperties: false,
    });
    expect(schemas.check(schema, { fixed: 1, aaaa: 'not a number', other: true })).toEqual([]);
    expect(schemas.check(schema, { fixed: 'x' }).map((f) => f.path)).toEqual(['/fixed']);
  });

  it('strips keywords only where they are keywords: a property named pattern stays, data is data', () => {
    const stripped = withoutPatterns({
      type: 'object',
      properties: { pattern: { type: 'string', pattern: EVIL }, format: { type: 'string' } },
      default: { pattern: 'kept' },
      const: { pattern: 'kept' },
      $defs: { p: { type: 'string', pattern: EVIL } },
    }) as any;
    expect(stripped.properties.pattern).toEqual({ type: 'string' });
    expect(stripped.properties.format).toEqual({ type: 'string' });
    expect(stripped.default).toEqual({ pattern: 'kept' });
    expect(stripped.const).toEqual({ pattern: 'kept' });
    expect(stripped.$defs.p).toEqual({ type: 'string' });
  });

  it('refuses a $ref into a value, where a pattern would hide from the stripping', () => {
    expect(code({ default: { type: 'string', pattern: EVIL }, properties: { a: { $ref: '#/default' } } })).toBe(
      'input_schema_invalid',
    );
  });

  it(`refuses more than ${MAX_INPUT_SCHEMA_NODES} objects or ${MAX_INPUT_SCHEMA_REFS} $refs, within the size limit`, () => {
    const many = (n: number, v: (i: number) => unknown) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, v(i)]));
    const wide = { type: 'object', properties: many(MAX_INPUT_SCHEMA_NODES, () => ({})) };
    expect(Buffer.byteLength(JSON.stringify(wide))).toBeLessThan(MAX_INPUT_SCHEMA_BYTES);
    expect(code(wide)).toBe('input_schema_invalid');
    const refs = (n: number) => ({
      type: 'object',
      $defs: { s: { type: 'string' } },
      properties: many(n, () => ({ $ref: '#/$defs/s' })),
    });
    expect(Buffer.byteLength(JSON.stringify(refs(MAX_INPUT_SCHEMA_REFS + 1)))).toBeLessThan(MAX_INPUT_SCHEMA_BYTES);
    expect(code(refs(MAX_INPUT_SCHEMA_REFS))).toBeUndefined();
    expect(code(refs(MAX_INPUT_SCHEMA_REFS + 1))).toBe('input_schema_invalid');
    // 16 KiB: the old 64 KiB would have taken this.
    expect(code({ type: 'object', description: 'x'.repeat(20 * 1024) })).toBe('input_schema_invalid');
  });
});

describe('compiling', () => {
  it('happens once per schema content: registering it again and checking edits reuse the validator', () => {
    const compile = jest.spyOn(Ajv.prototype, 'compile');
    try {
      const schema = { type: 'object', properties: { once: { type: 'string', title: `t-${Date.now()}` } } };
      checkInputSchema(schema);
      checkInputSchema(structuredClone(schema));
      new AjvInputSchemas().check(schema, { once: 'x' });
      expect(compile).toHaveBeenCalledTimes(1);
      // A schema that does not compile is not compiled again either.
      const broken = { properties: { a: { $ref: `#/definitions/missing-${Date.now()}` } } };
      expect(code(broken)).toBe('input_schema_invalid');
      expect(code(broken)).toBe('input_schema_invalid');
      expect(compile).toHaveBeenCalledTimes(2);
    } finally {
      compile.mockRestore();
    }
  });
});
