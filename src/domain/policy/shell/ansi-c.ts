import { Unparsable } from './parts';

/**
 * `$'…'` starting at `start` (its `$`), with its escapes decoded as bash decodes them, so `$'\x72m'` reads as `rm`:
 * the text and the index past the closing quote.
 */
export function ansiC(src: string, start: number): { text: string; end: number } {
  let text = '';
  for (let pos = start + 2; pos < src.length; pos++) {
    const c = src[pos];
    if (c === "'") return { text, end: pos + 1 };
    if (c !== '\\') {
      text += c;
      continue;
    }
    const m = /^\\(?:x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|([0-7]{1,3})|c(.)|([\s\S]))/.exec(
      src.slice(pos, pos + 10),
    );
    if (!m) throw new Unparsable("an unclosed $'");
    const [all, hex, u4, u8, octal, control, simple] = m;
    const code = hex ?? u4 ?? u8;
    if (code !== undefined) text += safeCodePoint(parseInt(code, 16));
    else if (octal !== undefined) text += String.fromCharCode(parseInt(octal, 8) & 0xff);
    else if (control !== undefined) text += String.fromCharCode(control.charCodeAt(0) & 0x1f);
    else text += ANSI_ESCAPES[simple] ?? `\\${simple}`;
    pos += all.length - 1;
  }
  throw new Unparsable("an unclosed $'");
}

const ANSI_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

function safeCodePoint(code: number): string {
  return code <= 0x10ffff ? String.fromCodePoint(code) : '';
}
