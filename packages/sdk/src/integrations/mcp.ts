/**
 * MCP gateway (`@tollgate/sdk/mcp`): an MCP server that fronts upstream MCP servers and gates every `tools/call`
 * through Tollgate. The gateway is in `./mcp/` (gateway.ts: sessions and calls; tools.ts: names and flags;
 * http-auth.ts: who may use Streamable HTTP; identity.ts: the tokens checked at start; chat.ts: elicitation and
 * `ask_human`); its config in `./mcp-config.ts`. `tollgate mcp` is the CLI.
 */
export { TollgateMcpGateway, type McpGatewayOptions, type HttpRequestInfo } from './mcp/gateway.js';
export { ASK_HUMAN_TOOL } from './mcp/chat.js';
export { GatewayIdentityError } from './mcp/identity.js';
export type { HttpGuardOptions } from './mcp/http-auth.js';
export type { SessionIdentity } from './mcp/shared.js';
export type { GatewayTool } from './mcp/tools.js';
export {
  parseGatewayConfig,
  GatewayConfigError,
  MAX_CONFIG_BYTES,
  MAX_UPSTREAMS,
  DEFAULT_TOLLGATE_URL,
  DEFAULT_LIMITS,
  type AskHumanConfig,
  type GatewayConfig,
  type GatewayLimits,
  type HttpListenConfig,
  type UpstreamConfig,
  type StdioUpstream,
  type HttpUpstream,
} from './mcp-config.js';
