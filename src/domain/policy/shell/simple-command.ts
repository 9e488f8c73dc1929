/**
 * One simple command as the parts see it: its assignments (each a part), its words (a part), and the commands it
 * runs in turn — behind a wrapper (`sudo rm`), by path (`/bin/rm`), from a string (`sh -c`, `eval`, `trap`).
 */
import { checkBuiltin } from './builtins';
import { assignment, isAssignment } from './environment';
import { Parts, REDIRECT_PREFIX, Unparsable, Word } from './parts';
import { requireNoBraceExpansion } from './braces';
import { unwrap } from './wrappers';

/** Reads a command line found in a word (`sh -c '…'`) one level deeper. */
export type ReadLine = (line: string, depth: number) => void;

/** Reserved words that open or close a compound command: what follows them is the command that runs. */
export const KEYWORDS = new Set([
  '!',
  '{',
  '}',
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'do',
  'done',
  'while',
  'until',
  'esac',
]);
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish']);

/**
 * Adds one simple command: its assignments, its words as a part, then — when it runs another command — that
 * command too, so a rule on `sudo *` and one on `rm *` both see `sudo rm -rf /`.
 */
export function collect(all: Word[], depth: number, parts: Parts, readLine: ReadLine): void {
  // An index, not a slice per word: a line of thousands of assignments stays linear.
  let i = 0;
  for (; i < all.length; i++) {
    const w = all[i];
    if (isAssignment(w)) assignment(w, parts);
    // `function NAME { …; }`: the body is the command that runs (the words after NAME).
    else if (w.quotedFrom === Infinity && w.text === 'function') i++;
    else if (w.quotedFrom !== Infinity || !KEYWORDS.has(w.text)) break;
  }
  if (i >= all.length) return;
  const words = i === 0 ? all : all.slice(i);
  const name = words[0].text;
  if (name.startsWith(REDIRECT_PREFIX))
    throw new Unparsable(`a command named like a redirection part (${name.slice(0, 40)})`);
  requireNoBraceExpansion(words[0]);
  parts.add(words.map((w) => w.text).join(' '));
  const base = name.includes('/') ? name.slice(name.lastIndexOf('/') + 1) : name;
  // `/bin/rm -rf /` runs `rm`: a rule on `rm *` should see it.
  if (base !== name && base !== '') parts.add([base, ...words.slice(1).map((w) => w.text)].join(' '));

  const args = words.slice(1);
  checkBuiltin(base, args);
  // Where words decide which command runs, bash's brace expansion could move one into the command's place.
  if (RUNS_ITS_ARGUMENTS.has(base)) for (const a of args) requireNoBraceExpansion(a);
  for (const inner of unwrap(base, args, parts)) collect(inner, depth, parts, readLine);
  for (const line of commandLines(base, args)) readLine(line, depth + 1);
  if (base === 'find') for (const exec of findExecs(args)) collect(exec, depth, parts, readLine);
}

/** Commands whose arguments hold a command line or name a command anywhere (a wrapper's are checked in `unwrap`). */
const RUNS_ITS_ARGUMENTS = new Set(['eval', 'su', 'trap', 'alias', 'mapfile', 'readarray', 'find', 'env', ...SHELLS]);

/**
 * The command lines a command runs from a string: a shell's `-c`, `eval`, `su -c`, `env -S`, and the code that
 * `trap`, `alias` and `mapfile -C` keep to run later.
 */
function commandLines(name: string, args: Word[]): string[] {
  const one = (line: string | undefined) => (line === undefined ? [] : [line]);
  switch (name) {
    case 'eval':
      return args.length > 0 ? [args.map((w) => w.text).join(' ')] : [];
    case 'env': {
      const s = args.findIndex((w) => w.text === '-S' || w.text === '--split-string');
      if (s !== -1) return one(args[s + 1]?.text);
      const joined = args.find((w) => w.text.startsWith('-S') && w.text.length > 2 && !w.text.startsWith('--'));
      return one(joined?.text.slice(2));
    }
    case 'su': {
      const c = args.findIndex((w) => w.text === '-c' || w.text === '--command');
      if (c !== -1) return one(args[c + 1]?.text);
      return one(args.find((w) => w.text.startsWith('--command='))?.text.slice('--command='.length));
    }
    case 'trap': {
      const rest = args[0]?.text === '--' ? args.slice(1) : args;
      // `trap 'code' SIGNAL…`; `trap - SIG`, `trap -p` and `trap SIG` run nothing.
      return rest.length >= 2 && rest[0].text !== '-' ? [rest[0].text] : [];
    }
    case 'alias':
      return args.filter((w) => /^[^-=][^=]*=/.test(w.text)).map((w) => w.text.slice(w.text.indexOf('=') + 1));
    case 'mapfile':
    case 'readarray': {
      const c = args.findIndex((w) => w.text === '-C');
      return c === -1 ? [] : one(args[c + 1]?.text);
    }
  }
  return SHELLS.has(name) ? one(shellString(args)) : [];
}

/** `sh [options] -c 'line' [name [args]]`: short options may be bundled (`-ec`, `-lc`); `-o`/`-O` take a value. */
function shellString(args: Word[]): string | undefined {
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
