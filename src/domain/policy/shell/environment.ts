/**
 * Assignments: each is a part of its own (`x=1`), so a rule must allow it as it must allow a command. Some are
 * unreadable: a name that decides which program runs or what it runs first (`PATH`, `LD_PRELOAD`, `BASH_ENV`…), a
 * value a later expansion could run as code, a subscript over a variable.
 */
import { isLiteralSubscript } from './expansions';
import { Parts, Unparsable, Word } from './parts';
import { changesWhatRuns } from './variables';

export const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)(?:\[([^\]]*)\])?\+?=/;

/** `BASH_FUNC_ls%%=() { …; }` defines a function when bash starts: not an identifier, so not ASSIGNMENT. */
const EXPORTED_FUNCTION = /^BASH_FUNC_[^=]*=/;

/** Text in a value that a later expansion (arithmetic, `${x@P}`, `${!x}`, a nameref) would run. */
const CODE_IN_VALUE = /\$\(|`|\$\{|\[/;

/** Whether the word is an assignment as the shell reads it: `name=` (or `name[sub]=`) before any quoting. */
export function isAssignment(word: Word): boolean {
  return ASSIGNMENT.test(word.text) && word.text.indexOf('=') < word.quotedFrom;
}

/** Checks one assignment (throws for the unreadable ones) and adds it as a part. */
export function assignment(word: Word, parts: Parts): void {
  checkAssignment(word.text);
  parts.add(word.text);
}

/** Throws for an assignment whose name changes what runs, whose subscript is an expression, or whose value holds code. */
export function checkAssignment(text: string): void {
  const m = ASSIGNMENT.exec(text);
  if (EXPORTED_FUNCTION.test(text))
    throw new Unparsable(`an assignment that changes what runs (${text.slice(0, text.indexOf('='))})`);
  if (!m) return;
  const [head, name, subscript] = m;
  if (changesWhatRuns(name)) throw new Unparsable(`an assignment that changes what runs (${name})`);
  if (subscript !== undefined && !isLiteralSubscript(subscript))
    throw new Unparsable(`an assignment to a subscript over a variable (${name}[${subscript}])`);
  if (CODE_IN_VALUE.test(text.slice(head.length)))
    throw new Unparsable(
      `an assignment whose value holds $( ), backticks, \${ or [ (${name}), which a later expansion may run`,
    );
}
