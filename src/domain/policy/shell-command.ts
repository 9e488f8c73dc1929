/**
 * Splits a shell command line into the simple commands it would run, so a policy rule such as `shell(cmd=rm *)`
 * sees the `rm` in `ls && rm -rf /`. Pure and bounded: it never runs anything and never throws; what it cannot
 * read with confidence is `unparsable`, which the policy treats as the strictest case, never as safe.
 *
 * It reads the POSIX/bash grammar a policy needs, not all of it: lists (`&&` `||` `;` `|` `&` newlines),
 * command and process substitution, subshells, `{ …; }` groups, quoting, redirections, comments, and the
 * commands that run their argument as a command (`sudo`, `env`, `xargs`, `sh -c`, `eval`, `find -exec`…).
 * Besides commands, the parts hold each assignment (`x=1`) and each output redirection (`redirect(path=out)`), so
 * an allow rule on `ls *` covers neither. The reading itself lives in `shell/`.
 * A command whose name is only known when it runs (`$CMD -rf /`, `python -c …`) cannot be seen by any reader.
 */
import { Parts, REDIRECT_PREFIX, SHELL_LIMITS, Unparsable } from './shell/parts';
import { Reader } from './shell/reader';

export { SHELL_LIMITS, redirectPart } from './shell/parts';
export { RUN_CHANGING_VARIABLES } from './shell/variables';

export type ShellSplit =
  /**
   * `parts`: each simple command normalised (quotes removed, words joined by one space), each assignment
   * (`x=1`) and each output redirection (`redirect(path=…)`), in order, without repeats.
   */
  | { readonly parsable: true; readonly parts: readonly string[] }
  /** `reason`: what could not be read, e.g. `an unclosed single quote`. */
  | { readonly parsable: false; readonly reason: string };

export function splitShellCommand(command: string): ShellSplit {
  if (command.length > SHELL_LIMITS.maxLength)
    return { parsable: false, reason: `it is longer than ${SHELL_LIMITS.maxLength} characters` };
  const parts = new Parts();
  try {
    new Reader(command, parts).list(0, false);
  } catch (e) {
    if (e instanceof Unparsable) return { parsable: false, reason: e.message };
    // Never throws: a bug in the reader (or a stack overflow) is as unreadable as an unclosed quote.
    return { parsable: false, reason: 'it could not be read' };
  }
  return { parsable: true, parts: parts.list() };
}

/** Whether a part is an output redirection (a command cannot be named like one: that is unparsable). */
export const isRedirectPart = (part: string) => part.startsWith(REDIRECT_PREFIX);
