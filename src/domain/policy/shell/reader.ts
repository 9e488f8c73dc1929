/**
 * Reads a command line into words and simple commands: lists, quoting, substitutions, subshells, redirections.
 * Each simple command goes to `collect`; what it cannot read with confidence throws `Unparsable`.
 */
import { ansiC } from './ansi-c';
import { assignment } from './environment';
import { checkParameterHead, requireConstantArithmetic } from './expansions';
import { Parts, SHELL_LIMITS, Unparsable, Word } from './parts';
import { redirection } from './redirection';
import { collect, KEYWORDS } from './simple-command';

const SPACE = new Set([' ', '\t', '\r']);
/** Characters that mean nothing special outside quotes (`#` and `{`, `}` only do at a word's start or alone). */
const ORDINARY = /[^\s;&|()<>\\'"`$]+/y;
const REDIRECT_OP = /^(?:&>>?|<<<|<<-?|<>|<&|>>|>\||>&|<|>)/;
/** Digits (`2>`) written right before `<` or `>`: the descriptor, not a word. */
const DESCRIPTOR_NUMBER = /^\d+$/;
/** `{name}` right before `<` or `>`: bash assigns the descriptor it opens (10, 11…) to `name`. */
const DESCRIPTOR_VARIABLE = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;
/** `{name[…]}` there: bash evaluates the subscript as arithmetic, running any `$( )` in a value. */
const DESCRIPTOR_ELEMENT = /^\{[A-Za-z_][A-Za-z0-9_]*\[/;
/** After `$`: what makes it an expansion rather than a literal dollar sign. */
const EXPANDS_AFTER_DOLLAR = /[A-Za-z_0-9@*#?$!({[-]/;

const plain = (text: string): Word => ({ text, quotedFrom: Infinity });
const atCommandStart = (words: readonly Word[]) =>
  words.every((w) => w.quotedFrom === Infinity && KEYWORDS.has(w.text));

export class Reader {
  private pos = 0;
  /** Set when an expansion was read; the word being built takes it at the end of the step. */
  private expanded = false;

  constructor(
    private readonly src: string,
    private readonly parts: Parts,
  ) {}

  private readonly readLine = (line: string, depth: number) => new Reader(line, this.parts).list(depth, false);

  /**
   * Reads commands until the end of the text, or until the `)` that closes a subshell or substitution when
   * `closing` (the `)` is consumed).
   */
  list(depth: number, closing: boolean): void {
    if (depth > SHELL_LIMITS.maxDepth) throw new Unparsable(`it nests deeper than ${SHELL_LIMITS.maxDepth} levels`);
    const src = this.src;
    let words: Word[] = [];
    let word: Word | undefined;
    /** The operator whose target the next word is. */
    let redirect: string | undefined;
    /** Redirections of the current command, added as parts after it. */
    let redirects: Array<[string, Word]> = [];
    /** Inside `[[ … ]]`, where `&&`, `||`, `(`, `)`, `<` and `>` are words of the test. */
    let conditional = false;
    const endWord = () => {
      if (word && redirect !== undefined) redirects.push([redirect, word]);
      else if (word) {
        if (word.quotedFrom === Infinity && word.text === '[[' && atCommandStart(words)) conditional = true;
        else if (word.quotedFrom === Infinity && word.text === ']]') conditional = false;
        words.push(word);
      }
      if (word) redirect = undefined;
      word = undefined;
    };
    const endCommand = () => {
      endWord();
      collect(words, depth, this.parts, this.readLine);
      for (const [op, target] of redirects) redirection(op, target, this.parts);
      [words, redirects, redirect, conditional] = [[], [], undefined, false];
    };
    const conditionWord = (text: string) => {
      endWord();
      words.push(plain(text));
      this.pos += text.length;
    };
    const current = () => (word ??= { text: '', quotedFrom: Infinity });
    const quoted = (text: string) => {
      const w = current();
      if (w.quotedFrom === Infinity) w.quotedFrom = w.text.length;
      w.text += text;
    };

    while (this.pos < src.length) {
      const c = src[this.pos];
      const next = src[this.pos + 1];
      if (SPACE.has(c)) {
        endWord();
        this.pos++;
      } else if (c === '\n') {
        endCommand();
        this.pos++;
      } else if (conditional && '&|<>()'.includes(c) && word?.quotedFrom === Infinity && word.text === ']]') {
        // `[[ 1 ]]&&rm`: the test ends at `]]`, so the operator glued to it is one again.
        endWord();
      } else if (conditional && ((c === '&' && next === '&') || (c === '|' && next === '|'))) {
        conditionWord(c + next);
      } else if (conditional && (c === '(' || c === ')' || ((c === '<' || c === '>') && next !== '('))) {
        conditionWord(c);
      } else if (c === ';' || c === '|' || (c === '&' && next !== '>')) {
        endCommand();
        this.pos +=
          (c === '&' && next === '&') ||
          (c === '|' && (next === '|' || next === '&')) ||
          (c === ';' && (next === ';' || next === '&'))
            ? 2
            : 1;
      } else if (c === '(') {
        const start = word === undefined && atCommandStart(words);
        // `((…))` at a command's start is arithmetic when it closes as `))`; otherwise nested subshells.
        if (start && next === '(' && this.arithmetic(this.pos, '((…))')) {
          // Constant arithmetic runs nothing.
        } else if (start) {
          // A subshell starts a command (reserved words such as `then` or `!` may come before it).
          this.pos++;
          this.list(depth + 1, true);
        } else if (word !== undefined && next === ')') {
          // `name() { …; }`: a function definition; its body is read as the commands that follow.
          this.pos += 2;
          endCommand();
        } else {
          throw new Unparsable('a "(" in the middle of a command');
        }
      } else if (c === ')') {
        if (!closing) throw new Unparsable('a ")" without its "("');
        endCommand();
        this.pos++;
        return;
      } else if ((c === '<' || c === '>') && next === '(') {
        const start = this.pos;
        this.pos += 2;
        this.list(depth + 1, true);
        current().text += src.slice(start, this.pos);
        this.expanded = true;
      } else if (c === '<' || c === '>' || c === '&') {
        if (word && word.quotedFrom > 0 && c !== '&') this.descriptorPrefix(word);
        if (
          word &&
          word.quotedFrom === Infinity &&
          c !== '&' &&
          (DESCRIPTOR_NUMBER.test(word.text) || DESCRIPTOR_VARIABLE.test(word.text))
        )
          word = undefined;
        endWord();
        const op = REDIRECT_OP.exec(src.slice(this.pos, this.pos + 3))![0];
        if (op === '<<' || op === '<<-') throw new Unparsable('a here-document');
        this.pos += op.length;
        redirect = op;
      } else if (c === '#' && word === undefined) {
        while (this.pos < src.length && src[this.pos] !== '\n') this.pos++;
      } else if (c === '\\') {
        if (next === undefined) throw new Unparsable('a backslash at the end');
        if (next !== '\n') quoted(next);
        this.pos += 2;
      } else if (c === "'") {
        const end = src.indexOf("'", this.pos + 1);
        if (end === -1) throw new Unparsable('an unclosed single quote');
        quoted(src.slice(this.pos + 1, end));
        this.pos = end + 1;
      } else if (c === '"') {
        this.pos++;
        quoted(this.doubleQuoted(depth));
      } else if (c === '`') {
        current().text += this.backticks(depth);
      } else if (c === '$' && next === "'") {
        const { text, end } = ansiC(src, this.pos);
        quoted(text);
        this.pos = end;
      } else if (c === '$' && next === '"') {
        this.pos += 2;
        quoted(this.doubleQuoted(depth));
      } else if (c === '$') {
        current().text += this.dollar(depth);
      } else {
        // A run of ordinary characters at once: per-character concatenation made long words slow.
        ORDINARY.lastIndex = this.pos;
        const run = ORDINARY.exec(src);
        const end = run ? this.pos + run[0].length : this.pos + 1;
        const w = current();
        const text = src.slice(this.pos, end);
        // An unquoted `{`: a brace expansion may start there (`${` is read by `dollar`, never here).
        const brace = text.indexOf('{');
        if (w.braceFrom === undefined && brace !== -1) w.braceFrom = w.text.length + brace;
        w.text += text;
        this.pos = end;
      }
      if (this.expanded) {
        current().expands = true;
        this.expanded = false;
      }
    }
    if (closing) throw new Unparsable('a "(" without its ")"');
    endCommand();
  }

  /**
   * The word glued before `<` or `>`: `{name}` is an assignment (`{PATH}<&0` on a group or a builtin sets PATH in
   * the shell), checked as one; `{name[…]}` is unreadable. Bash reads the word before removing quotes, so only its
   * opening `{` and name need be unquoted for the subscript form.
   */
  private descriptorPrefix(word: Word): void {
    const element = DESCRIPTOR_ELEMENT.exec(word.text);
    if (element && word.quotedFrom >= element[0].length && word.text.endsWith('}')) {
      throw new Unparsable(
        `a redirection that assigns its descriptor to an array element, whose subscript bash evaluates (${word.text.slice(0, 40)})`,
      );
    }
    const name = word.quotedFrom === Infinity ? DESCRIPTOR_VARIABLE.exec(word.text)?.[1] : undefined;
    if (name !== undefined) assignment(plain(`${name}=`), this.parts);
  }

  /** From after the opening `"` to past the closing one: `$(…)`, `${…}` and backticks inside still run. */
  private doubleQuoted(depth: number): string {
    const src = this.src;
    let text = '';
    while (this.pos < src.length) {
      const c = src[this.pos];
      if (c === '"') {
        this.pos++;
        return text;
      }
      if (c === '\\') {
        const next = src[this.pos + 1];
        if (next === undefined) break;
        if (next !== '\n') text += '$`"\\'.includes(next) ? next : c + next;
        this.pos += 2;
      } else if (c === '`') {
        text += this.backticks(depth);
      } else if (c === '$') {
        text += this.dollar(depth);
      } else {
        text += c;
        this.pos++;
      }
    }
    throw new Unparsable('an unclosed double quote');
  }

  /** `$…` outside single quotes: a substitution is read (its commands collected) and kept as written. */
  private dollar(depth: number): string {
    const src = this.src;
    const start = this.pos;
    const next = src[this.pos + 1];
    if (next === '(' && src[this.pos + 2] === '(' && this.arithmetic(this.pos + 1, '$((…))')) {
      // read as arithmetic
    } else if (next === '(') {
      this.pos += 2;
      this.list(depth + 1, true);
    } else if (next === '[') {
      this.oldArithmetic();
    } else if (next === '{') {
      this.pos += 2;
      this.parameter(depth + 1);
    } else {
      this.pos++;
    }
    // Set once read: a substitution's own words must not take it.
    if (next !== undefined && EXPANDS_AFTER_DOLLAR.test(next)) this.expanded = true;
    return src.slice(start, this.pos);
  }

  /**
   * `((…))` from its first `(` at `open`: arithmetic runs nothing over constants, and is unreadable over a variable
   * (its value is evaluated, and runs any `$( )` in a subscript). False, with nothing consumed, when the second
   * `(` closes before the end, as in `$((ls) | (rm x))`: that is a subshell inside, as the shell reads it too.
   */
  private arithmetic(open: number, where: string): boolean {
    const src = this.src;
    let depth = 0;
    for (let i = open; i < src.length; i++) {
      const c = src[i];
      if (c === '`' || (c === '$' && src[i + 1] === '(' && src[i + 2] !== '('))
        throw new Unparsable(`a command inside ${where}`);
      if (c === '(') depth++;
      else if (c === ')') {
        depth--;
        if (depth === 1 && src[i + 1] !== ')') return false;
        if (depth === 0) {
          requireConstantArithmetic(src.slice(open + 2, i - 1), where);
          this.pos = i + 1;
          return true;
        }
      }
    }
    throw new Unparsable(`an unclosed ${where.slice(0, -3)}`);
  }

  /** `$[…]`, the old form of `$((…))`. */
  private oldArithmetic(): void {
    const src = this.src;
    let depth = 0;
    for (let i = this.pos + 1; i < src.length; i++) {
      if (src[i] === '[') depth++;
      else if (src[i] === ']' && --depth === 0) {
        requireConstantArithmetic(src.slice(this.pos + 2, i), '$[…]');
        this.pos = i + 1;
        return;
      }
    }
    throw new Unparsable('an unclosed $[');
  }

  /** `${…}` from after `${`: its head is checked, and its default values may hold substitutions (`${x:-$(rm -rf /)}`). */
  private parameter(depth: number): void {
    if (depth > SHELL_LIMITS.maxDepth) throw new Unparsable(`it nests deeper than ${SHELL_LIMITS.maxDepth} levels`);
    const src = this.src;
    this.pos = checkParameterHead(src, this.pos);
    while (this.pos < src.length) {
      const c = src[this.pos];
      if (c === '}') {
        this.pos++;
        return;
      }
      if (c === '\\') this.pos += 2;
      else if (c === "'") {
        const end = src.indexOf("'", this.pos + 1);
        if (end === -1) throw new Unparsable('an unclosed single quote');
        this.pos = end + 1;
      } else if (c === '"') {
        this.pos++;
        this.doubleQuoted(depth);
      } else if (c === '`') this.backticks(depth);
      else if (c === '$') this.dollar(depth);
      else this.pos++;
    }
    throw new Unparsable('an unclosed ${');
  }

  /** `` `…` ``: the text between, unescaped as the shell does, is a command line of its own. */
  private backticks(depth: number): string {
    const src = this.src;
    const start = this.pos;
    let inner = '';
    for (this.pos++; this.pos < src.length; this.pos++) {
      const c = src[this.pos];
      if (c === '`') {
        this.pos++;
        this.readLine(inner, depth + 1);
        this.expanded = true;
        return src.slice(start, this.pos);
      }
      if (c === '\\' && '`$\\'.includes(src[this.pos + 1] ?? '')) inner += src[++this.pos];
      else inner += c;
    }
    throw new Unparsable('an unclosed backtick');
  }
}
