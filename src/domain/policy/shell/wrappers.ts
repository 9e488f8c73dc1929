/**
 * Commands that run the command after their options (`sudo -u root rm`): which word starts that command. Options
 * are read as getopt reads them (`-iu root`, `-uroot`, `--user root`, `--user=root`); where the reading is
 * uncertain (a long option not listed here may be an abbreviation that takes a value) both readings are kept.
 */
import { requireNoBraceExpansion } from './braces';
import { assignment, checkAssignment } from './environment';
import { Parts, Unparsable, Word } from './parts';

interface Options {
  /** Short options that take a value: the rest of the word (`-uroot`) or the next word. */
  readonly short: string;
  /** Short options whose value is optional: only the rest of the word (`xargs -i{}`). */
  readonly attached?: string;
  /** Short options that take the next word as a value or not (`sudo -h [host]`): read both ways. */
  readonly either?: string;
  /** Long options that take a value (`--user root`); `--name=value` is one word whatever the name. */
  readonly long?: readonly string[];
  /** Long options that take none; any other long option without `=` is read both ways. */
  readonly flags?: readonly string[];
}

/** From each program's manual (sudo 1.9, coreutils 9, findutils 4.9, bash 5.2 for `exec`). */
export const WRAPPERS: Readonly<Record<string, Options>> = {
  sudo: {
    short: 'aCcDgpRrTtUu',
    either: 'h',
    long: [
      '--auth-type',
      '--close-from',
      '--chdir',
      '--group',
      '--host',
      '--prompt',
      '--chroot',
      '--role',
      '--type',
      '--command-timeout',
      '--other-user',
      '--user',
      '--login-class',
    ],
    flags: [
      '--askpass',
      '--background',
      '--bell',
      '--preserve-env',
      '--edit',
      '--set-home',
      '--login',
      '--remove-timestamp',
      '--reset-timestamp',
      '--non-interactive',
      '--preserve-groups',
      '--stdin',
      '--shell',
      '--list',
      '--validate',
    ],
  },
  doas: { short: 'aCu' },
  nohup: { short: '' },
  setsid: { short: '', flags: ['--ctty', '--fork', '--wait'] },
  time: { short: 'fo', long: ['--format', '--output'], flags: ['--append', '--portability', '--quiet', '--verbose'] },
  nice: { short: 'n', long: ['--adjustment'] },
  exec: { short: 'a' },
  command: { short: '' },
  builtin: { short: '' },
  env: {
    short: 'aCSu',
    long: ['--argv0', '--chdir', '--split-string', '--unset'],
    flags: [
      '--ignore-environment',
      '--null',
      '--default-signal',
      '--ignore-signal',
      '--block-signal',
      '--list-signal-handling',
      '--debug',
    ],
  },
  timeout: {
    short: 'ks',
    long: ['--kill-after', '--signal'],
    flags: ['--foreground', '--preserve-status', '--verbose'],
  },
  xargs: {
    short: 'adEILnPs',
    attached: 'eil',
    long: ['--arg-file', '--delimiter', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'],
    flags: [
      '--null',
      '--no-run-if-empty',
      '--interactive',
      '--verbose',
      '--exit',
      '--open-tty',
      '--show-limits',
      '--eof',
      '--replace',
      '--max-lines',
    ],
  },
  stdbuf: { short: 'eio', long: ['--input', '--output', '--error'] },
  coproc: { short: '' },
};

/** Wrappers that take `NAME=value` words before the command, quoted or not, and set them in its environment. */
const SETS_ENVIRONMENT = new Set(['env', 'sudo']);
/** Reserved words that open a compound command: after `coproc NAME`, the coprocess is that command. */
const COMPOUND = new Set(['{', 'if', 'while', 'until', 'for', 'case', 'select', '[[', '((']);
/** More readings of one wrapper's options than this is not read on. */
const MAX_READINGS = 4;

/**
 * The commands a wrapper may run, after its options (and `timeout`'s duration, `env`'s assignments, `coproc`'s
 * name): one reading, or a few when its options are uncertain; none when it runs nothing or is no wrapper.
 */
export function unwrap(name: string, args: readonly Word[], parts: Parts): Word[][] {
  const options = WRAPPERS[name];
  if (!options) return [];
  if (name === 'coproc' && args.length > 1 && args[1].quotedFrom === Infinity && COMPOUND.has(args[1].text)) {
    // `coproc NAME { …; }` assigns the coprocess's descriptors to the array NAME.
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(args[0].text) || args[0].quotedFrom !== Infinity)
      throw new Unparsable(`a coproc named at run time (${args[0].text.slice(0, 40)})`);
    assignment({ text: `${args[0].text}=`, quotedFrom: Infinity }, parts);
    return [args.slice(1)];
  }
  // Every position the options may end at, walking each reading; positions only grow, so this ends.
  const ends = new Set<number>();
  const visited = new Set<number>();
  const pending = [0];
  while (pending.length > 0) {
    const i = pending.pop()!;
    if (visited.has(i)) continue;
    visited.add(i);
    const next = step(name, options, args, i, parts);
    if (typeof next === 'number') ends.add(next);
    else pending.push(...next);
  }
  if (ends.size > MAX_READINGS) throw new Unparsable(`the options of ${name} cannot be read with confidence`);
  for (let extra = 1; extra < ends.size; extra++) parts.readAnotherWay(`the options of ${name}`);
  const commands: Word[][] = [];
  for (const end of [...ends].sort((a, b) => a - b)) {
    const start = name === 'timeout' ? end + 1 : end; // timeout's duration comes first
    // A brace expansion before the command could move a word into its place (`sudo -u {root,rm} -rf x`).
    for (const a of args.slice(0, start)) requireNoBraceExpansion(a);
    const rest = args.slice(start);
    if (rest.length > 0) commands.push(rest);
  }
  return commands;
}

/** From word `i`: the positions the next option may end at (an array), or where the command starts (a number). */
function step(name: string, options: Options, args: readonly Word[], i: number, parts: Parts): number | number[] {
  if (i >= args.length) return i;
  const a = args[i].text;
  if (a === '--') return i + 1;
  if (SETS_ENVIRONMENT.has(name) && /^[^-=][^=]*=/.test(a)) {
    checkAssignment(a);
    parts.add(a);
    return [i + 1];
  }
  if (name === 'env' && a === '-') return [i + 1]; // `env -` is `env -i`
  if (a.startsWith('--')) {
    if (a.includes('=') || options.flags?.includes(a)) return [i + 1];
    return options.long?.includes(a) ? [i + 2] : [i + 1, i + 2];
  }
  if (!a.startsWith('-') || a.length === 1) return i;
  // Bundled short options: the first that takes a value takes the rest of the word, or the next word.
  for (let j = 1; j < a.length; j++) {
    const last = j === a.length - 1;
    if (options.short.includes(a[j])) return [last ? i + 2 : i + 1];
    if (options.attached?.includes(a[j])) return [i + 1];
    if (options.either?.includes(a[j])) return last ? [i + 1, i + 2] : [i + 1];
  }
  return [i + 1];
}
