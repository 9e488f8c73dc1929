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
const REGEX_SYNTAX = /[\\^$.*+?()[\]{}|/]/g;

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
    private readonly args: ReadonlyArray<{ name: string; value: Matcher }>,
  ) {}

  /** Throws an Error that says what is wrong with `text`. */
  static parse(text: string): ToolPattern {
    if (typeof text !== 'string' || text.trim() === '') throw new Error('the pattern is empty');
    const open = text.indexOf('(');
    if (open === -1) {
      if (text.includes(')')) throw new Error(`"${text}" has ")" without "("; write Tool(arg=glob) to match arguments`);
      return new ToolPattern(text, compileGlob(text), []);
    }
    if (!text.endsWith(')')) throw new Error(`"${text}" must end with ")" closing its argument list, as in shell(cmd=rm *)`);
    const tool = text.slice(0, open).trim();
    if (tool === '') throw new Error(`"${text}" needs a tool name before "("`);
    if (tool.includes(')')) throw new Error(`"${text}" has ")" in its tool name`);
    const inner = text.slice(open + 1, -1);
    if (inner.trim() === '') throw new Error(`"${text}" has an empty argument list; write "${tool}" to match any arguments`);

    const seen = new Set<string>();
    const args = inner.split(ARG_SEPARATOR).map((part) => {
      const m = ARG.exec(part);
      if (!m) throw new Error(`"${part.trim()}" in "${text}" must read name=glob, as in shell(cmd=rm *)`);
      const name = m[1];
      if (seen.has(name)) throw new Error(`"${text}" names the argument "${name}" twice`);
      seen.add(name);
      return { name, value: compileGlob(m[2].trim()) };
    });
    return new ToolPattern(text, compileGlob(tool), args);
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

/**
 * Compiles a glob to an anchored RegExp. Each `*` between literal parts becomes `(?=(.*?part))\N`:
 * a lookahead is atomic, so the part is taken at its earliest position and never retried. That is
 * enough for globs (the next `*` absorbs the rest) and keeps matching linear, so an argument an
 * agent crafts cannot make `*a*a*a*b` backtrack catastrophically.
 */
function compileGlob(glob: string): Matcher {
  if (!/[*?]/.test(glob)) return { test: (text) => text === glob, head: glob, exact: true };
  const parts = glob.split(/\*+/).map((part) => [...part].map((c) => (c === '?' ? '.' : c.replace(REGEX_SYNTAX, '\\$&'))).join(''));
  const [first, last] = [parts[0], parts[parts.length - 1]];
  const middle = parts.slice(1, -1).map((part, i) => `(?=(.*?${part}))\\${i + 1}`).join('');
  const re = new RegExp(parts.length === 1 ? `^${first}$` : `^${first}${middle}.*${last}$`, 'su');
  // The literal head, tail and inner parts are cheap to check first and rule out most names without the RegExp.
  const head = glob.slice(0, glob.search(/[*?]/));
  const tail = glob.slice(Math.max(glob.lastIndexOf('*'), glob.lastIndexOf('?')) + 1);
  const inner = glob
    .split(/[*?]+/)
    .slice(1, -1)
    .filter((part) => part !== '');
  return {
    test: (text) => text.startsWith(head) && text.endsWith(tail) && inner.every((part) => text.includes(part)) && re.test(text),
    head,
    exact: false,
  };
}
