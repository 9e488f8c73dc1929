import { Readable } from 'node:stream';
import { cut, HookInputError, parseHookInput, readBounded, storable, storableJson } from './hook-input';
import { hookOutput } from './hook-output';
import { hookEntries, mergeHooks } from './install';
import { builtInFlags, displayOf, plainPaths, refusedGlob } from './tools';

const pre = {
  session_id: 's-1',
  transcript_path: '/home/ann/.claude/projects/x/s-1.jsonl',
  cwd: '/srv/app',
  permission_mode: 'default',
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command: 'ls' },
  tool_use_id: 'toolu_1',
};

describe("Claude Code's hook input", () => {
  it('reads the fields the hook needs, and the result of a PostToolUse', () => {
    expect(parseHookInput(JSON.stringify(pre))).toEqual({
      event: 'PreToolUse',
      sessionId: 's-1',
      cwd: '/srv/app',
      permissionMode: 'default',
      toolName: 'Bash',
      toolInput: { command: 'ls' },
      toolUseId: 'toolu_1',
    });
    const post = parseHookInput(JSON.stringify({ ...pre, hook_event_name: 'PostToolUse', tool_response: { ok: 1 } }));
    expect(post.toolResponse).toEqual({ ok: 1 });
  });

  it('refuses what is not its input: other events, missing or wrong fields, a missing tool_use_id', () => {
    const bad = (v: unknown) => () => parseHookInput(JSON.stringify(v));
    expect(() => parseHookInput('nope')).toThrow(HookInputError);
    expect(bad([])).toThrow('not a JSON object');
    expect(bad({ ...pre, hook_event_name: 'Stop' })).toThrow(/hook_event_name "Stop" is not one/);
    expect(bad({ ...pre, session_id: '' })).toThrow('session_id must be a non-empty string');
    expect(bad({ ...pre, tool_input: 'ls' })).toThrow('tool_input must be a JSON object');
    expect(bad({ ...pre, tool_use_id: undefined })).toThrow('tool_use_id is missing');
    expect(bad({ ...pre, tool_name: 'x'.repeat(257) })).toThrow('tool_name is longer than 256 characters');
    // A PermissionRequest may come without one.
    expect(
      parseHookInput(JSON.stringify({ ...pre, hook_event_name: 'PermissionRequest', tool_use_id: undefined }))
        .toolUseId,
    ).toBeUndefined();
  });

  it('stdin is kept up to its bound; past it the input is refused', async () => {
    await expect(readBounded(Readable.from([Buffer.from('abc')]), 3)).resolves.toBe('abc');
    await expect(readBounded(Readable.from([Buffer.from('ab'), Buffer.from('cd')]), 3)).rejects.toThrow(
      /more than .* KiB; refused/,
    );
  });
});

describe('what a report sends is text the server stores', () => {
  it('NUL and lone surrogates become U+FFFD; a pair is kept', () => {
    expect(storable('a\u0000b')).toBe('a\uFFFDb');
    expect(storable('x\uD83D')).toBe('x\uFFFD');
    expect(storable('\uDE00x')).toBe('\uFFFDx');
    expect(storable('\uD83D\uDE00')).toBe('😀');
    expect(storableJson(JSON.stringify({ 'k\u0000': ['a\u0000', { b: '\uD83D' }], n: 1 }))).toEqual({
      'k\uFFFD': ['a\uFFFD', { b: '\uFFFD' }],
      n: 1,
    });
  });

  it('a cut never ends inside a character', () => {
    expect(cut('ab😀', 3)).toBe('ab');
    expect(cut('ab😀', 4)).toBe('ab😀');
    expect(cut('abc', 2)).toBe('ab');
  });

  it("PostToolUseFailure's error is cut between characters and made storable", () => {
    const error = `${'x'.repeat(15_999)}😀\u0000`;
    const e = parseHookInput(JSON.stringify({ ...pre, hook_event_name: 'PostToolUseFailure', error })).error!;
    expect(e).toBe('x'.repeat(15_999));
    const nul = parseHookInput(JSON.stringify({ ...pre, hook_event_name: 'PostToolUseFailure', error: 'a\u0000' }));
    expect(nul.error).toBe('a\uFFFD');
  });
});

describe("the hook's answer", () => {
  it('PreToolUse: permissionDecision and its reason; updatedInput only with an allow', () => {
    expect(JSON.parse(hookOutput('PreToolUse', { decision: 'allow', reason: 'ok', updatedInput: { a: 1 } })!)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        permissionDecisionReason: 'ok',
        updatedInput: { a: 1 },
      },
    });
    expect(JSON.parse(hookOutput('PreToolUse', { decision: 'deny', reason: 'no', updatedInput: { a: 1 } })!)).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no' },
    });
  });

  it('PermissionRequest: decision.behavior; ask is nothing at all (Claude Code shows its dialog)', () => {
    expect(JSON.parse(hookOutput('PermissionRequest', { decision: 'deny', reason: 'no' })!)).toEqual({
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'no' } },
    });
    expect(hookOutput('PermissionRequest', { decision: 'ask', reason: 'down' })).toBeUndefined();
  });
});

describe("Claude Code's tools in Tollgate", () => {
  it('built-in tools carry flags; tools it does not know carry none, so unknownTools decides', () => {
    expect(builtInFlags('Read')).toEqual({ isReadOnly: true, requiresApproval: false, destructive: false });
    expect(builtInFlags('Bash')).toEqual({ isReadOnly: false, requiresApproval: false, destructive: true });
    expect(builtInFlags('WebFetch')).toEqual({ isReadOnly: false, requiresApproval: true, destructive: false });
    expect(builtInFlags('mcp__github__create_issue')).toBeUndefined();
  });

  it('paths are made absolute and plain, so a path glob sees where the file is', () => {
    expect(plainPaths('Edit', { file_path: 'src/../../etc/passwd' }, '/srv/app')).toEqual({
      file_path: '/srv/etc/passwd',
    });
    expect(plainPaths('Write', { file_path: '/srv/app/./a//b.ts' }, undefined)).toEqual({
      file_path: '/srv/app/a/b.ts',
    });
    const same = { file_path: '/srv/app/a.ts', content: '../x' };
    expect(plainPaths('Write', same, '/srv/app')).toBe(same);
    expect(plainPaths('Grep', { path: 'rel' }, undefined)).toEqual({ path: 'rel' });
    // An MCP tool's `path` is its own business.
    const mcp = { path: 'docs/../x' };
    expect(plainPaths('mcp__github__get_file', mcp, '/srv/app')).toBe(mcp);
  });

  it('people see the tool and what it acts on, cut short', () => {
    const d = displayOf('Bash', { command: 'x'.repeat(400) }, '/srv/app', 'plan');
    expect(d.title).toHaveLength(300);
    expect(d.fields).toEqual([
      { label: 'Directory', value: '/srv/app' },
      { label: 'Permission mode', value: 'plan' },
    ]);
  });
});

describe("Glob's pattern and Grep's glob", () => {
  it('a ".." in them is refused before proposing, whatever glob syntax hides it', () => {
    for (const pattern of ['../../etc/**', 'src/../../x', '..', '{..,src}/*', '{.,.}./etc/*', 'a/@(..)/b', '\\.\\./x'])
      expect(refusedGlob('Glob', { pattern, path: '/srv/app' })).toMatch(
        /^Tollgate: Glob's pattern must not hold "\.\."/,
      );
    expect(refusedGlob('Grep', { pattern: 'x', glob: '../*.env' })).toMatch(/^Tollgate: Grep's glob must not hold/);
  });

  it("ordinary globs, Grep's regex and other tools pass", () => {
    for (const pattern of ['**/*.ts', 'src/**/*.{ts,tsx}', '.github/*.yml', '/srv/app/**/.env*'])
      expect(refusedGlob('Glob', { pattern })).toBeUndefined();
    expect(refusedGlob('Grep', { pattern: 'a..b', glob: '*.ts' })).toBeUndefined();
    expect(refusedGlob('Bash', { command: 'ls ..' })).toBeUndefined();
    expect(refusedGlob('Glob', { pattern: 7 })).toBeUndefined();
  });
});

describe('--install', () => {
  it('adds the entries, keeps others, and adds nothing when they are there', () => {
    const settings: Record<string, unknown> = { model: 'x', hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [] }] } };
    expect(mergeHooks(settings, hookEntries('/usr/bin/node /opt/tollgate/bin/tollgate.js')).added).toEqual([
      'PreToolUse',
      'PostToolUse',
      'PostToolUseFailure',
    ]);
    expect((settings.hooks as Record<string, unknown[]>).PreToolUse).toHaveLength(2);
    expect(mergeHooks(settings, hookEntries('tollgate')).added).toEqual([]);
    expect(() => mergeHooks({ hooks: [] }, hookEntries('tollgate'))).toThrow('not a JSON object');
  });
});
