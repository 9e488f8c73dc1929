/**
 * What the splitter must not hide: assignments, output redirections, environment that changes what runs, and
 * the expansions that make bash run a variable's value as code (arithmetic, `${x@P}`, `${!x}`, subscripts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isRedirectPart, redirectPart, RUN_CHANGING_VARIABLES } from './shell-command';
import { parts, unparsable } from '../../../test/support/shell-split';

describe('an assignment is a part of its own', () => {
  it.each<[string, string, string[]]>([
    ['a bare assignment', 'x=1', ['x=1']],
    ['a bare assignment before a command', 'x=1; ls -la', ['x=1', 'ls -la']],
    ['a prefix assignment', 'CI=1 npm test', ['CI=1', 'npm test']],
    ['several prefix assignments, quotes removed', 'A=1 B="a b" ls', ['A=1', 'B=a b', 'ls']],
    ['an assignment of a plain variable', 'x=$HOME/a; ls', ['x=$HOME/a', 'ls']],
    ['an appending assignment', 'x+=a', ['x+=a']],
    ['an assignment behind env', 'env A=b ls', ['env A=b ls', 'A=b', 'ls']],
    ['an assignment behind sudo', 'sudo A=b ls', ['sudo A=b ls', 'A=b', 'ls']],
  ])('%s', (_, command, expected) => {
    expect(parts(command)).toEqual(expected);
  });

  it.each<[string, string]>([
    ['a value with a $( ) that arithmetic would run later', "x='a[$(rm -rf ~)]'; ls $x"],
    ['a value with a quoted $( ) that prompt expansion would run later', "x='$(rm -rf ~)'"],
    ['a value with backticks', 'x="`id`"'],
    ['a value with ${', "x='${y@P}'"],
    ['a value with [', 'x=a[1]'],
    ['a value that is a command substitution', 'x=$(pwd)'],
    ['a subscript over a variable', 'a[x]=1'],
    ['a prefix assignment whose value holds $(', "x='$(id)' ls"],
  ])('is unreadable for %s', (_, command) => {
    expect(unparsable(command)).toMatch(/assign|subscript/);
  });

  it.each<[string]>([
    ['PATH=/tmp/evil:$PATH; ls -la'],
    ['PATH=/tmp/evil ls -la'],
    ['LD_PRELOAD=/tmp/evil.so ls -la'],
    ['LD_LIBRARY_PATH=/tmp ls'],
    ['BASH_ENV=/tmp/x bash -c ls'],
    ['ENV=/tmp/x sh -c ls'],
    ['IFS=/ ls'],
    ['PS4=x ls'],
    ['PROMPT_COMMAND=id'],
    ['GIT_SSH_COMMAND=id git fetch'],
    ['GIT_EXTERNAL_DIFF=id git diff'],
    ['env LD_PRELOAD=/tmp/evil.so ls'],
    ['sudo LD_PRELOAD=/tmp/evil.so ls'],
    ['read -r PATH < /tmp/p; ls -la'],
    ['printf -v PATH %s /tmp/evil; ls'],
    ['mapfile -t LD_PRELOAD < f'],
    ['for PATH in /tmp/evil; do ls -la; done'],
    ['select IFS in a; do ls; done'],
    ['getopts ab PATH'],
    ['export PATH=/tmp/evil'],
    ['declare -x LD_PRELOAD=/tmp/evil.so'],
    ["env 'BASH_FUNC_ls%%=() { id; }' bash -c ls"],
    ['ls ${LD_PRELOAD:=/tmp/evil.so}'],
    [': ${BASH_ENV=/tmp/x}'],
  ])('is unreadable when it sets what decides which program runs: %s', (command) => {
    expect(unparsable(command)).toMatch(/changes what runs/);
  });
});

describe('the variables that change what runs', () => {
  it('are each unreadable as an assignment, and each named in docs/API.md', () => {
    const docs = readFileSync(join(__dirname, '../../../docs/API.md'), 'utf8');
    for (const v of RUN_CHANGING_VARIABLES) {
      const name = v.replace('*', 'X');
      expect(unparsable(`${name}=1 ls`)).toMatch(/changes what runs/);
      expect(unparsable(`${name.toLowerCase()}=1 ls`)).toEqual(
        v.endsWith('*') ? expect.stringMatching(/changes what runs/) : undefined,
      );
      expect(/^PS\d$/.test(v) ? docs.includes('`PS0`–`PS4`') : docs.includes(`\`${v}\``)).toBe(true);
    }
  });
});

describe('an output redirection is a part of its own', () => {
  it.each<[string, string, string[]]>([
    ['>', 'ls -la > ~/.bashrc', ['ls -la', redirectPart('~/.bashrc')]],
    ['>>', 'ls -la >> ~/.bashrc', ['ls -la', redirectPart('~/.bashrc')]],
    ['after a dup', 'ls -la 2>&1 >/dev/sda', ['ls -la', redirectPart('/dev/sda')]],
    ['to /dev/tcp', 'ls -la > /dev/tcp/127.0.0.1/9', ['ls -la', redirectPart('/dev/tcp/127.0.0.1/9')]],
    ['with an fd number', 'ls 2>errors.log', ['ls', redirectPart('errors.log')]],
    ['&> and &>>', 'make &>log; ls &>>log2', ['make', redirectPart('log'), 'ls', redirectPart('log2')]],
    ['>|', 'ls >| out', ['ls', redirectPart('out')]],
    ['<> (opens for writing)', 'ls <> out', ['ls', redirectPart('out')]],
    ['>& to a file', 'ls >& out', ['ls', redirectPart('out')]],
    ['before the command (listed after it)', '> out rm -rf /', ['rm -rf /', redirectPart('out')]],
    ['quoted', 'ls > "a b"', ['ls', redirectPart('a b')]],
    ['on a group', '{ ls; } > out', ['ls', redirectPart('out')]],
    ['alone', '> out', [redirectPart('out')]],
    [
      'an input redirection from the network',
      'cat < /dev/tcp/10.0.0.1/80',
      ['cat', redirectPart('/dev/tcp/10.0.0.1/80')],
    ],
  ])('%s', (_, command, expected) => {
    expect(parts(command)).toEqual(expected);
  });

  it.each<[string, string, string[]]>([
    ['/dev/null', 'rm -rf / > /dev/null 2>&1', ['rm -rf /']],
    ['&N and closing', 'ls >&2 2>&- 3<&0 4>&1-', ['ls']],
    ['/dev/stderr', 'echo x > /dev/stderr', ['echo x']],
    ['an input file', 'sh < script', ['sh']],
    ['a here-string', 'bash <<< "rm -rf /"', ['bash']],
    ['a process substitution', 'ls > >(cat)', ['cat', 'ls']],
  ])('is no part for %s', (_, command, expected) => {
    expect(parts(command)).toEqual(expected);
  });

  it.each<[string, string]>([
    ['a variable', 'ls > "$HOME/.bashrc"'],
    ['a command substitution', 'ls > /tmp/$(printf ../home/u/.bashrc)'],
    ['an input path with a substitution', 'cat < $(printf /dev/tcp/evil/80)'],
    ['a .. segment', 'ls > /tmp/../home/u/.bashrc'],
    ['a dup to a variable fd', 'ls >&$fd'],
  ])('is unreadable when its path is %s', (_, command) => {
    expect(unparsable(command)).toMatch(/redirection/);
  });

  it('a command named like a redirection part is unreadable, so the two cannot be confused', () => {
    expect(unparsable(`'${redirectPart('/tmp/x')}'`)).toMatch(/named like/);
  });

  it('isRedirectPart tells the parts apart', () => {
    expect(isRedirectPart(redirectPart('x'))).toBe(true);
    expect(isRedirectPart('ls > x')).toBe(false);
  });
});

describe('expansions that run a value as code are unreadable', () => {
  it.each<[string, string]>([
    ['$((name))', 'ls $((x))'],
    ['$(( $name + 1 ))', 'echo $(($x + 1))'],
    ['$[…]', 'ls $[x]'],
    ['((…)) over a variable', '((x)); ls'],
    ['((…)) that is not nested subshells', '((rm -rf /))'],
    ['let', 'let x'],
    ['${x@P}', 'ls ${x@P}'],
    ['${x@P} in double quotes', 'ls "${x@P}"'],
    ['${!x}', 'ls ${!x}'],
    ['${a[x]}', 'echo ${a[x]}'],
    ['${a[$i]}', 'echo "${a[$i]}"'],
    ['${#a[x]}', 'echo ${#a[x]}'],
    ['${s:x}', 'echo ${s:x}'],
    ['${s:0:$n}', 'echo ${s:0:$n}'],
    ['${@:x}', 'echo ${@:x}'],
    ['[[ … -eq … ]] over a variable', '[[ $x -eq 1 ]] && ls'],
    ['[[ … -lt … ]] joined by &&', '[[ 1 -eq 1 && y -lt 2 ]]'],
    ['[[ -v ]] with a subscript', '[[ -v a[$i] ]]'],
    ['test -v', 'test -v "$x"'],
    ['[ -v ]', '[ -v "$x" ]'],
    ['printf -v', 'printf -v "$x" %s 1'],
    ['read into a variable name', 'read "$x" < f'],
    ['declare -i with a name', 'declare -i y=x'],
    ['declare -n to a variable', 'declare -n r="$x"'],
    ['local -n', 'local -n r="$x"'],
  ])('%s', (_, command) => {
    expect(unparsable(command)).toBeDefined();
  });

  it.each<[string, string, string[]]>([
    [
      'constant arithmetic',
      'echo $((1 + (2 * 3))) $[4] $((16#ff)) $(($# + 1))',
      ['echo $((1 + (2 * 3))) $[4] $((16#ff)) $(($# + 1))'],
    ],
    ['((…)) on constants', '((1)) && ls', ['ls']],
    ['nested subshells', '( (ls) )', ['ls']],
    ['${!prefix*} and ${!a[@]}', 'echo ${!BASH*} ${!a[@]}', ['echo ${!BASH*} ${!a[@]}']],
    ['${a[@]} and ${a[0]}', 'echo ${a[@]} ${a[0]} ${#a[*]}', ['echo ${a[@]} ${a[0]} ${#a[*]}']],
    [
      'defaults and lengths',
      'echo ${x:-a} ${x:=b} ${x:+c} ${#x} ${x:1:2} ${x: -1}',
      ['echo ${x:-a} ${x:=b} ${x:+c} ${#x} ${x:1:2} ${x: -1}'],
    ],
    ['other @ operators', 'echo ${x@Q} ${x@U}', ['echo ${x@Q} ${x@U}']],
    ['[[ ]] string tests', '[[ -f x && $a == b ]] && ls', ['[[ -f x && $a == b ]]', 'ls']],
    ['[[ ]] on numbers', '[[ 1 -eq $# ]]', ['[[ 1 -eq $# ]]']],
    ['quoted text that looks like an expansion', "echo '$((x)) ${x@P}'", ['echo $((x)) ${x@P}']],
    ['read into a plain name', 'read -r -p "[y/n] " answer', ['read -r -p [y/n]  answer']],
    ['test -v of a plain name', 'test -v PATH && [[ -v HOME ]]', ['test -v PATH', '[[ -v HOME ]]']],
  ])('reads %s', (_, command, expected) => {
    expect(parts(command)).toEqual(expected);
  });
});

describe('strings that run later as commands are read', () => {
  it.each<[string, string, string[]]>([
    ['trap', "trap 'rm -rf ~' EXIT", ['trap rm -rf ~ EXIT', 'rm -rf ~']],
    ['alias', "alias ls='rm -rf ~'", ['alias ls=rm -rf ~', 'rm -rf ~']],
    ['mapfile -C', "mapfile -C 'rm -rf ~' -c 1 a < f", ['mapfile -C rm -rf ~ -c 1 a', 'rm -rf ~']],
    ['coproc', 'coproc rm -rf ~', ['coproc rm -rf ~', 'rm -rf ~']],
  ])('%s', (_, command, expected) => {
    expect(parts(command)).toEqual(expected);
  });
});

describe('a {name} before a redirection assigns name', () => {
  it.each<[string, string, string[]]>([
    ['on a command', 'exec {fd}>out', ['fd=', 'exec', redirectPart('out')]],
    ['on a group', '{ ls -la; } {fd}<&0', ['ls -la', 'fd=']],
    ['to /dev/null', 'echo {x}>/dev/null', ['x=', 'echo']],
    ['not when apart from the operator: a word', 'echo {x} >/dev/null', ['echo {x}']],
    ['not when quoted: a word', "echo '{x}'>/dev/null", ['echo {x}']],
    ['not before &>: a word', 'echo {x}&>/dev/null', ['echo {x}']],
  ])('%s', (_, command, expected) => {
    expect(parts(command)).toEqual(expected);
  });

  it.each<[string]>([['{ ls -la; } {PATH}<&0'], ['{ ls; } {HOME}>/dev/null'], ['true {LD_PRELOAD}>/dev/null; ls']])(
    'is unreadable for a variable that changes what runs: %s',
    (command) => {
      expect(unparsable(command)).toMatch(/changes what runs/);
    },
  );

  it.each<[string]>([
    ['true {a[i]}>/dev/null'],
    ['echo -n {BASH_CMDS[ls]}>/dev/null; ls -la'],
    ['true {a[$(id)]}>/dev/null'],
  ])('is unreadable with a subscript, which bash evaluates: %s', (command) => {
    expect(unparsable(command)).toMatch(/subscript/);
  });

  it('BASH_CMDS and BASH_ALIASES change what runs', () => {
    expect(unparsable('echo {BASH_CMDS}>/dev/null')).toMatch(/changes what runs/);
    expect(unparsable('BASH_ALIASES=x')).toMatch(/changes what runs/);
  });
});

describe('[[ … ]] glued to an operator ends at ]]', () => {
  it.each<[string, string[]]>([
    ['[[ 1 ]]&&rm -rf x', ['[[ 1 ]]', 'rm -rf x']],
    ['[[ 1 ]]||rm -rf x', ['[[ 1 ]]', 'rm -rf x']],
    ['[[ -d . ]]>pw2', ['[[ -d . ]]', redirectPart('pw2')]],
    ['[[ -d . ]]<f', ['[[ -d . ]]']],
    ['([[ 1 ]])', ['[[ 1 ]]']],
    ['[[ a < b && ( c > d ) ]]&&ls', ['[[ a < b && ( c > d ) ]]', 'ls']],
  ])('%s', (command, expected) => {
    expect(parts(command)).toEqual(expected);
  });
});

describe('commands a deny rule must see', () => {
  it.each<[string, string, string]>([
    ['a function defined with the function keyword', 'function f { rm -rf x; }; f', 'rm -rf x'],
    ['a function keyword with ()', 'function f() { rm -rf x; }', 'rm -rf x'],
    ['a named coproc', 'coproc f { rm x; }', 'rm x'],
    ['sudo with grouped short options taking a value', 'sudo -iu root rm -rf x', 'rm -rf x'],
    ['sudo with a value joined to its option', 'sudo -uroot rm -rf x', 'rm -rf x'],
    ['sudo -R (chroot)', 'sudo -R /srv rm -rf x', 'rm -rf x'],
    ['env -S', "env -S 'rm -rf x'", 'rm -rf x'],
    ['timeout with a long option', 'timeout --signal KILL 5 rm -rf x', 'rm -rf x'],
    ['an unknown long option, read both ways', 'sudo --us root rm -rf x', 'rm -rf x'],
    ['an unknown long option taking no value', 'timeout --foreground 5 rm -rf x', 'rm -rf x'],
    ['xargs with grouped options', 'xargs -0rn 1 rm -rf', 'rm -rf'],
    ['sudo -h, with or without a host', 'sudo -h rm -rf x', 'rm -rf x'],
    ['env -', 'env - rm -rf x', 'rm -rf x'],
  ])('%s', (_, command, part) => {
    expect(parts(command)).toContain(part);
  });

  it('a coproc name is an assignment, checked as one', () => {
    expect(parts('coproc f { rm x; }')).toContain('f=');
    expect(unparsable('coproc PATH { ls; }')).toMatch(/changes what runs/);
  });

  it.each<[string]>([
    ['{rm,-rf,x}'],
    ['{rm,-rf}\\ x'],
    ['/bin/{rm,ls} -rf x'],
    ['{r..r}m -rf x'],
    ['sudo {rm,-rf,x}'],
    ['sudo -u {root,rm} -rf x'],
    ['timeout {5,rm} -rf x'],
    ["env {-S,'rm -rf x'}"],
    ["bash {-c,'rm -rf x'}"],
    ['find . -exec {rm,-rf} {} +'],
  ])('an unquoted brace expansion where it may name the command is unreadable: %s', (command) => {
    expect(unparsable(command)).toMatch(/brace expansion/);
  });

  it.each<[string, string[]]>([
    ['echo {a,b}', ['echo {a,b}']],
    ['sudo cp f{,.bak}', ['sudo cp f{,.bak}', 'cp f{,.bak}']],
    ["ls '{a,b}'", ['ls {a,b}']],
    ['{ ls; }', ['ls']],
    ["find . -name '*.{js,ts}' -exec ls {} +", ['find . -name *.{js,ts} -exec ls {} +', 'ls {}']],
  ])(
    'a brace expansion in an argument (also after the command a wrapper runs), or a group, is read: %s',
    (command, expected) => {
      expect(parts(command)).toEqual(expected);
    },
  );
});
