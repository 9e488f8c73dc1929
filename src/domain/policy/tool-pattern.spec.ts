import fc from 'fast-check';
import { MAX_PATTERN_LENGTH, MAX_PATTERN_WILDCARDS, ToolPattern } from './tool-pattern';

const matches = (pattern: string, toolName: string, args: Record<string, unknown> = {}) =>
  ToolPattern.parse(pattern).matches(toolName, args);

/** An independent oracle: glob matching by dynamic programming over code points. */
function globOracle(glob: string, text: string): boolean {
  const g = [...glob];
  const t = [...text];
  // can[j] = the glob read so far matches t[0..j)
  let can = t.map(() => false).concat(false);
  can[0] = true;
  for (const c of g) {
    const next = can.map(() => false);
    for (let j = 0; j <= t.length; j++) {
      if (c === '*') next[j] = can[j] || (j > 0 && next[j - 1]);
      else if (j > 0) next[j] = can[j - 1] && (c === '?' || c === t[j - 1]);
    }
    can = next;
  }
  return can[t.length];
}

/**
 * The RegExp compilation this matcher replaced (kept as a second oracle: the semantics must not change).
 * It overflowed the stack on long globs such as "*a" × 4000 + "*".
 */
function oldRegexGlob(glob: string, text: string): boolean {
  if (!/[*?]/.test(glob)) return text === glob;
  const parts = glob
    .split(/\*+/)
    .map((part) => [...part].map((c) => (c === '?' ? '.' : c.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&'))).join(''));
  const [first, last] = [parts[0], parts[parts.length - 1]];
  const middle = parts
    .slice(1, -1)
    .map((part, i) => `(?=(.*?${part}))\\${i + 1}`)
    .join('');
  return new RegExp(parts.length === 1 ? `^${first}$` : `^${first}${middle}.*${last}$`, 'su').test(text);
}

/** Characters that mean something to RegExp but nothing to a glob. */
const regexMeta = fc.constantFrom('.', '+', '^', '$', '{', '}', '[', ']', '|', '\\', '/', 'a', 'b', '-', ':');
const literal = fc.array(regexMeta, { minLength: 1, maxLength: 12 }).map((cs) => cs.join(''));
const anyText = fc.string({ unit: 'binary', maxLength: 40 });

describe('a tool pattern on the tool name', () => {
  it.each([
    ['get_*', 'get_user', true],
    ['get_*', 'get_', true],
    ['get_*', 'forget_user', false],
    ['get_*', 'GET_user', false],
    ['delete_source', 'delete_source', true],
    ['delete_source', 'delete_source2', false],
    ['delete_source', 'xdelete_source', false],
    ['send_?ail', 'send_mail', true],
    ['send_?ail', 'send_ail', false],
    ['send_?ail', 'send_maail', false],
    ['*', '', true],
    ['a.b', 'a.b', true],
    ['a.b', 'axb', false],
    ['a.*', 'a.b', true],
    ['a.*', 'axb', false],
  ])('%s against %s matches: %s', (pattern, toolName, expected) => {
    expect(matches(pattern, toolName)).toBe(expected);
  });

  it('glob * matches any string', () => {
    fc.assert(fc.property(anyText, (text) => matches('*', text)));
  });

  it('a literal pattern without wildcards matches exactly itself', () => {
    fc.assert(
      fc.property(literal, anyText, (lit, other) => {
        expect(matches(lit, lit)).toBe(true);
        expect(matches(lit, other)).toBe(other === lit);
      }),
    );
  });

  it('a pattern with regex metacharacters in the literal part matches literally', () => {
    fc.assert(
      fc.property(literal, anyText, (lit, text) => {
        expect(matches(`${lit}*`, text)).toBe(text.startsWith(lit));
        expect(matches(`*${lit}`, text)).toBe(text.endsWith(lit));
        expect(matches(`*${lit}*`, text)).toBe(text.includes(lit));
        expect(matches(`${lit}*`, lit + text)).toBe(true);
      }),
    );
  });

  it('? matches exactly one character, even one outside the basic plane', () => {
    expect(matches('a?c', 'a😀c')).toBe(true);
    expect(matches('a?c', 'ac')).toBe(false);
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 1 }), (text) => matches('?'.repeat([...text].length), text)),
    );
  });

  it('* also matches spaces, slashes and line breaks', () => {
    expect(matches('a*z', 'a b/c\nd z')).toBe(true);
  });

  it('agrees with a reference glob matcher on random globs and names', () => {
    const glob = fc.array(fc.constantFrom('a', 'b', '*', '?'), { maxLength: 8 }).map((cs) => cs.join(''));
    const name = fc.array(fc.constantFrom('a', 'b'), { maxLength: 10 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(glob, name, (g, n) => {
        expect(matches(g || 'x', n)).toBe(globOracle(g || 'x', n));
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees with the RegExp it replaced on small globs and texts, metacharacters, line breaks and astral characters included', () => {
    const unit = fc.constantFrom('a', 'b', '.', '\\', '(', '$', '\n', '😀', 'é');
    const glob = fc
      .array(fc.oneof(unit, fc.constantFrom('*', '?', '**')), { minLength: 1, maxLength: 10 })
      .map((cs) => cs.join(''));
    const text = fc.array(unit, { maxLength: 14 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(glob, text, (g, t) => {
        fc.pre(!g.includes('(') && !g.includes(')') && g.trim() !== '');
        expect(matches(g, t)).toBe(oldRegexGlob(g, t));
      }),
      { numRuns: 5000 },
    );
  });

  it('agrees with the reference matcher on globs longer than one word of automaton states', () => {
    const glob = fc
      .array(fc.constantFrom('a', 'b', '*', '?'), { minLength: 30, maxLength: 90 })
      .map((cs) => cs.join(''));
    const name = fc.array(fc.constantFrom('a', 'b'), { maxLength: 120 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(glob, name, (g, n) => expect(matches(g, n)).toBe(globOracle(g, n))),
      { numRuns: 1000 },
    );
    // Literal text that spans the word boundary must still line up.
    const long = 'a'.repeat(40) + '?' + 'b'.repeat(40) + '*';
    expect(matches(long, 'a'.repeat(40) + 'x' + 'b'.repeat(40) + 'tail')).toBe(true);
    expect(matches(long, 'a'.repeat(40) + 'x' + 'b'.repeat(39) + 'c')).toBe(false);
  });

  // The RegExp this replaced overflowed the stack on this glob: every matching proposal answered 500.
  it('matches the 8 KB glob that overflowed the RegExp matcher, without throwing', () => {
    const glob = '*a'.repeat(4000) + '*';
    expect(() => oldRegexGlob(glob, 'a'.repeat(4000))).toThrow(/overflow/);
    const pattern = ToolPattern.parse(glob);
    expect(pattern.matchesTool('a'.repeat(4000))).toBe(true);
    expect(pattern.matchesTool('a'.repeat(3999))).toBe(false);
    expect(pattern.matchesTool('ba'.repeat(4000))).toBe(true);
  });

  // A backtracking matcher would not finish this within the test timeout.
  it('answers input crafted to make a backtracking matcher blow up', () => {
    const pattern = ToolPattern.parse('f(x=*a*a*a*a*a*a*b)');
    expect(pattern.matches('f', { x: 'a'.repeat(50_000) })).toBe(false);
  });
});

describe('a tool pattern with arguments', () => {
  it.each<[string, string, Record<string, unknown>, boolean]>([
    ['shell(cmd=rm *)', 'shell', { cmd: 'rm -rf /' }, true],
    ['shell(cmd=rm *)', 'shell', { cmd: 'ls' }, false],
    ['shell(cmd=rm *)', 'shell', {}, false],
    ['shell(cmd=rm *)', 'shell2', { cmd: 'rm -rf /' }, false],
    ['shell(cmd=rm *)', 'shell', { cmd: 'rm x', cwd: '/tmp' }, true],
    ['sh*(cmd=rm *)', 'shell', { cmd: 'rm x' }, true],
    ['copy(from=/etc/*, to=/tmp/*)', 'copy', { from: '/etc/passwd', to: '/tmp/x' }, true],
    ['copy(from=/etc/*, to=/tmp/*)', 'copy', { from: '/etc/passwd', to: '/home/x' }, false],
    ['copy(from=/etc/*, to=/tmp/*)', 'copy', { from: '/etc/passwd' }, false],
    ['shell(cmd=echo a, b)', 'shell', { cmd: 'echo a, b' }, true],
    ['shell(cmd=a=b)', 'shell', { cmd: 'a=b' }, true],
    ['shell( cmd = rm * )', 'shell', { cmd: 'rm x' }, true],
    ['pay(amount=5)', 'pay', { amount: 5 }, true],
    ['pay(amount=5)', 'pay', { amount: '5' }, true],
    ['pay(amount=5)', 'pay', { amount: 50 }, false],
    ['pay(amount=5*)', 'pay', { amount: 50 }, true],
    ['flag(on=true)', 'flag', { on: true }, true],
    ['flag(on=null)', 'flag', { on: null }, true],
    ['put(doc={"a":1})', 'put', { doc: { a: 1 } }, true],
    ['put(doc=*"a"*)', 'put', { doc: { b: 2, a: 1 } }, true],
    ['put(tags=["x"])', 'put', { tags: ['x'] }, true],
    ['get(id=*)', 'get', { id: undefined }, false],
    ['get(constructor=*)', 'get', {}, false],
  ])('%s against %s %j matches: %s', (pattern, toolName, args, expected) => {
    expect(matches(pattern, toolName, args)).toBe(expected);
  });

  it('a named argument the call lacks never matches', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1 }), fc.jsonValue()), (args) => {
        fc.pre(!Object.hasOwn(args, 'wanted'));
        expect(matches('t(wanted=*)', 't', args)).toBe(false);
      }),
    );
  });

  it('any argument the call has matches *, whatever its JSON type', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => matches('t(a=*)', 't', { a: value })));
  });

  it('a number, boolean or null is matched as its JSON text', () => {
    const scalar = fc.oneof(
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
    );
    fc.assert(fc.property(scalar, (value) => matches(`t(a=${JSON.stringify(value)})`, 't', { a: value })));
  });
});

describe('the bounds of a tool pattern in a new policy', () => {
  it('accepts a pattern at the length and wildcard limits', () => {
    expect(ToolPattern.boundsFault('a'.repeat(MAX_PATTERN_LENGTH))).toBeUndefined();
    expect(ToolPattern.boundsFault('*'.repeat(MAX_PATTERN_WILDCARDS))).toBeUndefined();
    expect(ToolPattern.boundsFault(`shell(cmd=${'?'.repeat(MAX_PATTERN_WILDCARDS - 1)})*`)).toBeUndefined();
  });

  it('refuses a pattern one character or one wildcard over, saying which limit', () => {
    expect(ToolPattern.boundsFault('a'.repeat(MAX_PATTERN_LENGTH + 1))).toMatch(
      `at most ${MAX_PATTERN_LENGTH} characters`,
    );
    expect(ToolPattern.boundsFault('?'.repeat(MAX_PATTERN_WILDCARDS + 1))).toMatch(
      `at most ${MAX_PATTERN_WILDCARDS} wildcards`,
    );
    expect(ToolPattern.boundsFault(`shell(cmd=${'*x'.repeat(MAX_PATTERN_WILDCARDS + 1)})`)).toMatch(/wildcards/);
  });

  it('passes its self-check for any pattern it parses', () => {
    const glob = fc.string({ unit: fc.constantFrom('a', '_', '.', '*', '?', '😀'), minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(glob, glob, fc.boolean(), (tool, value, withArgs) => {
        fc.pre(tool.trim() !== '');
        expect(() => ToolPattern.parse(withArgs ? `${tool}(cmd=${value})` : tool).selfCheck()).not.toThrow();
      }),
    );
  });
});

describe('parsing a tool pattern', () => {
  it('gives back the text it was parsed from', () => {
    expect(ToolPattern.parse('shell(cmd=rm *)').toString()).toBe('shell(cmd=rm *)');
    expect(String(ToolPattern.parse('get_*'))).toBe('get_*');
  });

  it.each([
    ['', /empty/],
    ['   ', /empty/],
    ['shell(cmd=rm *', /must end with "\)"/],
    ['shell)', /"\)" without "\("/],
    ['(cmd=x)', /needs a tool name/],
    ['shell()', /empty argument list/],
    ['shell(rm *)', /must read name=glob/],
    ['shell(=x)', /must read name=glob/],
    ['shell(cmd=a, cmd=b)', /twice/],
  ])('refuses %j with a message that says why', (text, message) => {
    expect(() => ToolPattern.parse(text)).toThrow(message);
  });
});
