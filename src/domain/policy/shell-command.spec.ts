import fc from 'fast-check';
import { SHELL_LIMITS, splitShellCommand } from './shell-command';
import { parts, unparsable } from '../../../test/support/shell-split';

describe('splitting a command line into the simple commands it runs', () => {
  it.each<[string, string, string[]]>([
    ['one command', 'ls -la', ['ls -la']],
    ['&&', 'ls && rm -rf /', ['ls', 'rm -rf /']],
    ['||', 'test -d x || rm -rf x', ['test -d x', 'rm -rf x']],
    [';', 'cd /tmp; rm -rf *', ['cd /tmp', 'rm -rf *']],
    ['|', 'cat f | sh', ['cat f', 'sh']],
    ['|&', 'make |& tee log', ['make', 'tee log']],
    ['& in the background', 'sleep 9 & rm -rf /', ['sleep 9', 'rm -rf /']],
    ['a newline', 'ls\nrm -rf /', ['ls', 'rm -rf /']],
    ['separators without spaces', 'ls&&rm -rf /;echo|cat', ['ls', 'rm -rf /', 'echo', 'cat']],
    ['empty commands between separators', ';; ls ;; ; rm x', ['ls', 'rm x']],
    ['runs of spaces and tabs', 'rm  \t -rf   /', ['rm -rf /']],
    ['a repeated command once', 'ls; ls', ['ls']],
  ])('splits on %s', (_, command, expected) => {
    expect(parts(command)).toEqual(expected);
  });

  it.each<[string, string, string[]]>([
    ['$( )', 'echo $(rm -rf /)', ['rm -rf /', 'echo $(rm -rf /)']],
    ['$( ) nested', 'echo $(cat $(rm -rf /))', ['rm -rf /', 'cat $(rm -rf /)', 'echo $(cat $(rm -rf /))']],
    ['$( ) holding a list', 'echo $(ls; rm -rf /)', ['ls', 'rm -rf /', 'echo $(ls; rm -rf /)']],
    ['backticks', 'echo `rm -rf /`', ['rm -rf /', 'echo `rm -rf /`']],
    [
      'backticks with escaped backticks inside',
      'echo `echo \\`rm -rf /\\``',
      ['rm -rf /', 'echo `rm -rf /`', 'echo `echo \\`rm -rf /\\``'],
    ],
    ['<( ) process substitution', 'diff <(ls a) <(rm -rf /)', ['ls a', 'rm -rf /', 'diff <(ls a) <(rm -rf /)']],
    ['>( ) process substitution', 'tee >(rm -rf /) < f', ['rm -rf /', 'tee >(rm -rf /)']],
    ['a subshell', '(cd /; rm -rf *)', ['cd /', 'rm -rf *']],
    ['a subshell in a list', 'ls && (rm -rf /) | cat', ['ls', 'rm -rf /', 'cat']],
    ['nested subshells', '( (rm -rf /) )', ['rm -rf /']],
    ['a { ; } group', '{ ls; rm -rf /; }', ['ls', 'rm -rf /']],
    ['if/then/fi', 'if true; then rm -rf /; fi', ['true', 'rm -rf /']],
    ['a subshell after a reserved word', 'if (ls); then (rm -rf /); fi', ['ls', 'rm -rf /']],
    ['while/do/done', 'while read f; do rm "$f"; done', ['read f', 'rm $f']],
    ['! negation', '! rm -rf /', ['rm -rf /']],
    ['a function body', 'f() { rm -rf /; }; f', ['f', 'rm -rf /']],
    ['${ } with a substitution in its default', 'echo ${X:-$(rm -rf /)}', ['rm -rf /', 'echo ${X:-$(rm -rf /)}']],
    ['$(( )) arithmetic', 'echo $((1 + (2 * 3)))', ['echo $((1 + (2 * 3)))']],
    ['$(( that is a subshell in a substitution', 'echo $((ls) | (rm x))', ['ls', 'rm x', 'echo $((ls) | (rm x))']],
  ])('descends into %s', (_, command, expected) => {
    expect(parts(command)).toEqual(expected);
  });

  it.each<[string, string, string[]]>([
    ['single quotes', "'rm' -rf '/'", ['rm -rf /']],
    ['double quotes', '"rm" "-rf" "/"', ['rm -rf /']],
    ['a separator in single quotes', "echo 'a; rm -rf /'", ['echo a; rm -rf /']],
    ['a separator in double quotes', 'echo "a && rm -rf /"', ['echo a && rm -rf /']],
    ['$( ) in double quotes still runs', 'echo "$(rm -rf /)"', ['rm -rf /', 'echo $(rm -rf /)']],
    ['backticks in double quotes still run', 'echo "`rm -rf /`"', ['rm -rf /', 'echo `rm -rf /`']],
    ['$( ) in single quotes does not run', "echo '$(rm -rf /)'", ['echo $(rm -rf /)']],
    ['a backslash escape', 'r\\m -rf \\/', ['rm -rf /']],
    ['an escaped separator', 'echo a\\;rm', ['echo a;rm']],
    ['an escaped quote', "echo \\'; rm x", ["echo '", 'rm x']],
    ['escapes in double quotes', 'echo "a\\"b\\$c\\d"', ['echo a"b$c\\d']],
    ['a line continuation', 'rm \\\n-rf /', ['rm -rf /']],
    ['ANSI-C quotes', "$'\\x72m' -rf $'\\057'", ['rm -rf /']],
    ['locale quotes', '$"rm" -rf /', ['rm -rf /']],
    ['quotes joining words', 'r"m" -r\'f\' /', ['rm -rf /']],
    ['a comment', 'ls # ; rm -rf /', ['ls']],
    ['a # inside a word', 'echo a#b; rm x', ['echo a#b', 'rm x']],
  ])('reads %s', (_, command, expected) => {
    expect(parts(command)).toEqual(expected);
  });

  it.each<[string, string, string[]]>([
    ['an output redirection', 'rm -rf / > /dev/null 2>&1', ['rm -rf /']],
    ['an input redirection without spaces', 'sh<script', ['sh']],
    ['&> and >> to /dev/null', 'make &>/dev/null; ls >>/dev/null', ['make', 'ls']],
    ['a here-string', 'bash <<< "rm -rf /"', ['bash']],
  ])('leaves out %s', (_, command, expected) => {
    expect(parts(command)).toEqual(expected);
  });

  it.each<[string, string, string[]]>([
    ['variable assignments, each a part', 'FOO=1 BAR="a b" rm -rf /', ['FOO=1', 'BAR=a b', 'rm -rf /']],
    ['not a quoted assignment-like word', "'A=1' rm", ['A=1 rm']],
    ['sudo', 'sudo rm -rf /', ['sudo rm -rf /', 'rm -rf /']],
    ['sudo with options', 'sudo -u root -E rm -rf /', ['sudo -u root -E rm -rf /', 'rm -rf /']],
    ['sudo with assignments', 'sudo FOO=1 rm -rf /', ['sudo FOO=1 rm -rf /', 'FOO=1', 'rm -rf /']],
    ['nohup', 'nohup rm -rf / &', ['nohup rm -rf /', 'rm -rf /']],
    ['time', 'time -p rm -rf /', ['time -p rm -rf /', 'rm -rf /']],
    ['nice', 'nice -n 10 rm -rf /', ['nice -n 10 rm -rf /', 'rm -rf /']],
    ['exec', 'exec rm -rf /', ['exec rm -rf /', 'rm -rf /']],
    ['command', 'command rm -rf /', ['command rm -rf /', 'rm -rf /']],
    ['env with assignments', 'env -i FOO=1 rm -rf /', ['env -i FOO=1 rm -rf /', 'FOO=1', 'rm -rf /']],
    ['timeout', 'timeout -s KILL 5 rm -rf /', ['timeout -s KILL 5 rm -rf /', 'rm -rf /']],
    ['xargs', 'ls | xargs -n 1 rm -rf', ['ls', 'xargs -n 1 rm -rf', 'rm -rf']],
    [
      'wrappers inside wrappers',
      'sudo nohup nice rm -rf /',
      ['sudo nohup nice rm -rf /', 'nohup nice rm -rf /', 'nice rm -rf /', 'rm -rf /'],
    ],
    ['a command run by its path', '/bin/rm -rf /', ['/bin/rm -rf /', 'rm -rf /']],
    ['a wrapper run by its path', '/usr/bin/sudo rm x', ['/usr/bin/sudo rm x', 'sudo rm x', 'rm x']],
    ['find -exec', 'find . -name x -exec rm -rf {} \\;', ['find . -name x -exec rm -rf {} ;', 'rm -rf {}']],
  ])('unwraps %s', (_, command, expected) => {
    expect(parts(command)).toEqual(expected);
  });

  it.each<[string, string, string[]]>([
    ["sh -c '…'", "sh -c 'ls; rm -rf /'", ['sh -c ls; rm -rf /', 'ls', 'rm -rf /']],
    ['bash -c "…"', 'bash -c "rm -rf /"', ['bash -c rm -rf /', 'rm -rf /']],
    ['zsh -c', 'zsh -c rm', ['zsh -c rm', 'rm']],
    ['bundled options', "bash -euc 'rm x'", ['bash -euc rm x', 'rm x']],
    ['-o with a value', "bash -o pipefail -c 'rm x'", ['bash -o pipefail -c rm x', 'rm x']],
    ['a shell by its path', "/bin/sh -c 'rm x'", ['/bin/sh -c rm x', 'sh -c rm x', 'rm x']],
    ['env … sh -c', "env FOO=1 sh -c 'rm x'", ['env FOO=1 sh -c rm x', 'FOO=1', 'sh -c rm x', 'rm x']],
    ['xargs sh -c', 'xargs sh -c \'rm "$1"\' _', ['xargs sh -c rm "$1" _', 'sh -c rm "$1" _', 'rm $1']],
    ['sudo bash -c', "sudo bash -c 'rm x'", ['sudo bash -c rm x', 'bash -c rm x', 'rm x']],
    ['eval', "eval 'rm -rf /'", ['eval rm -rf /', 'rm -rf /']],
    ['eval of several words', 'eval rm "-rf /"', ['eval rm -rf /', 'rm -rf /']],
    ['sh -c in sh -c', `sh -c "bash -c 'rm x'"`, ["sh -c bash -c 'rm x'", 'bash -c rm x', 'rm x']],
    ['env -S', "env -S 'rm x'", ['env -S rm x', 'rm x']],
    ['su -c', "su -c 'rm x' root", ['su -c rm x root', 'rm x']],
    ['a shell running a file', 'sh script.sh', ['sh script.sh']],
  ])('reads the command line of %s', (_, command, expected) => {
    expect(parts(command)).toEqual(expected);
  });

  it('reads nothing from an empty or blank command', () => {
    expect(parts('')).toEqual([]);
    expect(parts('  \n ; ')).toEqual([]);
  });
});

describe('a command it cannot read with confidence is unparsable', () => {
  it.each<[string, string, RegExp]>([
    ['an unclosed single quote', "rm 'x", /single quote/],
    ['an unclosed double quote', 'rm "x', /double quote/],
    ['an unclosed backtick', 'echo `rm x', /backtick/],
    ['an unclosed $(', 'echo $(rm x', /"\(" without its "\)"/],
    ['an unclosed subshell', '(rm x', /"\(" without its "\)"/],
    ['a ) without (', 'rm x)', /"\)" without its "\("/],
    ['a ( in the middle of a command', 'echo a(b)', /"\(" in the middle/],
    ['an unclosed ${', 'echo ${x', /\$\{/],
    ["an unclosed $'", "echo $'x", /\$'/],
    ['a here-document', 'cat <<EOF\nrm -rf /\nEOF', /here-document/],
    ['a here-document with <<-', 'cat <<-EOF\nEOF', /here-document/],
    ['a backslash at the end', 'rm x \\', /backslash/],
    ['a case statement', 'case $x in a) rm;; esac', /"\)"/],
    ['a command inside arithmetic', 'echo $(( $(rm x) ))', /arithmetic|\$\(\(/],
    ['a substitution in a redirection target', 'ls > $(rm -rf /)', /redirection/],
    ['an assignment of a substitution', 'X=$(rm -rf /)', /assignment/],
    ['an unclosed single quote inside sh -c', `sh -c "rm 'x"`, /single quote/],
  ])('%s', (_, command, reason) => {
    expect(unparsable(command)).toMatch(reason);
  });

  it('a nesting deeper than the bound', () => {
    const nest = (n: number) => '$('.repeat(n) + 'rm x' + ')'.repeat(n);
    expect(parts(`echo ${nest(SHELL_LIMITS.maxDepth)}`)).toContain('rm x');
    expect(unparsable(`echo ${nest(SHELL_LIMITS.maxDepth + 1)}`)).toMatch(/nests deeper/);
  });

  it('sh -c strings count towards the nesting bound', () => {
    let line = 'rm x';
    for (let i = 0; i <= SHELL_LIMITS.maxDepth; i++) line = `sh -c ${JSON.stringify(line)}`.replace(/\$/g, '\\$');
    expect(unparsable(line)).toMatch(/nests deeper/);
  });

  it('a command longer than the bound', () => {
    expect(splitShellCommand('x'.repeat(SHELL_LIMITS.maxLength)).parsable).toBe(true);
    expect(unparsable('x'.repeat(SHELL_LIMITS.maxLength + 1))).toMatch(/longer than/);
  });

  it('more commands than the bound', () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`).join(';');
    expect(parts(many(SHELL_LIMITS.maxParts))).toHaveLength(SHELL_LIMITS.maxParts);
    expect(unparsable(many(SHELL_LIMITS.maxParts + 1))).toMatch(/more than/);
  });

  it('more uncertain readings of wrapper options than the bound (each may branch again)', () => {
    // Each `sudo --x sudo` is read two ways, both of them sudo again.
    const chain = (n: number) => `${'sudo --x sudo '.repeat(n)}rm x`;
    expect(parts(chain(2))).toEqual(expect.arrayContaining(['sudo rm x', 'rm x']));
    expect(unparsable(chain(SHELL_LIMITS.maxOtherReadings + 1))).toMatch(
      /options of sudo cannot be read with confidence/,
    );
    expect(unparsable('sudo --a 1 --b 2 --c 3 --d 4 rm x')).toMatch(/options of sudo cannot be read with confidence/);
  });
});

// ---- properties ----

/** Words that read as themselves: no quoting, separators, keywords, wrappers or assignments. */
const plainWord = fc
  .stringMatching(/^[a-z0-9_./:-]{1,8}$/)
  .filter(
    (w) =>
      !/^(?:if|then|else|elif|fi|do|done|while|until|esac|function|coproc|sudo|doas|nohup|setsid|time|nice|exec|command|builtin|env|timeout|xargs|stdbuf|eval|su|find|sh|bash|zsh|dash|ksh|mksh|ash|fish)$/.test(
        w,
      ) && !w.includes('/'),
  );
const simpleCommand = fc.array(plainWord, { minLength: 1, maxLength: 4 }).map((ws) => ws.join(' '));
const separator = fc.constantFrom(' && ', ' || ', '; ', ';', ' | ', '|', ' & ', '&', '\n', ' |& ', '&&');

/** Ways to write `text` as one shell word. */
const quoteWord = (text: string) =>
  fc.constantFrom(
    text,
    `'${text}'`,
    `"${text}"`,
    text.replace(/(.)/g, '\\$1'),
    `"${text.slice(0, 1)}"${text.slice(1)}`,
  );
/** A simple command written with random quoting and spacing. */
const written = (words: string[]) =>
  fc
    .tuple(...words.map(quoteWord), fc.constantFrom(' ', '  ', '\t'))
    .map((ws) => ws.slice(0, -1).join(ws[ws.length - 1]));

const rmCommand = fc.array(plainWord, { maxLength: 3 }).map((rest) => ['rm', ...rest]);
interface Line {
  text: string;
  /** A simple command, which a wrapper or an assignment may precede (a subshell or group may not). */
  simple: boolean;
}
const quoteSingle = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
const quoteDouble = (text: string) => `"${text.replace(/(["\\$`])/g, '\\$1')}"`;
/** Puts a command line somewhere it still runs: wrapped, substituted, in a subshell, group or string. */
const hide = ({ text, simple }: Line): fc.Arbitrary<Line> =>
  fc.constantFrom<Line>(
    ...(simple
      ? [
          `sudo ${text}`,
          `nohup ${text}`,
          `FOO=1 ${text}`,
          `env A=b ${text}`,
          `timeout 5 ${text}`,
          `xargs ${text}`,
          `time ${text}`,
        ].map((t) => ({ text: t, simple: true }))
      : []),
    { text: `echo $( ${text})`, simple: true },
    { text: `echo "$( ${text})"`, simple: true },
    { text: `sh -c ${quoteSingle(text)}`, simple: true },
    { text: `bash -c ${quoteDouble(text)}`, simple: true },
    { text: `eval ${quoteSingle(text)}`, simple: true },
    { text: `cat <(${text})`, simple: true },
    // With spaces: `((…))` is arithmetic to bash, not two subshells.
    { text: `( ${text} )`, simple: false },
    { text: `{ ${text}; }`, simple: false },
    { text: `if true; then ${text}; fi`, simple: false },
  );

describe('properties of splitting', () => {
  it('every simple command joined by any separators is among the parts', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(simpleCommand, separator), { minLength: 1, maxLength: 8 }), (list) => {
        const line = list.map(([cmd, sep], i) => (i === list.length - 1 ? cmd : cmd + sep)).join('');
        const got = parts(line);
        for (const [cmd] of list) expect(got).toContain(cmd);
      }),
    );
  });

  it('an rm command is a part wherever it is hidden, however it is quoted', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(simpleCommand, separator), { maxLength: 3 }),
        rmCommand.chain((words) => written(words).map((text) => ({ text, normal: words.join(' ') }))),
        fc.array(fc.tuple(separator, simpleCommand), { maxLength: 3 }),
        fc.integer({ min: 0, max: 2 }),
        fc.nat(),
        (before, rm, after, depth, seed) => {
          let hidden: Line = { text: rm.text, simple: true };
          // Wrap 0–2 times, picking deterministically from the seed so shrinking stays simple.
          for (let d = 0; d < depth; d++) hidden = fc.sample(hide(hidden), { numRuns: 1, seed: seed + d })[0];
          const line = before.map(([c, s]) => c + s).join('') + hidden.text + after.map(([s, c]) => s + c).join('');
          expect(parts(line)).toContain(rm.normal);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('never throws on any text, and answers parts or a reason', () => {
    const shellish = fc
      .array(
        fc.constantFrom(
          'a',
          ' ',
          "'",
          '"',
          '\\',
          '$',
          '(',
          ')',
          '`',
          '{',
          '}',
          ';',
          '&',
          '|',
          '<',
          '>',
          '#',
          '\n',
          '=',
          '-',
          'c',
          'sh ',
          'eval ',
          'sudo ',
          '[',
          ']',
          '!',
          '@P',
          ':',
          '1',
          '[[ ',
          ' -eq ',
          'let ',
          'declare -i ',
          'PATH=',
          '..',
          '/',
          'trap ',
        ),
        { maxLength: 40 },
      )
      .map((cs) => cs.join(''));
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), shellish), (text) => {
        const split = splitShellCommand(text);
        if (split.parsable) expect(split.parts.every((p) => typeof p === 'string' && p !== '')).toBe(true);
        // A reason the reader gave, never the fallback for an error it did not expect.
        else expect(split.reason).toMatch(/^(?!it could not be read$)\S/);
      }),
      { numRuns: 5000 },
    );
  });
});
