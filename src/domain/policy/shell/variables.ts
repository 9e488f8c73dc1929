/**
 * Variables that change which program a command runs, make a shell or program run code of their choosing, or
 * change how the shell reads the rest of the line. Written as an exact name or a prefix ending in `*`.
 */
export const RUN_CHANGING_VARIABLES: readonly string[] = Object.freeze([
  'PATH',
  'LD_*',
  'DYLD_*',
  'BASH_ENV',
  'ENV',
  'IFS',
  'PS0',
  'PS1',
  'PS2',
  'PS3',
  'PS4',
  'PROMPT_COMMAND',
  'SHELLOPTS',
  'BASHOPTS',
  'BASH_FUNC_*',
  'BASH_CMDS',
  'BASH_ALIASES',
  'GIT_*',
  'HOME',
  'XDG_CONFIG_HOME',
  'PAGER',
  'MANPAGER',
  'EDITOR',
  'VISUAL',
  'LESSOPEN',
  'LESSCLOSE',
  'NODE_OPTIONS',
  'PYTHONPATH',
  'PYTHONSTARTUP',
  'PYTHONHOME',
  'PERL5OPT',
  'PERL5LIB',
  'RUBYOPT',
  'RUBYLIB',
  'JAVA_TOOL_OPTIONS',
  'SSH_ASKPASS',
  'SUDO_ASKPASS',
  'NPM_CONFIG_*',
]);
const EXACT = new Set(RUN_CHANGING_VARIABLES.filter((v) => !v.endsWith('*')));
const PREFIXES = RUN_CHANGING_VARIABLES.filter((v) => v.endsWith('*')).map((v) => v.slice(0, -1));

export function changesWhatRuns(name: string): boolean {
  // Prefixes in any case: npm reads its configuration (`script-shell` among it) from npm_config_* too.
  const upper = name.toUpperCase();
  return EXACT.has(name) || PREFIXES.some((p) => upper.startsWith(p));
}
