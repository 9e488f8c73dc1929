/**
 * Real upstream MCP servers for the gateway's tests, built with the MCP SDK's McpServer: a file-ish server whose
 * tools do nothing to any disk but record every call they receive, so a test can say what reached the upstream
 * (and what never did). Served over Streamable HTTP in the test's process, or over stdio as a child process
 * (`stdioUpstream` bundles `runStdioUpstream` with esbuild into a script the gateway starts).
 */
import { appendFileSync, mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

/** One call the upstream received: which tool, with which arguments. */
export interface Received {
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
}

/**
 * `read_file` (readOnlyHint), `delete_file` (destructiveHint), `move_file` (not read-only, not destructive:
 * the tests' policy gives it to the requester) and `fail_file` (answers isError). `label` names the server in
 * what it answers, so a test can tell two upstreams with the same tool apart.
 */
export function filesServer(label: string, record: (r: Received) => void): McpServer {
  const server = new McpServer({ name: `files-${label}`, version: '1.0.0' });
  const path = z.object({ path: z.string().describe('a path') });
  server.registerTool(
    'read_file',
    {
      title: 'Read a file',
      description: `Read a file (${label})`,
      inputSchema: path,
      annotations: { readOnlyHint: true },
    },
    async (args) => {
      record({ server: label, tool: 'read_file', arguments: args });
      return { content: [{ type: 'text', text: `${label}: contents of ${args.path}` }] };
    },
  );
  server.registerTool(
    'delete_file',
    {
      title: 'Delete a file',
      description: `Delete a file (${label})`,
      inputSchema: path,
      annotations: { readOnlyHint: false, destructiveHint: true },
    },
    async (args) => {
      record({ server: label, tool: 'delete_file', arguments: args });
      return {
        content: [{ type: 'text', text: `${label}: deleted ${args.path}` }],
        structuredContent: { deleted: args.path },
      };
    },
  );
  server.registerTool(
    'move_file',
    {
      description: `Move a file (${label})`,
      inputSchema: z.object({ from: z.string(), to: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async (args) => {
      record({ server: label, tool: 'move_file', arguments: args });
      return { content: [{ type: 'text', text: `${label}: moved ${args.from} to ${args.to}` }] };
    },
  );
  server.registerTool(
    'fail_file',
    { description: `Always fails (${label})`, inputSchema: path, annotations: { readOnlyHint: true } },
    async (args) => {
      record({ server: label, tool: 'fail_file', arguments: args });
      return { content: [{ type: 'text', text: `${label}: no such file ${args.path}` }], isError: true };
    },
  );
  return server;
}

/** A tool of `toolsServer`: its name, and what its server claims about it. */
export interface ToolSpec {
  name: string;
  title?: string;
  annotations?: { title?: string; readOnlyHint?: boolean; destructiveHint?: boolean };
}

/**
 * A server offering exactly `tools`, each taking a `path`, recording its calls and answering `<label>: <name> ran
 * on <path>`: for what a server says about its tools (annotations, titles, odd names) to be tested.
 */
export function toolsServer(tools: ToolSpec[]): (label: string, record: (r: Received) => void) => McpServer {
  return (label, record) => {
    const server = new McpServer({ name: `tools-${label}`, version: '1.0.0' });
    for (const t of tools) {
      server.registerTool(
        t.name,
        {
          ...(t.title ? { title: t.title } : {}),
          description: `${t.name} (${label})`,
          inputSchema: z.object({ path: z.string() }),
          ...(t.annotations ? { annotations: t.annotations } : {}),
        },
        async (args) => {
          record({ server: label, tool: t.name, arguments: args });
          return { content: [{ type: 'text', text: `${label}: ${t.name} ran on ${args.path}` }] };
        },
      );
    }
    return server;
  };
}

export interface HttpUpstream {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/** The files server (or another) over Streamable HTTP (stateless: a server per request), on a free loopback port. */
export async function httpUpstream(
  label: string,
  make: (label: string, record: (r: Received) => void) => McpServer = filesServer,
): Promise<HttpUpstream> {
  const received: Received[] = [];
  const http: HttpServer = createServer(async (req, res) => {
    const server = make(label, (r) => received.push(r));
    const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    received,
    close: () => new Promise<void>((resolve) => (http.closeAllConnections(), http.close(() => resolve()))),
  };
}

/** The child process's side: the files server on stdin/stdout, each call appended to RECORD_FILE as a JSON line. */
export async function runStdioUpstream(): Promise<void> {
  const file = process.env.RECORD_FILE!;
  const server = filesServer(process.env.LABEL ?? 'stdio', (r) => appendFileSync(file, `${JSON.stringify(r)}\n`));
  await server.connect(new StdioServerTransport());
}

export interface StdioUpstream {
  /** The `mcpServers` entry that starts it. */
  command: string;
  args: string[];
  env: Record<string, string>;
  received(): Received[];
}

/**
 * `module`'s export `run` bundled with esbuild into a script Node runs as a stdio MCP server (`module` is a file of
 * this folder, e.g. `./mcp-upstream.ts`): the gateway starts it as an upstream.
 */
export async function bundleStdioServer(module: string, run: string, outfile: string): Promise<string> {
  const esbuild = await import('esbuild');
  await esbuild.build({
    stdin: { contents: `require(${JSON.stringify(module)}).${run}();`, resolveDir: __dirname, loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile,
    external: ['esbuild'],
    logLevel: 'error',
  });
  return outfile;
}

/** What a stdio upstream appended to its record file, one JSON line each; nothing before the file exists. */
export function records<T>(file: string): T[] {
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as T)
    : [];
}

/** A script that runs the files server over stdio (bundled once per test file), and where it records. */
export async function stdioUpstream(label: string): Promise<StdioUpstream> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-mcp-upstream-'));
  const script = await bundleStdioServer('./mcp-upstream.ts', 'runStdioUpstream', join(dir, 'files-server.cjs'));
  const record = join(dir, 'received.jsonl');
  return {
    command: process.execPath,
    args: [script],
    env: { RECORD_FILE: record, LABEL: label },
    received: () => records<Received>(record),
  };
}
