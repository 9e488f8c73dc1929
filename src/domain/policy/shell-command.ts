/**
 * Splits a shell command line into the simple commands it would run, so a policy rule such as `shell(cmd=rm *)`
 * sees the `rm` in `ls && rm -rf /`. Pure and bounded: it never runs anything and never throws; what it cannot
 * read with confidence is `unparsable`, which the policy treats as the strictest case, never as safe.
 *
 * It reads the POSIX/bash grammar a policy needs, not all of it: lists (`&&` `||` `;` `|` `&` newlines),
 * command and process substitution, subshells, `{ …; }` groups, quoting, redirections, comments, and the
 * commands that run their argument as a command (`sudo`, `env`, `xargs`, `sh -c`, `eval`, `find -exec`…).
 * A command whose name is only known when it runs (`$CMD -rf /`, `python -c …`) cannot be seen by any reader.
 */

/** The bounds past which a command is `unparsable` rather than read further. */
export const SHELL_LIMITS = Object.freeze({
  /** Characters of one command line (16 KiB). */
  maxLength: 16 * 1024,
  /** Nesting of substitutions, subshells, backticks and `sh -c` / `eval` strings. */
  maxDepth: 8,
  /** Distinct simple commands (each wrapped and unwrapped form counts). */
  maxParts: 256,
});

export type ShellSplit =
  /** `parts`: each simple command normalised (quotes removed, words joined by one space), in order, without repeats. */
  | { readonly parsable: true; readonly parts: readonly string[] }
  /** `reason`: what could not be read, e.g. `an unclosed single quote`. */
  | { readonly parsable: false; readonly reason: string };

export function splitShellCommand(command: string): ShellSplit {
  if (command.length > SHELL_LIMITS.maxLength) return { parsable: false, reason: `it is longer than ${SHELL_LIMITS.maxLength} characters` };
  const parts = new Parts();
  try {
    new Reader(command, parts).list(0, false);
  } catch (e) {
    if (e instanceof Unparsable) return { parsable: false, reason: e.message };
    throw e;
  }
  return { parsable: true, parts: parts.list() };
}

class Unparsable extends Error {}

/** One word as the shell would pass it on: its text without quotes, and where quoting began (so `'A'=1` is no assignment). */
interface Word {
  text: string;
  /** Index in `text` of the first character that came from quotes or an escape; Infinity if none did. */
  quotedFrom: number;
}

class Parts {
  private readonly seen = new Set<string>();
  add(text: string): void {
    // `""` runs nothing (no command has an empty name).
    if (text === '' || this.seen.has(text)) return;
    if (this.seen.size >= SHELL_LIMITS.maxParts) throw new Unparsable(`it runs more than ${SHELL_LIMITS.maxParts} commands`);
    this.seen.add(text);
  }
  list(): string[] {
    return [...this.seen];
  }
}

const SPACE = new Set([' ', '\t', '\r']);
/** Characters that mean nothing special outside quotes (`#` and `{`, `}` only do at a word's start or alone). */
const ORDINARY = /[^\s;&|()<>\\'"`$]+/y;

class Reader {
  private pos = 0;

  constructor(
    private readonly src: string,
    private readonly parts: Parts,
  ) {}

  /**
   * Reads commands until the end of the text, or until the `)` that closes a subshell or substitution when
   * `closing` (the `)` is consumed).
   */
  list(depth: number, closing: boolean): void {
    if (depth > SHELL_LIMITS.maxDepth) throw new Unparsable(`it nests deeper than ${SHELL_LIMITS.maxDepth} levels`);
    const src = this.src;
    let words: Word[] = [];
    let word: Word | undefined;
    /** The next word is where a redirection points, not an argument. */
    let redirecting = false;
    const endWord = () => {
      if (word && !redirecting) words.push(word);
      if (word) redirecting = false;
      word = undefined;
    };
    const endCommand = () => {
      endWord();
      if (redirecting) redirecting = false;
      collect(words, depth, this.parts);
      words = [];
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
      } else if (c === ';' || c === '|' || (c === '&' && next !== '>')) {
        endCommand();
        this.pos += (c === '&' && next === '&') || (c === '|' && (next === '|' || next === '&')) || (c === ';' && (next === ';' || next === '&')) ? 2 : 1;
      } else if (c === '(') {
        // A subshell starts a command (reserved words such as `then` or `!` may come before it).
        if (word === undefined && words.every((w) => w.quotedFrom === Infinity && KEYWORDS.has(w.text))) {
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
      } else if (c === '<' || c === '>' || c === '&') {
        // A redirection: the operator and its target are dropped from the words (the target's own
        // substitutions still count). Digits written right before it name a file descriptor.
        if (word && word.quotedFrom === Infinity && /^\d+$/.test(word.text)) word = undefined;
        endWord();
        const op = /^(?:&>>?|<<<|<<-?|<>|<&|>>|>\||>&|<|>)/.exec(src.slice(this.pos, this.pos + 3))![0];
        if (op === '<<' || op === '<<-') throw new Unparsable('a here-document');
        this.pos += op.length;
        redirecting = true;
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
        quoted(this.ansiC());
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
        current().text += src.slice(this.pos, end);
        this.pos = end;
      }
    }
    if (closing) throw new Unparsable('a "(" without its ")"');
    endCommand();
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
    if (next === '(' && src[this.pos + 2] === '(' && this.arithmetic()) {
      // read as arithmetic
    } else if (next === '(') {
      this.pos += 2;
      this.list(depth + 1, true);
    } else if (next === '{') {
      this.pos += 2;
      this.parameter(depth + 1);
    } else {
      this.pos++;
    }
    return src.slice(start, this.pos);
  }

  /**
   * `$(( … ))`: arithmetic runs nothing, unless it holds a substitution, which is not read here. False (and
   * nothing consumed) when the second `(` closes before the end, as in `$((ls) | (rm x))`: that is a command
   * substitution starting with a subshell, as the shell reads it too.
   */
  private arithmetic(): boolean {
    const src = this.src;
    const start = this.pos;
    let open = 0;
    for (let i = start + 1; i < src.length; i++) {
      const c = src[i];
      if (c === '`' || (c === '$' && src[i + 1] === '(' && src[i + 2] !== '(')) throw new Unparsable('a command inside $(( ))');
      if (c === '(') open++;
      else if (c === ')' && --open === 1 && src[i + 1] !== ')') return false;
      else if (open === 0) {
        this.pos = i + 1;
        return true;
      }
    }
    throw new Unparsable('an unclosed $((');
  }

  /** `${…}` from after `${`: its default values may hold substitutions (`${x:-$(rm -rf /)}`). */
  private parameter(depth: number): void {
    if (depth > SHELL_LIMITS.maxDepth) throw new Unparsable(`it nests deeper than ${SHELL_LIMITS.maxDepth} levels`);
    const src = this.src;
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
        new Reader(inner, this.parts).list(depth + 1, false);
        return src.slice(start, this.pos);
      }
      if (c === '\\' && '`$\\'.includes(src[this.pos + 1] ?? '')) inner += src[++this.pos];
      else inner += c;
    }
    throw new Unparsable('an unclosed backtick');
  }

  /** `$'…'`, with its escapes decoded, so `$'\x72m'` reads as `rm`. */
  private ansiC(): string {
    const src = this.src;
    let text = '';
    for (this.pos += 2; this.pos < src.length; this.pos++) {
      const c = src[this.pos];
      if (c === "'") {
        this.pos++;
        return text;
      }
      if (c !== '\\') {
        text += c;
        continue;
      }
      const m = /^\\(?:x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|([0-7]{1,3})|c(.)|([\s\S]))/.exec(src.slice(this.pos, this.pos + 10));
      if (!m) throw new Unparsable("an unclosed $'");
      const [all, hex, u4, u8, octal, control, simple] = m;
      const code = hex ?? u4 ?? u8;
      if (code !== undefined) text += safeCodePoint(parseInt(code, 16));
      else if (octal !== undefined) text += String.fromCharCode(parseInt(octal, 8) & 0xff);
      else if (control !== undefined) text += String.fromCharCode(control.charCodeAt(0) & 0x1f);
      else text += ANSI_ESCAPES[simple] ?? `\\${simple}`;
      this.pos += all.length - 1;
    }
    throw new Unparsable("an unclosed $'");
  }
}

const ANSI_ESCAPES: Record<string, string> = { a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };

function safeCodePoint(code: number): string {
  return code <= 0x10ffff ? String.fromCodePoint(code) : '';
}

/** Reserved words that open or close a compound command: what follows them is the command that runs. */
const KEYWORDS = new Set(['!', '{', '}', 'if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', 'esac']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/;
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish']);

/**
 * Adds one simple command: its words as a part, then — when it runs another command — that command too,
 * so a rule on `sudo *` and one on `rm *` both see `sudo rm -rf /`.
 */
function collect(all: Word[], depth: number, parts: Parts): void {
  let words = all;
  for (;;) {
    const first = words[0];
    if (first === undefined) return;
    const plain = first.quotedFrom === Infinity;
    const eq = first.text.indexOf('=');
    if ((plain && KEYWORDS.has(first.text)) || (ASSIGNMENT.test(first.text) && eq < first.quotedFrom)) words = words.slice(1);
    else break;
  }
  parts.add(words.map((w) => w.text).join(' '));
  const name = words[0].text;
  const base = name.includes('/') ? name.slice(name.lastIndexOf('/') + 1) : name;
  // `/bin/rm -rf /` runs `rm`: a rule on `rm *` should see it.
  if (base !== name && base !== '') parts.add([base, ...words.slice(1).map((w) => w.text)].join(' '));

  const args = words.slice(1);
  const inner = unwrap(base, args);
  if (inner) collect(inner, depth, parts);
  const line = commandLine(base, args);
  if (line !== undefined) new Reader(line, parts).list(depth + 1, false);
  if (base === 'find') for (const exec of findExecs(args)) collect(exec, depth, parts);
}

/** Options of each wrapper that take a value in the next word (short options given apart). */
const WRAPPERS: Record<string, ReadonlySet<string>> = {
  sudo: new Set(['-u', '-g', '-p', '-C', '-D', '-r', '-t', '-U', '-T', '-h', '--user', '--group', '--prompt', '--chdir', '--role', '--type', '--other-user', '--command-timeout', '--host', '--close-from']),
  doas: new Set(['-u', '-C']),
  nohup: new Set(),
  setsid: new Set(),
  time: new Set(['-f', '-o', '--format', '--output']),
  nice: new Set(['-n', '--adjustment']),
  exec: new Set(['-a']),
  command: new Set(),
  builtin: new Set(),
  env: new Set(['-u', '-C', '--unset', '--chdir']),
  timeout: new Set(['-s', '-k', '--signal', '--kill-after']),
  xargs: new Set(['-I', '-n', '-P', '-L', '-s', '-d', '-E', '-a', '--max-args', '--max-procs', '--max-lines', '--max-chars', '--delimiter', '--eof', '--arg-file', '--replace']),
  stdbuf: new Set(['-i', '-o', '-e']),
};

/** The command a wrapper runs, after its options (and `timeout`'s duration, `env`'s assignments), or undefined. */
function unwrap(name: string, args: Word[]): Word[] | undefined {
  const takesValue = WRAPPERS[name];
  if (!takesValue) return undefined;
  let i = 0;
  while (i < args.length) {
    const a = args[i].text;
    if (a === '--') {
      i++;
      break;
    }
    if (name === 'env' && ASSIGNMENT.test(a)) i++;
    else if (a.startsWith('-') && a.length > 1) i += takesValue.has(a) ? 2 : 1;
    else break;
  }
  if (name === 'timeout') i++; // the duration
  const rest = args.slice(i);
  return rest.length > 0 ? rest : undefined;
}

/** The command line a shell, `eval`, `su -c` or `env -S` runs from a string, or undefined. */
function commandLine(name: string, args: Word[]): string | undefined {
  if (name === 'eval') return args.length > 0 ? args.map((w) => w.text).join(' ') : undefined;
  if (name === 'env') {
    const s = args.findIndex((w) => w.text === '-S' || w.text === '--split-string');
    if (s !== -1) return args[s + 1]?.text;
    const joined = args.find((w) => w.text.startsWith('-S') && w.text.length > 2 && !w.text.startsWith('--'));
    return joined?.text.slice(2);
  }
  if (name === 'su') {
    const c = args.findIndex((w) => w.text === '-c' || w.text === '--command');
    if (c !== -1) return args[c + 1]?.text;
    return args.find((w) => w.text.startsWith('--command='))?.text.slice('--command='.length);
  }
  if (!SHELLS.has(name)) return undefined;
  // `sh [options] -c 'line' [name [args]]`: short options may be bundled (`-ec`, `-lc`); `-o`/`-O` take a value.
  let runsString = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i].text;
    if (a === '--' || a === '-') return runsString ? args[i + 1]?.text : undefined;
    if (a.startsWith('--')) continue;
    if (/^[-+][A-Za-z]+$/.test(a)) {
      if (a[0] === '-' && a.includes('c')) runsString = true;
      if (/[oO]$/.test(a)) i++;
      continue;
    }
    return runsString ? a : undefined;
  }
  return undefined;
}

/** The commands `find … -exec cmd {} ;` (and `-execdir`, `-ok`, `-okdir`) runs. */
function findExecs(args: Word[]): Word[][] {
  const out: Word[][] = [];
  for (let i = 0; i < args.length; i++) {
    if (!['-exec', '-execdir', '-ok', '-okdir'].includes(args[i].text)) continue;
    const end = args.findIndex((w, j) => j > i && (w.text === ';' || w.text === '+'));
    const cmd = args.slice(i + 1, end === -1 ? undefined : end);
    if (cmd.length > 0) out.push(cmd);
    if (end === -1) break;
    i = end;
  }
  return out;
}
