/**
 * The shell splitter against bash itself: for generated command lines, every command bash runs (as `bash -x`
 * traces it, in child shells too) is among the parts, and every file a redirection writes is a
 * `redirect(path=…)` part. Commands come from a small grammar over harmless programs (echo, printf, true, false,
 * cat, env, xargs, sh, bash) and run in a fresh temporary directory with a PATH holding only those programs;
 * redirections write only to fixed names inside it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { redirectPart, splitShellCommand } from '../../src/domain/policy/shell-command';

const BASH = '/bin/bash';
const PROGRAMS: Record<string, string> = {
  echo: '/bin/echo',
  printf: '/usr/bin/printf',
  true: '/bin/true',
  false: '/bin/false',
  cat: '/bin/cat',
  env: '/usr/bin/env',
  xargs: '/usr/bin/xargs',
  sh: BASH,
  bash: BASH,
};

// ---- the grammar ----

const quoteSingle = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
const quoteDouble = (text: string) => `"${text.replace(/(["\\$`])/g, '\\$1')}"`;
const word = fc
  .tuple(fc.constantFrom('a', 'b', 'c1', 'x.y', '-n', '%s'), fc.constantFrom('plain', 'single', 'double', 'escaped'))
  .map(([w, style]) =>
    style === 'single' ? `'${w}'` : style === 'double' ? `"${w}"` : style === 'escaped' ? `\\${w}` : w,
  );
const name = fc.constantFrom('echo', 'printf', 'true', 'false', 'cat', ':');
const assignment = fc.tuple(fc.constantFrom('v1', 'v2'), word).map(([n, w]) => `${n}=${w}`);
// `{v1}>f7` opens f7 and assigns its descriptor to v1.
const redirect = fc.constantFrom(
  '> f1',
  '>> f2',
  '2> f3',
  '&> f4',
  '>| f5',
  '2>>f6',
  '>/dev/null',
  '2>&1',
  '< /dev/null',
  '>&2',
  '{v1}>f7',
  '{v2}<&0',
);
const separator = fc.constantFrom('; ', ' && ', ' || ', ' | ', '\n');

/** A simple command with literal words only (what backticks hold: no nesting to escape). */
const literal = fc.tuple(name, fc.array(word, { maxLength: 3 })).map(([n, ws]) => [n, ...ws].join(' '));

/** Nesting kept within the splitter's bound (8): each level of the grammar adds at most two of its levels. */
const DEPTH = { maxDepth: 3, depthIdentifier: 'shell', depthSize: 'small', withCrossShrink: true } as const;

const { line } = fc.letrec<{ line: string; command: string; simple: string; arg: string }>((tie) => ({
  arg: fc.oneof(
    DEPTH,
    { weight: 4, arbitrary: word },
    // A space after `$(`: `$((…))` is arithmetic to bash.
    { weight: 1, arbitrary: tie('line').map((l) => `$( ${l})`) },
    { weight: 1, arbitrary: tie('line').map((l) => `"$( ${l})"`) },
    { weight: 1, arbitrary: literal.map((l) => `\`${l}\``) },
    { weight: 1, arbitrary: tie('line').map((l) => `<(${l})`) },
  ),
  simple: fc
    .tuple(
      fc.array(assignment, { maxLength: 1 }),
      name,
      fc.array(tie('arg'), { maxLength: 3 }),
      fc.array(redirect, { maxLength: 2 }),
    )
    .map(([as, n, args, rs]) => [...as, n, ...args, ...rs].join(' ')),
  command: fc.oneof(
    DEPTH,
    { weight: 6, arbitrary: tie('simple') },
    { weight: 1, arbitrary: assignment },
    { weight: 1, arbitrary: tie('line').map((l) => `( ${l} )`) },
    // `]]` glued to the operator after it: the test ends there.
    {
      weight: 1,
      arbitrary: fc
        .tuple(word, fc.constantFrom('&&', '||'), tie('simple'))
        .map(([w, op, s]) => `[[ -n ${w} ]]${op}${s}`),
    },
    { weight: 1, arbitrary: word.map((w) => `[[ -n ${w} ]]>f8`) },
    { weight: 1, arbitrary: fc.tuple(tie('line'), redirect).map(([l, r]) => `{ ${l}; } ${r}`) },
    { weight: 1, arbitrary: fc.tuple(tie('line'), tie('line')).map(([c, b]) => `if ${c}; then ${b}; fi`) },
    { weight: 1, arbitrary: tie('line').map((l) => `sh -c ${quoteSingle(l)}`) },
    { weight: 1, arbitrary: tie('line').map((l) => `bash -c ${quoteDouble(l)}`) },
    { weight: 1, arbitrary: tie('line').map((l) => `eval ${quoteSingle(l)}`) },
    { weight: 1, arbitrary: literal.map((l) => `env v1=a ${l}`) },
    { weight: 1, arbitrary: literal.map((l) => `echo a | xargs ${l}`) },
    // A literal body only: a body that could define and call `f` again would recurse without end.
    { weight: 1, arbitrary: fc.tuple(literal, redirect).map(([l, r]) => `f() { ${l}; } ${r}; f`) },
    { weight: 1, arbitrary: literal.map((l) => `function g { ${l}; }; g`) },
  ),
  line: fc
    .tuple(tie('command'), fc.array(fc.tuple(separator, tie('command')), { maxLength: 2 }))
    .map(([first, rest]) => first + rest.map(([s, c]) => s + c).join('')),
}));

// ---- running bash ----

let sandboxRoot: string;
let bin: string;

beforeAll(() => {
  sandboxRoot = mkdtempSync(join(tmpdir(), 'tollgate-shell-'));
  bin = join(sandboxRoot, 'bin');
  mkdirSync(bin);
  for (const [n, target] of Object.entries(PROGRAMS)) symlinkSync(target, join(bin, n));
});

afterAll(() => {
  rmSync(sandboxRoot, { recursive: true, force: true });
});

let runs = 0;
/** Runs `line` under `bash -x` in a fresh directory: the traced commands and the files left behind. */
function runInBash(line: string): { traced: string[]; files: string[] } {
  const cwd = join(sandboxRoot, `run-${++runs}`);
  mkdirSync(cwd);
  // The trace goes to fd 9 (BASH_XTRACEFD), so a redirection of stderr cannot hide it; SHELLOPTS carries
  // xtrace into child shells.
  const stdio: Array<'ignore' | 'pipe'> = Array.from({ length: 10 }, () => 'ignore');
  stdio[9] = 'pipe';
  const result = spawnSync(BASH, ['-c', line], {
    cwd,
    env: { PATH: bin, PS4: '+ ', SHELLOPTS: 'xtrace', BASH_XTRACEFD: '9', LC_ALL: 'C' },
    stdio,
    timeout: 10_000,
    encoding: 'utf8',
  });
  if (result.error || result.signal)
    throw new Error(`bash did not finish for ${JSON.stringify(line)}: ${result.error?.message ?? result.signal}`);
  // A word holding a newline is traced inside single quotes over several lines: a line that does not start
  // with the PS4 prefix continues the entry before it (no generated line starts with "+").
  const traced: string[] = [];
  for (const l of String(result.output[9] ?? '').split('\n')) {
    const entry = /^\++ (.*)$/s.exec(l);
    if (entry) traced.push(entry[1]);
    else if (traced.length > 0) traced[traced.length - 1] += `\n${l}`;
  }
  return { traced: traced.map((t) => t.replace(/\n$/, '')).filter((t) => t !== ''), files: readdirSync(cwd) };
}

/** A traced line normalised as the splitter normalises a command: its own first part (quotes removed). */
function normalise(traced: string): string {
  const split = splitShellCommand(traced);
  if (!split.parsable || split.parts.length === 0)
    throw new Error(`cannot read the trace line ${JSON.stringify(traced)}`);
  return split.parts[0];
}

/**
 * A part as a pattern: what bash expands when it runs (`$( )`, backticks, `<( )`, `$name`) matches any text, as
 * the trace shows the expanded words. Quoting inside the generated substitutions never holds parentheses.
 */
function pattern(part: string): RegExp {
  let out = '';
  // An expansion may expand to nothing, and its word with it (`echo \`true\`` runs `echo`).
  const any = () => {
    if (out.endsWith(' ')) out = `${out.slice(0, -1)}(?: .*)?`;
    else out += '.*';
  };
  for (let i = 0; i < part.length; i++) {
    const c = part[i];
    if ((c === '$' || c === '<' || c === '>') && part[i + 1] === '(') {
      let depth = 0;
      for (i++; i < part.length; i++) {
        if (part[i] === '(') depth++;
        else if (part[i] === ')' && --depth === 0) break;
      }
      any();
    } else if (c === '`') {
      i = part.indexOf('`', i + 1);
      any();
    } else if (c === '$' && /[A-Za-z_]/.test(part[i + 1] ?? '')) {
      while (/[A-Za-z0-9_]/.test(part[i + 1] ?? '')) i++;
      any();
    } else out += c.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
  }
  return new RegExp(`^${out}$`, 's');
}

describe('the shell splitter against bash 5.2', () => {
  it('bash is here', () => {
    const version = spawnSync(BASH, ['--version'], { encoding: 'utf8' }).stdout;
    expect(version).toMatch(/GNU bash, version 5\./);
  });

  it('every command bash runs is a part, and every file a redirection writes is a redirect part', () => {
    fc.assert(
      fc.property(line, (text) => {
        const split = splitShellCommand(text);
        // The grammar holds nothing the splitter refuses to read.
        if (!split.parsable) throw new Error(`unparsable: ${split.reason}`);
        const patterns = split.parts.map((p) => ({ part: p, re: pattern(p) }));
        const { traced, files } = runInBash(text);
        for (const t of traced) {
          const command = normalise(t);
          const seen = split.parts.includes(command) || patterns.some(({ re }) => re.test(command));
          if (!seen)
            throw new Error(`bash ran ${JSON.stringify(command)}, which is no part of ${JSON.stringify(split.parts)}`);
        }
        for (const file of files) expect(split.parts).toContain(redirectPart(file));
      }),
      { numRuns: 200 },
    );
  });

  it('the trace is read: a command bash runs but the parts leave out is caught', () => {
    // The check above, by hand, on a part list missing the command: guards against a trace that is never read.
    const { traced } = runInBash("sh -c 'printf %s a' > f1");
    expect(traced.map(normalise)).toEqual(['sh -c printf %s a', 'printf %s a']);
    expect(runInBash('echo a > f1 2> f3').files.sort()).toEqual(['f1', 'f3']);
  });
});
