/**
 * The upstream MCP servers: started (stdio) or reached (Streamable HTTP), their tools listed (again whenever a server
 * says its list changed), and what they say of changed lists passed on.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Transport, Tool as McpTool } from '@modelcontextprotocol/client';
import type { UpstreamConfig } from '../mcp-config.js';
import { messageOf, VERSION } from './shared.js';

export interface Upstream {
  config: UpstreamConfig;
  client: Client;
}

export const MAX_TOOLS = 1000;
const MAX_PAGES = 100;

/** The lists an upstream may say have changed. */
export type ListKind = 'tools' | 'prompts' | 'resources';

/**
 * An MCP client of the upstream, connected; throws, naming the upstream, if it cannot be reached. `changed` hears
 * the upstream's `notifications/<kind>/list_changed`.
 */
export async function connectUpstream(
  config: UpstreamConfig,
  changed: (upstream: string, kind: ListKind) => void = () => undefined,
): Promise<Upstream> {
  const client = new Client({ name: 'tollgate-mcp-gateway', version: VERSION });
  client.setNotificationHandler('notifications/tools/list_changed', () => changed(config.name, 'tools'));
  client.setNotificationHandler('notifications/prompts/list_changed', () => changed(config.name, 'prompts'));
  client.setNotificationHandler('notifications/resources/list_changed', () => changed(config.name, 'resources'));
  let transport: Transport;
  if ('command' in config) {
    // Loaded only for stdio upstreams: the HTTP-only gateway runs where there are no child processes.
    const { StdioClientTransport, getDefaultEnvironment } = await import('@modelcontextprotocol/client/stdio');
    transport = new StdioClientTransport({
      command: config.command,
      args: config.args ?? [],
      env: { ...getDefaultEnvironment(), ...config.env },
      ...(config.cwd ? { cwd: config.cwd } : {}),
      stderr: 'inherit',
    });
  } else {
    transport = new StreamableHTTPClientTransport(
      new URL(config.url),
      config.headers ? { requestInit: { headers: config.headers } } : {},
    ) as Transport;
  }
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(
      `upstream ${config.name}: could not connect (${'command' in config ? `command ${config.command}` : config.url}): ${messageOf(e)}`,
      { cause: e },
    );
  }
  return { config, client };
}

/** Every tool of each upstream, by upstream, page by page, at most MAX_TOOLS a server. */
export async function listUpstreamTools(upstreams: Iterable<[string, Upstream]>): Promise<Map<string, McpTool[]>> {
  const listed = new Map<string, McpTool[]>();
  for (const [name, { client }] of upstreams) {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      // Empty pages with a cursor would never reach MAX_TOOLS.
      if (++pages > MAX_PAGES) throw new Error(`upstream ${name}: more than ${MAX_PAGES} pages of tools`);
      const page = await client.listTools(cursor ? { cursor } : {});
      for (const tool of page.tools) {
        if (tools.length >= MAX_TOOLS) throw new Error(`upstream ${name}: more than ${MAX_TOOLS} tools`);
        tools.push(tool);
      }
      cursor = page.nextCursor;
    } while (cursor);
    listed.set(name, tools);
  }
  return listed;
}
