/**
 * Builtins that evaluate an argument as arithmetic or as a variable name (whose subscript bash evaluates, running
 * any `$( )` in it): under an allow rule on them, a value set elsewhere would run as code. Checked as bash 5.2
 * behaves: `let`, `[[ a -eq b ]]`, `test -v`, `printf -v`, `read` and `declare -i` / `-n` do; `unset`,
 * `[ a -eq b ]` and `declare name` do not.
 */
import { ASSIGNMENT, checkAssignment } from './environment';
import { isConstantArithmetic, requireConstantArithmetic } from './expansions';
import { Unparsable, Word } from './parts';
import { changesWhatRuns } from './variables';

const ARITHMETIC_TESTS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);
const DECLARES = new Set(['declare', 'typeset', 'local', 'export', 'readonly']);

/**
 * A word used as a variable name: unreadable when it is not a plain name (a subscript, or known only at run time),
 * or when the builtin `sets` it and it names a variable that changes what runs (`read PATH < f`).
 */
const variableName = (w: Word | undefined, builtin: string, sets = true) => {
  if (w === undefined) return;
  if (w.expands || w.text.includes('['))
    throw new Unparsable(`${builtin} of a variable name known only at run time or with a subscript (${w.text})`);
  if (sets && changesWhatRuns(w.text))
    throw new Unparsable(`${builtin} of a variable that changes what runs (${w.text})`);
};

/** Throws when the simple command `name args…` would evaluate a value as code. */
export function checkBuiltin(name: string, args: readonly Word[]): void {
  switch (name) {
    case 'let':
      for (const a of args) requireConstantArithmetic(a.text, 'let');
      return;
    case '[[':
      args.forEach((a, i) => {
        if (ARITHMETIC_TESTS.has(a.text))
          for (const operand of [args[i - 1], args[i + 1]])
            if (operand) requireConstantArithmetic(operand.text, `[[ ${a.text} ]]`);
        if (a.text === '-v') variableName(args[i + 1], '[[ -v ]]', false);
      });
      return;
    case 'test':
    case '[':
      args.forEach((a, i) => a.text === '-v' && variableName(args[i + 1], `${name} -v`, false));
      return;
    case 'printf':
      args.forEach((a, i) => {
        if (a.text === '-v') variableName(args[i + 1], 'printf -v');
        else if (a.text.startsWith('-v') && a.text.length > 2)
          variableName({ ...a, text: a.text.slice(2) }, 'printf -v');
      });
      return;
    case 'read':
      for (const w of namesOf(args, 'dinNptu', 'a')) variableName(w, 'read');
      return;
    case 'mapfile':
    case 'readarray':
      for (const w of namesOf(args, 'dnOsuCc', '')) variableName(w, name);
      return;
    case 'for':
    case 'select':
      // `for NAME in …` assigns NAME each time round.
      variableName(args[0], name);
      return;
    case 'getopts':
      variableName(args[1], name);
      return;
    case 'wait':
      args.forEach((a, i) => a.text === '-p' && variableName(args[i + 1], 'wait -p'));
      return;
  }
  if (!DECLARES.has(name)) return;
  const options = args
    .filter((a) => /^[-+][A-Za-z]+$/.test(a.text))
    .map((a) => a.text)
    .join('');
  // `-i` makes every later assignment arithmetic; `-n` makes the value a name that is expanded later.
  const integer = options.includes('i');
  const nameref = options.includes('n');
  for (const a of args) {
    if (/^[-+][A-Za-z]+$/.test(a.text)) continue;
    // The builtin reads `name=value` from its argument's text, quoted or not.
    if (ASSIGNMENT.test(a.text)) {
      checkAssignment(a.text);
      const value = a.text.slice(a.text.indexOf('=') + 1);
      if (integer && (a.expands || !isConstantArithmetic(value)))
        throw new Unparsable(`${name} -i of a value bash evaluates as arithmetic (${a.text})`);
      if (nameref && (a.expands || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(value) || changesWhatRuns(value)))
        throw new Unparsable(`${name} -n of a name that is not a plain one (${a.text})`);
    } else if (a.expands) {
      // `export "$x"` with x='PATH=/tmp/evil' sets PATH.
      throw new Unparsable(`${name} of a name known only at run time (${a.text})`);
    }
  }
}

/** The non-option words of a builtin (its variable names), with the values of `nameOptions` counted as names too. */
function namesOf(args: readonly Word[], valueOptions: string, nameOptions: string): Word[] {
  const names: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i].text;
    if (a === '--') {
      names.push(...args.slice(i + 1));
      break;
    }
    if (/^-[A-Za-z]+$/.test(a)) {
      // Bundled flags: the last one may take the next word as its value.
      const last = a[a.length - 1];
      if (nameOptions.includes(last)) names.push(...args.slice(i + 1, i + 2));
      if (valueOptions.includes(last) || nameOptions.includes(last)) i++;
      continue;
    }
    if (/^-[A-Za-z]/.test(a)) continue; // a value joined to its option (`-p'> '`)
    names.push(args[i]);
  }
  return names;
}
