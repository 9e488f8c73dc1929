/**
 * Which of the gateway's tools a policy denies whatever the call (hidden from tools/list by default): only a deny
 * rule on the tool's name alone; a rule that looks at arguments or conditions may not match, so its tool stays.
 */
import { deniedTools, nameTools, type GatewayTool } from '../../src/integrations/mcp/tools.js';
import type { UpstreamConfig } from '../../src/integrations/mcp-config.js';
import type { PolicyRule } from '../../src/types.js';

function tool(name: string): GatewayTool {
  return {
    name,
    upstream: 'files',
    upstreamName: name,
    tool: { name, inputSchema: { type: 'object' } },
    flags: { isReadOnly: false, destructive: true },
  };
}

const tools = ['read_file', 'delete_file', 'delete_dir', 'files__delete_file', 'shell'].map(tool);

describe('deniedTools', () => {
  it('names the tools a deny rule matches by name alone, globs included, and only those', () => {
    const rules: PolicyRule[] = [
      { match: 'delete_*', level: 'deny' },
      { match: 'read_file', level: 'automatic' },
    ];
    expect([...deniedTools(rules, tools)].sort()).toEqual(['delete_dir', 'delete_file']);
  });

  it('leaves a tool listed when the deny rule looks at arguments or has conditions', () => {
    const rules: PolicyRule[] = [
      { match: 'shell(cmd=rm *)', level: 'deny' },
      { match: 'delete_file', level: 'deny', when: { confidenceBelow: 0.5 } },
    ];
    expect(deniedTools(rules, tools)).toEqual(new Set());
  });

  it('leaves a tool listed when the deny rule is a shadow: it never decides, so the tool still runs', () => {
    expect(deniedTools([{ match: 'delete_*', level: 'deny', mode: 'shadow' }], tools)).toEqual(new Set());
  });

  it('does not count rules of other levels, however strict, and takes an empty `when` as none', () => {
    const rules: PolicyRule[] = [
      { match: '*', level: 'manual' },
      { match: 'files__*', level: 'deny', when: {} },
    ];
    expect([...deniedTools(rules, tools)]).toEqual(['files__delete_file']);
  });

  it('matches anchored and case-sensitive, as the server does', () => {
    const rules: PolicyRule[] = [
      { match: 'DELETE_FILE', level: 'deny' },
      { match: 'delete', level: 'deny' },
      { match: 'ead_fil?', level: 'deny' },
    ];
    expect(deniedTools(rules, tools)).toEqual(new Set());
  });

  it('reads `*` as any run and `?` as one character, in time bounded by the name, whatever the glob', () => {
    const names = ['get_user', 'forget_it', 'a', 'abc', 'aXbYc', 'get_', 'x'.repeat(128)].map(tool);
    const denied = (match: string) => [...deniedTools([{ match, level: 'deny' }], names)].sort();
    expect(denied('get_*')).toEqual(['get_', 'get_user']);
    expect(denied('a*b*c')).toEqual(['aXbYc', 'abc']);
    expect(denied('?')).toEqual(['a']);
    expect(denied('**')).toHaveLength(names.length);
    expect(denied('a?c')).toEqual(['abc']);
    // 64 wildcards against a long name that almost matches: a backtracking regex would not finish.
    expect(denied(`${'*x'.repeat(64)}y`)).toEqual([]);
    expect(denied(`${'*x'.repeat(64)}`)).toEqual(['x'.repeat(128)]);
  });
});

describe('nameTools', () => {
  const configs = new Map<string, UpstreamConfig>([
    ['files', { name: 'files', command: 'node', namespace: true }],
    ['web', { name: 'web', url: 'http://x' }],
  ]);
  const listed = (upstream: string, name: string) => ({
    upstream,
    tool: { name, inputSchema: { type: 'object' as const } },
  });

  it("refuses a server's tool whose name reads as another configured server's (<server>__<name>)", () => {
    expect(() => nameTools([listed('files', 'read'), listed('web', 'files__write')], configs, [])).toThrow(
      /upstream web: its tool "files__write" would be called files__write, which reads as a tool of upstream files/,
    );
  });

  it('takes a namespaced server under its own prefix, and names that only look alike', () => {
    expect(nameTools([listed('files', 'read'), listed('web', 'files_read')], configs, []).map((t) => t.name)).toEqual([
      'files__read',
      'files_read',
    ]);
  });
});
