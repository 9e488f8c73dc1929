/**
 * The gateway's tools: named (names never depend on which other servers exist), flagged
 * (an upstream's annotations count only when the operator trusts it) and checked against the policy's rules.
 */
import type { Tool as McpTool } from '@modelcontextprotocol/server';
import type { PolicyRule, ToolAnnotations } from '../../types.js';
import { GatewayConfigError, type UpstreamConfig } from '../mcp-config.js';
import { quoted } from './shared.js';

/** A tool as the gateway exposes it. */
export interface GatewayTool {
  /** The name clients call, and Tollgate's tool name (for policies and people): one name, normalised once. */
  name: string;
  upstream: string;
  /** The upstream's own name for it. */
  upstreamName: string;
  tool: McpTool;
  flags: Required<Pick<ToolAnnotations, 'isReadOnly' | 'destructive'>>;
}

const MAX_DESCRIPTION = 4000;
const TOLLGATE_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * The exposed tools. A tool keeps its own name (made fit for Tollgate), or `<server>__<name>` when its server is
 * namespaced. Collisions are checked on the final names, so `read file` cannot pass as another server's `read_file`;
 * a collision stops the start with both tools named (a GatewayConfigError), never a silent rename.
 */
export function nameTools(
  listed: Array<{ upstream: string; tool: McpTool }>,
  configs: Map<string, UpstreamConfig>,
  reserved: string[],
): GatewayTool[] {
  const byName = new Map<string, GatewayTool>();
  for (const { upstream, tool } of listed) {
    const config = configs.get(upstream)!;
    const name = tollgateName(config.namespace ? `${upstream}__${tool.name}` : tool.name);
    const other = byName.get(name);
    if (other) {
      throw new GatewayConfigError([
        `two tools would be called ${name}: ${JSON.stringify(other.upstreamName)} of upstream ${other.upstream} and ${JSON.stringify(tool.name)} of upstream ${upstream}; ` +
          `set namespace: true on ${other.upstream === upstream ? 'it' : 'one of them'} (mcpServers.<name>.namespace), or remove one`,
      ]);
    }
    // `files__read` from another server would pass for the namespaced server files' tool, and its rules.
    const prefix = [...configs.keys()].find((other) => other !== upstream && name.startsWith(`${other}__`));
    if (prefix && !config.namespace)
      throw new GatewayConfigError([
        `upstream ${upstream}: its tool ${JSON.stringify(tool.name)} would be called ${name}, which reads as a tool of upstream ${prefix}; set namespace: true on ${upstream}, or remove the tool`,
      ]);
    if (reserved.includes(name))
      throw new GatewayConfigError([
        `upstream ${upstream}: its tool ${JSON.stringify(tool.name)} would be called ${name}, the gateway's built-in tool; set namespace: true on ${upstream}, or turn askHuman off`,
      ]);
    byName.set(name, {
      name,
      upstream,
      upstreamName: tool.name,
      tool,
      flags: flagsOf(tool, config.trustAnnotations === true),
    });
  }
  return [...byName.values()];
}

/**
 * A trusted server's annotations as Tollgate's flags, MCP's defaults included (not read-only: destructive unless it
 * says otherwise). An untrusted server's tool is destructive whatever it claims: MCP clients must treat annotations
 * as untrusted unless the server is, and a `readOnlyHint` on `drop_database` must not let it run unseen.
 */
export function flagsOf(tool: McpTool, trusted: boolean): GatewayTool['flags'] {
  if (!trusted) return { isReadOnly: false, destructive: true };
  const readOnly = tool.annotations?.readOnlyHint === true;
  return { isReadOnly: readOnly, destructive: !readOnly && tool.annotations?.destructiveHint !== false };
}

/** Tollgate's tool names are `[A-Za-z0-9_.:-]{1,128}`; MCP's may hold other characters. */
export function tollgateName(name: string): string {
  if (TOLLGATE_NAME.test(name)) return name;
  return name.replace(/[^A-Za-z0-9_.:-]/g, '_').slice(0, 128) || 'tool';
}

/** The registered description, said to be the server's: people must not read an upstream's words as Tollgate's. */
export function describedBy(tool: GatewayTool): string | undefined {
  const said = tool.tool.description ?? tool.tool.title ?? tool.tool.annotations?.title;
  return said ? `The MCP server ${tool.upstream} says: ${quoted(said, MAX_DESCRIPTION - 100)}` : undefined;
}

/** The call's display title: our name first, the server's title after it, attributed and bounded. */
export function displayTitle(tool: GatewayTool): string {
  const title = tool.tool.title ?? tool.tool.annotations?.title;
  return title ? `${tool.name} (the MCP server ${tool.upstream} calls it ${quoted(title, 120)})` : tool.name;
}

/**
 * Rules that match a tool under the name its server gives it but not under the name Tollgate sees (a namespaced
 * server, or a name made fit for Tollgate): the operator most likely meant them for it, and they do not apply.
 * Rules matching none of this gateway's tools at all are not reported: the policy is the tenant's, for every agent.
 */
export function unmatchedRules(rules: PolicyRule[], tools: GatewayTool[]): string[] {
  const warnings: string[] = [];
  for (const rule of rules) {
    const glob = toolGlob(rule.match);
    for (const tool of tools) {
      if (glob.test(tool.upstreamName) && !glob.test(tool.name)) {
        warnings.push(
          `policy rule ${JSON.stringify(rule.match)} (${rule.level}) matches ${JSON.stringify(tool.upstreamName)} of upstream ${tool.upstream}, but Tollgate sees that tool as ${tool.name}: the rule does not apply to it`,
        );
      }
    }
  }
  return warnings;
}

/**
 * The tools the policy denies whatever the call: a `deny` rule that matches the name alone (no argument list, no
 * `when`). The strictest matching rule decides a call, so nothing else can let such a tool through; a rule that
 * looks at arguments or conditions might not match, and its tool stays listed. Hiding these only spares the model
 * a tool it can never use: a call to one is still proposed, denied and recorded.
 */
export function deniedTools(rules: PolicyRule[], tools: GatewayTool[]): Set<string> {
  const denied = new Set<string>();
  for (const rule of rules) {
    // A shadow rule never decides: the tool it would deny still runs, so it stays listed.
    if (rule.level !== 'deny' || rule.mode === 'shadow' || rule.match.includes('(')) continue;
    if (rule.when && Object.keys(rule.when).length > 0) continue;
    const glob = toolGlob(rule.match);
    for (const tool of tools) if (glob.test(tool.name)) denied.add(tool.name);
  }
  return denied;
}

/**
 * The tool-name part of a rule's `match` as a test: `*` any run, `?` one character, anchored, case-sensitive. It
 * runs in time proportional to the name times the glob, whatever the glob (no regular expression that backtracks).
 */
function toolGlob(match: string): { test(name: string): boolean } {
  const open = match.indexOf('(');
  const glob = [...(open === -1 ? match : match.slice(0, open)).trim()];
  return {
    test(name: string): boolean {
      const text = [...name];
      // can[j]: the glob's first i characters match the text's first j; one row per glob character.
      let can = text.map(() => false);
      let empty = true;
      for (const g of glob) {
        const next = text.map(() => false);
        const nextEmpty: boolean = empty && g === '*';
        for (let j = 0; j < text.length; j++) {
          const before = j === 0 ? empty : can[j - 1];
          next[j] = g === '*' ? can[j] || before || (j > 0 && next[j - 1]) : before && (g === '?' || g === text[j]);
        }
        can = next;
        empty = nextEmpty;
      }
      return text.length === 0 ? empty : can[text.length - 1];
    },
  };
}
