/** Brace expansion, which bash does before any other: `{rm,-rf,x}` is the three words `rm -rf x`. */
import { Unparsable, Word } from './parts';

/**
 * `{rm,-rf,x}` runs `rm -rf x`: an unquoted `{` followed by a `,` or `..` and a `}` may be a brace expansion,
 * which is not read (a `{` that came from quotes may still be counted, which only errs on the strict side).
 */
export function requireNoBraceExpansion(word: Word): void {
  if (word.braceFrom !== undefined && /(?:,|\.\.)[^]*\}/.test(word.text.slice(word.braceFrom + 1))) {
    throw new Unparsable(`a brace expansion where it may name the command (${word.text.slice(0, 40)})`);
  }
}
