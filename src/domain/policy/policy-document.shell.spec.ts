import { ValidationError, ValidationFault } from '../shared/domain-error';
import { DEFAULT_SHELL_TOOLS, MAX_SHELL_TOOLS, PolicyDocument } from './policy-document';
import { MAX_PATTERN_LENGTH } from './tool-pattern';

function faultsOf(raw: unknown, read: (raw: unknown) => PolicyDocument = PolicyDocument.parse): ValidationFault[] {
  try {
    read(raw);
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return (e as ValidationError).faults;
  }
  throw new Error('the document was accepted');
}

describe('defaults.shellTools', () => {
  it('left out, is left out of the document, and the built-in shell tools apply', () => {
    const doc = PolicyDocument.parse({});
    expect(doc.toJSON().defaults).not.toHaveProperty('shellTools');
    expect(DEFAULT_SHELL_TOOLS.every((name) => doc.isShellTool(name))).toBe(true);
    expect(doc.isShellTool('get_weather')).toBe(false);
    expect(PolicyDocument.empty().isShellTool('bash')).toBe(true);
  });

  it('given, replaces the built-in list: globs on tool names, kept once each', () => {
    const doc = PolicyDocument.parse({ defaults: { shellTools: ['*_shell', 'run', 'run'] } });
    expect(doc.toJSON().defaults.shellTools).toEqual(['*_shell', 'run']);
    expect(['ci_shell', 'run'].map((n) => doc.isShellTool(n))).toEqual([true, true]);
    expect(['shell', 'runner'].map((n) => doc.isShellTool(n))).toEqual([false, false]);
  });

  it('may be empty: no tool is a shell tool', () => {
    expect(PolicyDocument.parse({ defaults: { shellTools: [] } }).isShellTool('shell')).toBe(false);
  });

  it('makes a different document from the one without it', () => {
    expect(PolicyDocument.parse({ defaults: { shellTools: ['shell'] } }).equals(PolicyDocument.parse({}))).toBe(false);
    expect(
      PolicyDocument.parse({ defaults: { shellTools: ['shell'] } }).equals(
        PolicyDocument.parse({ defaults: { shellTools: ['shell'] } }),
      ),
    ).toBe(true);
  });

  it.each<[string, unknown, string, RegExp]>([
    ['not a list', 'shell', 'defaults.shellTools', /array/],
    ['an entry that is not a string', ['shell', 3], 'defaults.shellTools[1]', /non-empty string/],
    ['an empty entry', [''], 'defaults.shellTools[0]', /non-empty string/],
    ['a blank entry', ['  '], 'defaults.shellTools[0]', /empty/],
    ['an argument list', ['shell(cmd=*)'], 'defaults.shellTools[0]', /without an argument list/],
    ['a glob too long', ['x'.repeat(MAX_PATTERN_LENGTH + 1)], 'defaults.shellTools[0]', /characters/],
    [
      'too many globs',
      Array.from({ length: MAX_SHELL_TOOLS + 1 }, (_, i) => `t${i}`),
      'defaults.shellTools',
      new RegExp(`at most ${MAX_SHELL_TOOLS}`),
    ],
  ])('refuses %s', (_, shellTools, path, message) => {
    const faults = faultsOf({ defaults: { shellTools } });
    expect(faults).toEqual([{ path, message: expect.stringMatching(message) }]);
  });

  it('a stored document with a glob longer than today’s bound still loads', () => {
    expect(
      PolicyDocument.restore({ defaults: { shellTools: ['x'.repeat(MAX_PATTERN_LENGTH + 1)] } }).isShellTool(
        'x'.repeat(MAX_PATTERN_LENGTH + 1),
      ),
    ).toBe(true);
  });
});

describe('a rule’s shell option', () => {
  it('is kept as given, and left out when not given', () => {
    const doc = PolicyDocument.parse({
      rules: [
        { match: 'run(cmd=rm *)', level: 'deny', shell: true, reason: 'no' },
        { match: 'shell(cmd=*)', level: 'notify', shell: false },
        { match: 'x', level: 'deny' },
      ],
    });
    expect(doc.toJSON().rules).toEqual([
      { match: 'run(cmd=rm *)', level: 'deny', shell: true, reason: 'no' },
      { match: 'shell(cmd=*)', level: 'notify', shell: false },
      { match: 'x', level: 'deny' },
    ]);
  });

  it('must be true or false', () => {
    expect(faultsOf({ rules: [{ match: 'run(cmd=*)', level: 'deny', shell: 'yes' }] })).toEqual([
      { path: 'rules[0].shell', message: 'must be true or false' },
    ]);
  });

  it('true needs a match that names an argument', () => {
    expect(faultsOf({ rules: [{ match: 'run', level: 'deny', shell: true }] })).toEqual([
      { path: 'rules[0].shell', message: expect.stringMatching(/names the command argument/) },
    ]);
    expect(PolicyDocument.restore({ rules: [{ match: 'run', level: 'deny', shell: true }] }).rules[0].shell).toBe(true);
    expect(PolicyDocument.parse({ rules: [{ match: 'run', level: 'deny', shell: false }] }).rules[0].shell).toBe(false);
  });
});
