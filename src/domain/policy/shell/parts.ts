/** The bounds past which a command is `unparsable` rather than read further. */
export const SHELL_LIMITS = Object.freeze({
  /** Characters of one command line (16 KiB). */
  maxLength: 16 * 1024,
  /** Nesting of substitutions, subshells, backticks and `sh -c` / `eval` strings. */
  maxDepth: 8,
  /** Distinct simple commands (each wrapped and unwrapped form counts). */
  maxParts: 256,
  /** Readings kept, in all, beside the first where a wrapper's options are uncertain. */
  maxOtherReadings: 16,
});

/** Thrown inside the reader for what it cannot read with confidence; `splitShellCommand` turns it into a result. */
export class Unparsable extends Error {}

/** One word as the shell would pass it on: its text without quotes, and where quoting began (so `'A'=1` is no assignment). */
export interface Word {
  text: string;
  /** Index in `text` of the first character that came from quotes or an escape; Infinity if none did. */
  quotedFrom: number;
  /** True when some of it is only known when it runs: a `$` expansion, a substitution or backticks. */
  expands?: boolean;
  /** Index in `text` of the first `{` outside quotes, if any: where a brace expansion (`{a,b}`) may start. */
  braceFrom?: number;
}

/** How the part an output redirection adds is written: a rule matches it as `redirect(path=…)`. */
export const redirectPart = (path: string) => `redirect(path=${path})`;
export const REDIRECT_PREFIX = 'redirect(';

/** The simple commands, assignments and redirections found, in order, without repeats. */
export class Parts {
  private readonly seen = new Set<string>();
  /** Readings kept beside the first where a command is uncertain (a wrapper's options): bounded, as each may branch again. */
  private otherReadings = 0;
  readAnotherWay(what: string): void {
    if (++this.otherReadings > SHELL_LIMITS.maxOtherReadings)
      throw new Unparsable(`${what} cannot be read with confidence`);
  }
  add(text: string): void {
    // `""` runs nothing (no command has an empty name).
    if (text === '' || this.seen.has(text)) return;
    if (this.seen.size >= SHELL_LIMITS.maxParts)
      throw new Unparsable(`it runs more than ${SHELL_LIMITS.maxParts} commands`);
    this.seen.add(text);
  }
  list(): string[] {
    return [...this.seen];
  }
}
