/** The web card's form made from a tool's input schema: which field each schema makes, and how typing is read. */
import { diffLineClass } from '../../web/src/preview';
import { fieldKind, formable, parseField, withMember } from '../../web/src/schema-fields';

describe('fieldKind', () => {
  it('makes text, number, checkbox and select fields, fieldsets for objects and lists for arrays of primitives', () => {
    expect(fieldKind({ type: 'string' })).toEqual({ kind: 'string' });
    expect(fieldKind({ type: ['integer', 'null'] })).toEqual({ kind: 'integer' });
    expect(fieldKind({ type: 'boolean' })).toEqual({ kind: 'boolean' });
    expect(fieldKind({ enum: ['EUR', 'USD'] })).toEqual({ kind: 'enum', options: ['EUR', 'USD'] });
    expect(fieldKind({ type: 'object', properties: { a: { type: 'string' } } }).kind).toBe('object');
    expect(fieldKind({ type: 'array', items: { type: 'number' } })).toEqual({ kind: 'array', item: 'number' });
    expect(fieldKind({ type: 'array', items: { enum: ['a', 'b'] } })).toEqual({
      kind: 'array',
      item: { enum: ['a', 'b'] },
    });
  });

  it('keeps a JSON editor for anything else', () => {
    for (const s of [
      { type: 'array', items: { type: 'object' } },
      { type: 'object' },
      { oneOf: [{ type: 'string' }, { type: 'number' }] },
      { enum: [{ a: 1 }] },
      true,
      null,
    ])
      expect(fieldKind(s)).toEqual({ kind: 'json' });
  });

  it('nests fieldsets only so deep', () => {
    let s: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 10; i++) s = { type: 'object', properties: { x: s } };
    expect(fieldKind(s, 6).kind).toBe('json');
    expect(fieldKind(s, 0).kind).toBe('object');
  });

  it('makes a form only of an object schema with properties', () => {
    expect(formable({ type: 'object', properties: { a: { type: 'string' } } })).toBe(true);
    expect(formable({ type: 'object' })).toBe(false);
    expect(formable({ type: 'string' })).toBe(false);
    expect(formable(undefined)).toBe(false);
  });
});

describe('parseField', () => {
  it('reads numbers and integers, leaves an empty box out, refuses what is not one', () => {
    expect(parseField('number', '12.5')).toEqual({ ok: true, value: 12.5 });
    expect(parseField('number', '')).toEqual({ ok: true, value: undefined });
    expect(parseField('number', 'abc')).toMatchObject({ ok: false });
    expect(parseField('integer', '1.5')).toMatchObject({ ok: false });
    expect(parseField('integer', '7')).toEqual({ ok: true, value: 7 });
    expect(parseField('string', ' a ')).toEqual({ ok: true, value: ' a ' });
  });

  it('sets a member, or leaves it out when undefined, without touching the original', () => {
    const before = { a: 1, b: 2 };
    expect(withMember(before, 'a', undefined)).toEqual({ b: 2 });
    expect(withMember(before, 'c', 3)).toEqual({ a: 1, b: 2, c: 3 });
    expect(before).toEqual({ a: 1, b: 2 });
  });
});

describe('a diff preview', () => {
  it('colours added and removed lines, not the file headers', () => {
    expect(['+++ b/x', '--- a/x', '+a', '-b', '@@ -1 +1 @@', ' c'].map(diffLineClass)).toEqual([
      'diff-file',
      'diff-file',
      'diff-add',
      'diff-del',
      'diff-hunk',
      'diff-ctx',
    ]);
  });
});
