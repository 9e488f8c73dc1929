/** Anything that answers whether a whole string matches: a compiled glob. */
interface Matcher {
  test(text: string): boolean;
  /** The literal text every match starts with (the whole glob when it has no wildcard). */
  readonly head: string;
  readonly exact: boolean;
}

/** Argument names in `Tool(name=glob)`: word characters, `$`, `.` and `-`. */
const ARG_NAME = String.raw`[\w$.-]+`;
/** A comma starts a new argument only when `name=` follows it, so values may hold commas and `=`. */
const ARG_SEPARATOR = new RegExp(String.raw`,(?=\s*${ARG_NAME}\s*=)`);
const ARG = new RegExp(String.raw`^\s*(${ARG_NAME})\s*=([\s\S]*)$`);

/**
 * A `match` pattern of a policy rule (CONTRACT §11): a glob on the tool name (`get_*`), or
 * `Tool(arg=glob, arg2=glob)`, where every named argument must match too. `*` is any run of
 * characters, `?` one character; matching is case-sensitive and anchored.
 * Everything is compiled at parse time, so `matches` does no parsing.
 */
export class ToolPattern {
  private constructor(
    private readonly text: string,
    private readonly tool: Matcher,
    private readonly args: ReadonlyArray<{ name: string; glob: string; value: Matcher }>,
  ) {}

  /** Throws an Error that says what is wrong with `text`. */
  static parse(text: string): ToolPattern {
    if (typeof text !== 'string' || text.trim() === '') throw new Error('the pattern is empty');
    const open = text.indexOf('(');
    if (open === -1) {
      if (text.includes(')')) throw new Error(`"${text}" has ")" without "("; write Tool(arg=glob) to match arguments`);
      return new ToolPattern(text, compileGlob(text), []);
    }
    if (!text.endsWith(')'))
      throw new Error(`"${text}" must end with ")" closing its argument list, as in shell(cmd=rm *)`);
    const tool = text.slice(0, open).trim();
    if (tool === '') throw new Error(`"${text}" needs a tool name before "("`);
    if (tool.includes(')')) throw new Error(`"${text}" has ")" in its tool name`);
    const inner = text.slice(open + 1, -1);
    if (inner.trim() === '')
      throw new Error(`"${text}" has an empty argument list; write "${tool}" to match any arguments`);

    const seen = new Set<string>();
    const args = inner.split(ARG_SEPARATOR).map((part) => {
      const m = ARG.exec(part);
      if (!m) throw new Error(`"${part.trim()}" in "${text}" must read name=glob, as in shell(cmd=rm *)`);
      const name = m[1];
      if (seen.has(name)) throw new Error(`"${text}" names the argument "${name}" twice`);
      seen.add(name);
      const glob = m[2].trim();
      return { name, glob, value: compileGlob(glob) };
    });
    return new ToolPattern(text, compileGlob(tool), args);
  }

  /**
   * What makes `text` too big for a new policy (MAX_PATTERN_LENGTH, MAX_PATTERN_WILDCARDS), or undefined.
   * Not part of `parse`: a stored policy accepted before these bounds still loads.
   */
  static boundsFault(text: string): string | undefined {
    if (text.length > MAX_PATTERN_LENGTH)
      return `must be at most ${MAX_PATTERN_LENGTH} characters long (it has ${text.length})`;
    const wildcards = text.replace(/[^*?]/g, '').length;
    if (wildcards > MAX_PATTERN_WILDCARDS)
      return `may hold at most ${MAX_PATTERN_WILDCARDS} wildcards (* and ?) (it has ${wildcards})`;
    return undefined;
  }

  /**
   * Runs the compiled matchers once on texts built from the pattern itself (each wildcard as one
   * character): each must accept its own instance. A failure here is a bug found at PUT, not a 500 later.
   */
  selfCheck(): void {
    const instance = (glob: string) => glob.replace(/[*?]/g, 'x');
    const tool = this.tool.exact
      ? this.tool.head
      : instance(this.text.includes('(') ? this.text.slice(0, this.text.indexOf('(')).trim() : this.text);
    const args = Object.fromEntries(this.args.map(({ name, glob }) => [name, instance(glob)]));
    if (!this.matches(tool, args))
      throw new Error(`"${this.text}" could not be compiled: it does not match its own example`);
  }

  matches(toolName: string, args: Record<string, unknown>): boolean {
    return this.matchesTool(toolName) && this.matchesArguments(args);
  }

  /** The literal text every matching tool name starts with; with `toolIsExact`, the one name it matches. */
  get toolHead(): string {
    return this.tool.head;
  }
  get toolIsExact(): boolean {
    return this.tool.exact;
  }
  /** The glob on the tool name, as written (`delete_*` of `delete_*(path=/tmp/*)`). */
  get toolGlob(): string {
    const open = this.text.indexOf('(');
    return open === -1 ? this.text : this.text.slice(0, open).trim();
  }

  /** The arguments the pattern names, in order (empty for a pattern on the tool name alone). */
  get argumentNames(): readonly string[] {
    return (this.names ??= Object.freeze(this.args.map((a) => a.name)));
  }
  private names?: readonly string[];

  /** The glob of the named argument, as written; undefined when the pattern does not name it. */
  argumentGlob(name: string): string | undefined {
    return this.args.find((a) => a.name === name)?.glob;
  }

  /** Whether the glob of the named argument accepts `text`; false when the pattern does not name it. */
  matchesArgumentText(name: string, text: string): boolean {
    const arg = this.args.find((a) => a.name === name);
    return arg !== undefined && arg.value.test(text);
  }

  /** The tool-name part alone; it depends on nothing else, so callers may memoise it. */
  matchesTool(toolName: string): boolean {
    return this.tool.test(toolName);
  }

  /** A named argument the call lacks never matches; one that is not a string is matched as its JSON text. */
  matchesArguments(args: Record<string, unknown>): boolean {
    for (const { name, value } of this.args) {
      if (!Object.hasOwn(args, name)) return false;
      const v = args[name];
      const text = typeof v === 'string' ? v : JSON.stringify(v);
      if (text === undefined || !value.test(text)) return false;
    }
    return true;
  }

  toString(): string {
    return this.text;
  }
}

/** The longest `match` a policy may hold, in characters: tool globs and argument globs together. */
export const MAX_PATTERN_LENGTH = 512;
/** The most wildcards (`*` and `?`) one `match` may hold. */
export const MAX_PATTERN_WILDCARDS = 64;

/** Whether a glob (`*` any run, `?` one character, anchored) accepts `text`: the policy's own matcher. */
export function globAccepts(glob: string, text: string): boolean {
  return compileGlob(glob).test(text);
}

/**
 * Compiles a glob to a matcher that runs in time linear in the text: a bit-parallel simulation of the
 * glob's automaton (state i = the first i glob characters matched), so no input can make it backtrack.
 * Each text character costs one pass over ⌈(glob length + 1) / 31⌉ words. `*` may stay in place or let
 * the next state start at once; runs of `*` are one `*`. `?` and literals compare whole code points,
 * as the `u` RegExp this replaces did.
 */
function compileGlob(glob: string): Matcher {
  if (!/[*?]/.test(glob)) return { test: (text) => text === glob, head: glob, exact: true };
  const tokens = [...glob].filter((c, i, all) => !(c === '*' && all[i - 1] === '*'));
  const automaton = new GlobAutomaton(tokens);
  // The literal head, tail and inner parts are cheap to check first and rule out most names without the automaton.
  const head = glob.slice(0, glob.search(/[*?]/));
  const tail = glob.slice(Math.max(glob.lastIndexOf('*'), glob.lastIndexOf('?')) + 1);
  const inner = glob
    .split(/[*?]+/)
    .slice(1, -1)
    .filter((part) => part !== '');
  return {
    test: (text) =>
      text.startsWith(head) &&
      text.endsWith(tail) &&
      inner.every((part) => text.includes(part)) &&
      automaton.accepts(text),
    head,
    exact: false,
  };
}

/** Bits per word of a state set: 31 keeps every shift and carry inside a positive 32-bit integer. */
const BITS = 31;

class GlobAutomaton {
  private readonly words: number;
  /** States whose glob character is `*` (they loop on any character). */
  private readonly stars: Uint32Array;
  /** States that advance on any character (`?`); literals add their own character's states. */
  private readonly any: Uint32Array;
  private readonly byChar = new Map<string, Uint32Array>();
  private readonly start: Uint32Array;
  private readonly final: { word: number; bit: number };

  constructor(tokens: string[]) {
    const states = tokens.length + 1;
    this.words = Math.ceil(states / BITS);
    this.stars = new Uint32Array(this.words);
    this.any = new Uint32Array(this.words);
    tokens.forEach((t, i) => {
      if (t === '*') set(this.stars, i);
      else if (t === '?') set(this.any, i);
      else {
        let mask = this.byChar.get(t);
        if (!mask) this.byChar.set(t, (mask = new Uint32Array(this.words)));
        set(mask, i);
      }
    });
    // Literals advance on their character, and so does every `?`.
    for (const mask of this.byChar.values()) for (let w = 0; w < this.words; w++) mask[w] |= this.any[w];
    this.start = new Uint32Array(this.words);
    set(this.start, 0);
    this.close(this.start);
    this.final = { word: Math.floor(tokens.length / BITS), bit: tokens.length % BITS };
  }

  accepts(text: string): boolean {
    if (this.words === 1) return this.acceptsInOneWord(text);
    let current = Uint32Array.from(this.start);
    let next = new Uint32Array(this.words);
    for (const ch of text) {
      const advance = this.byChar.get(ch) ?? this.any;
      let carry = 0;
      let alive = 0;
      for (let w = 0; w < this.words; w++) {
        const moved = current[w] & advance[w];
        // State i advances to i + 1: shift left by one, carrying the top bit into the next word.
        const shifted = ((moved << 1) & WORD_MASK) | carry;
        carry = moved >>> (BITS - 1);
        next[w] = shifted | (current[w] & this.stars[w]);
        alive |= next[w];
      }
      if (alive === 0) return false;
      this.close(next);
      [current, next] = [next, current];
    }
    return (current[this.final.word] & (1 << this.final.bit)) !== 0;
  }

  /** The same steps for a glob of up to 30 characters, in plain numbers: the common case allocates nothing. */
  private acceptsInOneWord(text: string): boolean {
    const stars = this.stars[0];
    const any = this.any[0];
    let current = this.start[0];
    for (const ch of text) {
      const advance = this.byChar.get(ch)?.[0] ?? any;
      let next = (((current & advance) << 1) & WORD_MASK) | (current & stars);
      if (next === 0) return false;
      next |= ((next & stars) << 1) & WORD_MASK;
      current = next;
    }
    return (current & (1 << this.final.bit)) !== 0;
  }

  /** A `*` may match nothing: a live `*` state makes the state after it live too (runs of `*` were merged). */
  private close(states: Uint32Array): void {
    let carry = 0;
    for (let w = 0; w < this.words; w++) {
      const live = states[w] & this.stars[w];
      states[w] |= ((live << 1) & WORD_MASK) | carry;
      carry = live >>> (BITS - 1);
    }
  }
}

const WORD_MASK = 2 ** BITS - 1;

function set(mask: Uint32Array, state: number): void {
  mask[Math.floor(state / BITS)] |= 1 << (state % BITS);
}
