/** The upstream MCP servers: started (stdio) or reached (Streamable HTTP), and their tools listed once. */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Transport, Tool as McpTool } from '@modelcontextprotocol/client';
import type { UpstreamConfig } from '../mcp-config.js';
import { messageOf, VERSION } from './shared.js';

export interface Upstream {
  config: UpstreamConfig;
  client: Client;
}

export const MAX_TOOLS = 1000;

/** An MCP client of the upstream, connected; throws, naming the upstream, if it cannot be reached. */
export async function connectUpstream(config: UpstreamConfig): Promise<Upstream> {
  const client = new Client({ name: 'tollgate-mcp-gateway', version: VERSION });
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

/** Every tool of every upstream, page by page, at most MAX_TOOLS a server. */
export async function listUpstreamTools(
  upstreams: Iterable<[string, Upstream]>,
): Promise<Array<{ upstream: string; tool: McpTool }>> {
  const listed: Array<{ upstream: string; tool: McpTool }> = [];
  for (const [name, { client }] of upstreams) {
    let cursor: string | undefined;
    let count = 0;
    do {
      const page = await client.listTools(cursor ? { cursor } : {});
      for (const tool of page.tools) {
        if (++count > MAX_TOOLS) throw new Error(`upstream ${name}: more than ${MAX_TOOLS} tools`);
        listed.push({ upstream: name, tool });
      }
      cursor = page.nextCursor;
    } while (cursor);
  }
  return listed;
}
