/**
 * Which of the gateway's tools a policy denies whatever the call (hidden from tools/list by default): only a deny
 * rule on the tool's name alone; a rule that looks at arguments or conditions may not match, so its tool stays.
 */
import { deniedTools, type GatewayTool } from '../../src/integrations/mcp/tools.js';
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
});
