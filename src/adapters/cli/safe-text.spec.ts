import { oneLineText, printable, safeJson } from './safe-text';

describe('text from outside, made safe for a terminal', () => {
  const controls =
    '\x00\x07\x1b[8m\x7f\u0085\u009b2J\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c';

  it('one-line text: line breaks shown as ↵, tabs as spaces, C0, DEL, C1 and bidi controls gone', () => {
    expect(oneLineText(`a\r\nb\nc\rd\te${controls}f`)).toBe('a↵b↵c↵d e[8m↵2Jf');
    expect(oneLineText(undefined)).toBe('');
    expect(oneLineText('x'.repeat(20), 5)).toBe('xxxx…');
  });

  it('printable text loses every control character, line breaks included, and the bidi ones', () => {
    expect(printable(`a\nb${controls}c`)).toBe('ab[8m2Jc');
  });

  it('JSON keeps its value but shows what a terminal would act on as escapes', () => {
    const value = { 'k\u202e': `v\x1b[8m\u009b\x7f\u2066\u2028` };
    const shown = safeJson(value);
    expect(shown).toBe('{"k\\u202e":"v\\u001b[8m\\u009b\\u007f\\u2066\\u2028"}');
    expect(JSON.parse(shown)).toEqual(value);
    expect(safeJson(undefined)).toBe('');
  });
});
