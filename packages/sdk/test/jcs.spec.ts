import fc from 'fast-check';
import { argumentsDigest, canonicalJson } from '@tollgate/sdk';
import { createHash } from 'node:crypto';

// The server's canonicalizer, required: its typings declare an ES default export for what is a CommonJS function.
const canonicalize = require('canonicalize') as (value: unknown) => string | undefined;

/**
 * The SDK's JCS must write exactly what the server's `canonicalize` writes, or receipts of correct calls would
 * be refused: compared on arbitrary JSON, with the cases RFC 8785 calls out spelled out.
 */
describe('canonicalJson (RFC 8785)', () => {
  it('writes what the canonicalize package writes, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(canonicalJson(v)).toBe(canonicalize(v));
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees on objects with unusual keys and numbers (unicode, surrogates, exponents, -0)', () => {
    const key = fc.string({ unit: 'binary', maxLength: 6 });
    const num = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer(),
      fc.constantFrom(-0, 1e21, 1e-7, 5e-324, 2 ** 53, 0.1 + 0.2),
    );
    fc.assert(
      fc.property(
        fc.dictionary(key, fc.oneof(num, fc.string({ unit: 'binary' }), fc.array(num, { maxLength: 4 }))),
        (v) => {
          expect(canonicalJson(v)).toBe(canonicalize(v));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("sorts members by UTF-16 code units and formats numbers as ECMAScript does (RFC 8785's own example)", () => {
    const input = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    expect(canonicalJson(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
    expect(canonicalJson([333333333.33333329, 1e30, 4.5, 2e-3, 0.000001, 1e-7, -0])).toBe(
      '[333333333.3333333,1e+30,4.5,0.002,0.000001,1e-7,0]',
    );
    expect(canonicalJson({ b: [1, { d: true, c: null }], a: 'x' })).toBe('{"a":"x","b":[1,{"c":null,"d":true}]}');
  });

  it('refuses what is not JSON: NaN, Infinity, BigInt, cycles, a bare undefined', () => {
    expect(() => canonicalJson(NaN)).toThrow(TypeError);
    expect(() => canonicalJson({ a: Infinity })).toThrow(TypeError);
    expect(() => canonicalJson({ a: 1n })).toThrow(TypeError);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(TypeError);
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
  });

  it('refuses a lone surrogate, in a value or a name (RFC 8785 takes I-JSON; the server refuses them at input); a pair is one character', () => {
    for (const bad of ['\ud800', 'x\ud83d', '\ude00x', '\udfff\ud800']) {
      expect(() => canonicalJson({ s: bad })).toThrow(TypeError);
      expect(() => canonicalJson({ [bad]: 1 })).toThrow(/lone surrogate/);
      expect(() => canonicalJson([bad])).toThrow(TypeError);
    }
    expect(canonicalJson({ '\ud83d\ude00': '\ud83d\ude00' })).toBe('{"\ud83d\ude00":"\ud83d\ude00"}');
  });

  it('digests the arguments as the server does: sha256 hex of the canonical text', async () => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string(), fc.jsonValue()), async (args) => {
        expect(await argumentsDigest(args)).toBe(
          createHash('sha256')
            .update(canonicalize(args) ?? 'null')
            .digest('hex'),
        );
      }),
      { numRuns: 300 },
    );
  });
});
