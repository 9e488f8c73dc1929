/**
 * The expansions in which bash runs a variable's value as code. Arithmetic evaluates a name's value as an
 * expression, recursively, and an array subscript in it (`a[$(rm -rf ~)]`) runs its substitution; prompt
 * expansion (`${x@P}`) runs `$( )`; indirection (`${!x}`) evaluates a subscript in the name it finds. A reader
 * cannot know those values, so each such expansion over a variable is unreadable; over constants it is not.
 */
import { Unparsable } from './parts';
import { changesWhatRuns } from './variables';

/** Numbers in any base bash takes, and the special parameters that are always numbers (`$#`, `$?`, `$$`, `$!`). */
const CONSTANTS = /\d+#[0-9A-Za-z@_]+|0[xX][0-9A-Fa-f]+|\d+|\$[#?$!]|\$\{[#?$!]\}/g;
/** What is left in a constant expression: operators, parentheses, spaces. A name, `$`, a quote or a subscript is not. */
const NOT_CONSTANT = /[A-Za-z_$@`[\]\\'"{}]/;

/** Whether an arithmetic expression (or one operand) holds only constants and operators. */
export function isConstantArithmetic(expression: string): boolean {
  return !NOT_CONSTANT.test(expression.replace(CONSTANTS, '0'));
}

/** Throws unless `expression` is constant arithmetic; `where` names the expansion in the reason. */
export function requireConstantArithmetic(expression: string, where: string): void {
  if (!isConstantArithmetic(expression))
    throw new Unparsable(`${where} evaluates a variable's value as arithmetic, which may run a command`);
}

/** A subscript that is no expression: `@`, `*`, or a constant. */
export const isLiteralSubscript = (subscript: string) =>
  subscript === '@' || subscript === '*' || isConstantArithmetic(subscript);

const NAME = /[A-Za-z_][A-Za-z0-9_]*|\d+|[@*#?$!-]/y;

/**
 * Checks the head of the `${…}` whose text starts at `start` in `src` (right after `${`) and answers where the
 * operator after it begins: the caller reads the rest, and any substitutions in it. Throws for `${!name}`,
 * `${name[expr]}`, `${name:offset}` and `${name@P}` over anything but constants.
 */
export function checkParameterHead(src: string, start: number): number {
  let pos = start;
  if (src[pos] === '!' || (src[pos] === '#' && src[pos + 1] !== '}')) pos++;
  const prefix = pos > start ? src[start] : '';
  NAME.lastIndex = pos;
  const name = NAME.exec(src)?.[0];
  if (name === undefined) return pos;
  pos += name.length;
  let subscript: string | undefined;
  if (src[pos] === '[') {
    const end = closingBracket(src, pos);
    if (end === -1) throw new Unparsable('an unclosed subscript in ${');
    subscript = src.slice(pos + 1, end);
    if (!isLiteralSubscript(subscript))
      throw new Unparsable(
        `\${${shorten(src.slice(start, end + 1))}} has a subscript over a variable, which may run a command`,
      );
    pos = end + 1;
  }
  if (prefix === '!') {
    // `${!prefix*}`, `${!prefix@}` and `${!a[@]}` list names or keys; any other `${!…}` reads the value of a name it finds.
    const lists =
      ((src[pos] === '*' || src[pos] === '@') && src[pos + 1] === '}') ||
      ((subscript === '@' || subscript === '*') && src[pos] === '}');
    if (!lists && name !== '!') throw new Unparsable('${!…} expands a name found at run time, which may run a command');
  }
  // `${PATH:=…}` and `${PATH=…}` assign when the variable is unset or empty.
  if ((src[pos] === '=' || (src[pos] === ':' && src[pos + 1] === '=')) && changesWhatRuns(name))
    throw new Unparsable(`\${${name}:=…} assigns a variable that changes what runs`);
  if (src[pos] === '@' && src[pos + 1] === 'P')
    throw new Unparsable('${…@P} expands a value as a prompt, which runs its $( )');
  if (src[pos] === ':' && !'-=?+'.includes(src[pos + 1] ?? '')) {
    // `${x:offset:length}`: both are arithmetic. They end at the closing brace, outside any nesting.
    const end = closingBrace(src, pos);
    requireConstantArithmetic(src.slice(pos + 1, end === -1 ? undefined : end), '${…:offset}');
  }
  return pos;
}

const shorten = (text: string) => (text.length > 40 ? `${text.slice(0, 39)}…` : text);

function closingBracket(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '[') depth++;
    else if (text[i] === ']' && --depth === 0) return i;
  }
  return -1;
}

function closingBrace(text: string, from: number): number {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && depth-- === 0) return i;
  }
  return -1;
}
