import fc from 'fast-check';
import { createHash } from 'node:crypto';
import {
  isRedactedMarker,
  maskArguments,
  redactedMarker,
  redactionFault,
  restoreEdit,
  unionRedactions,
} from './redaction';

const digest = (v: unknown) =>
  createHash('sha256')
    .update(JSON.stringify(v) ?? 'undefined')
    .digest('hex')
    .slice(0, 12);
const mask = (args: Record<string, unknown>, names: string[]) => maskArguments(args, names, digest);

describe('maskArguments', () => {
  it('masks a top-level key, a nested dotted path and a glob at any depth', () => {
    const { masked, count } = mask(
      {
        password: 'hunter2',
        headers: { Authorization: 'Bearer abc', accept: 'json' },
        nested: { deep: { refresh_token: 'r1', keep: 1 } },
        url: 'https://x',
      },
      ['password', 'headers.authorization', '*token*'],
    );
    expect(count).toBe(3);
    expect(masked.password).toBe(redactedMarker(digest('hunter2')));
    expect(masked.headers).toEqual({ Authorization: redactedMarker(digest('Bearer abc')), accept: 'json' });
    expect(masked.nested).toEqual({ deep: { refresh_token: redactedMarker(digest('r1')), keep: 1 } });
    expect(masked.url).toBe('https://x');
  });

  it('applies a path segment to each element of an array, and masks whole objects and numbers', () => {
    const { masked } = mask({ items: [{ card: { n: 1 } }, { card: 42 }, 'x'], pin: 1234 }, ['items.card', 'pin']);
    expect(masked).toEqual({
      items: [{ card: redactedMarker(digest({ n: 1 })) }, { card: redactedMarker(digest(42)) }, 'x'],
      pin: redactedMarker(digest(1234)),
    });
  });

  it('keeps a dotted path to the top: `headers.authorization` does not match under another key', () => {
    const args = { other: { headers: { authorization: 'x' } } };
    expect(mask(args, ['headers.authorization']).masked).toEqual(args);
  });

  it('equal secrets show equal digests; the input is not modified', () => {
    const args = { a: { password: 's' }, b: { password: 's' } };
    const { masked } = mask(args, ['password']);
    expect((masked.a as Record<string, unknown>).password).toBe((masked.b as Record<string, unknown>).password);
    expect(args.a.password).toBe('s');
  });

  it('keeps a `__proto__` key as an own key', () => {
    const args = JSON.parse('{"__proto__": {"token": "t"}, "x": 1}') as Record<string, unknown>;
    const { masked } = mask(args, ['*token*']);
    expect(Object.keys(masked)).toEqual(['__proto__', 'x']);
    expect(JSON.stringify(masked)).not.toContain('"t"');
  });

  it('changes nothing without names', () => {
    const args = { password: 'x' };
    expect(mask(args, [])).toEqual({ masked: args, count: 0 });
  });
});

describe('redactionFault and unionRedactions', () => {
  it('refuses empty, overlong and empty-segment entries', () => {
    expect(redactionFault('headers.authorization')).toBeUndefined();
    expect(redactionFault('')).toBeDefined();
    expect(redactionFault('a..b')).toBeDefined();
    expect(redactionFault('x'.repeat(201))).toBeDefined();
    expect(redactionFault(3)).toBeDefined();
  });
  it('unites lists, each name once', () => {
    expect(unionRedactions(['password', 'Token'], undefined, ['token', 'b'])).toEqual(['password', 'Token', 'b']);
  });
});

describe('restoreEdit', () => {
  const real = { password: 'hunter2', headers: { authorization: 'Bearer abc' }, n: 1 };
  const shown = mask(real, ['password', 'headers.authorization']).masked;

  it('keeps the real value where the marker is left as shown, and takes typed values', () => {
    const edited = { ...shown, password: 'new-secret', n: 2 };
    expect(restoreEdit(edited, shown, real)).toEqual({
      password: 'new-secret',
      headers: { authorization: 'Bearer abc' },
      n: 2,
    });
  });

  it('never restores a marker moved to another place', () => {
    const edited = { note: shown.password, n: 1 };
    expect(restoreEdit(edited, shown, real)).toEqual({ note: shown.password, n: 1 });
  });
});

// Properties over random argument trees with keys from a small alphabet, so names often match.
const KEYS = ['a', 'b', 'token', 'Auth', 'x'];
const key = fc.constantFrom(...KEYS);
const leaf = fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean(), fc.constant(null));
const tree = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.array(tie('node'), { maxLength: 3 }),
    fc.dictionary(key, tie('node'), { maxKeys: 4 }),
  ),
}));
const args = fc.dictionary(key, tree.node, { maxKeys: 5 }) as fc.Arbitrary<Record<string, unknown>>;
const name = fc.oneof(
  key,
  fc.constantFrom('*tok*', 'a*', '*'),
  fc.tuple(key, key).map(([p, q]) => `${p}.${q}`),
  fc.tuple(key, key, key).map(([p, q, r]) => `${p}.${q}.${r}`),
);
const names = fc.array(name, { maxLength: 4 });

/** Every (path, value) pair of a tree, array elements as `[i]` segments. */
function entries(v: unknown, path: string[] = []): Array<[string[], unknown]> {
  const here: Array<[string[], unknown]> = [[path, v]];
  if (Array.isArray(v)) return [...here, ...v.flatMap((e, i) => entries(e, [...path, `[${i}]`]))];
  if (v && typeof v === 'object') return [...here, ...Object.entries(v).flatMap(([k, c]) => entries(c, [...path, k]))];
  return here;
}

/** An independent reading of the rules: does this key path (arrays skipped) fall at or under a named one? */
function named(path: string[], list: string[]): number {
  const keys = path.filter((k) => !/^\[\d+\]$/.test(k));
  const re = (g: string) => new RegExp(`^${g.split('*').map(escape).join('.*')}$`, 'is');
  for (let i = 0; i < keys.length; i++) {
    for (const n of list) {
      if (n.includes('.')) {
        const segs = n.split('.');
        if (segs.length === i + 1 && segs.every((s, j) => re(s).test(keys[j]))) return i + 1;
      } else if (re(n).test(keys[i])) return i + 1;
    }
  }
  return 0;
}
const escape = (s: string) => s.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');

describe('masking properties', () => {
  it('never leaves a value at a named path, and leaves every other value untouched', () => {
    fc.assert(
      fc.property(args, names, (a, list) => {
        const { masked } = mask(a, list);
        for (const [path, v] of entries(masked)) {
          const depth = named(path, list);
          const keys = path.filter((k) => !/^\[\d+\]$/.test(k));
          if (depth > 0 && depth === keys.length) expect(isRedactedMarker(v)).toBe(true);
          if (depth > 0 && depth < keys.length) throw new Error(`a value below a masked one: ${path.join('.')}`);
        }
        // Unmasked leaves: the same value at the same path in the input.
        const before = new Map(entries(a).map(([p, v]) => [JSON.stringify(p), v]));
        for (const [path, v] of entries(masked)) {
          if (named(path, list) > 0 || (v && typeof v === 'object')) continue;
          expect(before.get(JSON.stringify(path))).toEqual(v);
        }
      }),
    );
  });

  it('is idempotent', () => {
    fc.assert(
      fc.property(args, names, (a, list) => {
        const once = mask(a, list).masked;
        expect(mask(once, list).masked).toEqual(once);
      }),
    );
  });

  it('an edit that changes nothing restores the real arguments', () => {
    fc.assert(
      fc.property(args, names, (a, list) => {
        fc.pre(!entries(a).some(([, v]) => isRedactedMarker(v)));
        const { masked } = mask(a, list);
        expect(restoreEdit(masked, masked, a)).toEqual(a);
      }),
    );
  });
});
