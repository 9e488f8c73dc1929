/**
 * A stateful upstream MCP server for the gateway's tests, built with the MCP SDK's McpServer and served over stdio
 * as a child process the gateway starts (`liveUpstream` bundles `runLiveUpstream` with esbuild once, and gives each
 * test its own record file). What it offers changes while it runs, and it says so as MCP says to
 * (`notifications/<tools|resources|prompts>/list_changed`, sent by McpServer itself once connected):
 * - `grow` adds a tool of the given name (taking a `path`, read-only when asked), `shrink` removes one;
 * - `add_note` adds a resource, `add_prompt` a prompt;
 * - `move_file` (neither read-only nor destructive), `wire_money` (not destructive) and `delete_file` (destructive)
 *   for the policy to hold, hide or deny;
 * - resources: `live://<label>/config`, and the template `live://<label>/items/{id}` (not listed, read by template);
 * - a prompt `greet` (argument `name`).
 * Every tool call, resource read and prompt get it receives is appended to RECORD_FILE, so a test can say what
 * reached it (and what never did).
 */
import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServer, ResourceTemplate, type RegisteredTool } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';
import { bundleStdioServer, records } from './mcp-upstream';

/** One thing the upstream received: a tool call, a resource read or a prompt get. */
export interface LiveReceived {
  server: string;
  kind: 'tool' | 'resource' | 'prompt';
  /** The tool's or prompt's name, or the resource's URI. */
  name: string;
  arguments: Record<string, unknown>;
}

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

/** The live server, named `label` in what it answers, recording with `record`. */
export function liveServer(label: string, record: (r: LiveReceived) => void): McpServer {
  const server = new McpServer(
    { name: `live-${label}`, version: '1.0.0' },
    {
      capabilities: { tools: { listChanged: true }, resources: { listChanged: true }, prompts: { listChanged: true } },
    },
  );
  const grown = new Map<string, RegisteredTool>();
  const tool = (name: string, args: Record<string, unknown>) =>
    record({ server: label, kind: 'tool', name, arguments: args });

  server.registerTool(
    'grow',
    {
      description: `Adds a tool (${label})`,
      inputSchema: z.object({ name: z.string(), readOnly: z.boolean().optional() }),
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async (args) => {
      tool('grow', args);
      if (grown.has(args.name)) return { ...text(`${label}: ${args.name} is already there`), isError: true };
      const added = server.registerTool(
        args.name,
        {
          description: `Grown at runtime (${label})`,
          inputSchema: z.object({ path: z.string() }),
          annotations: args.readOnly ? { readOnlyHint: true } : { readOnlyHint: false, destructiveHint: true },
        },
        async (a) => {
          tool(args.name, a);
          return text(`${label}: ${args.name} ran on ${a.path}`);
        },
      );
      grown.set(args.name, added);
      return text(`${label}: grew ${args.name}`);
    },
  );
  server.registerTool(
    'shrink',
    {
      description: `Removes a tool grown before (${label})`,
      inputSchema: z.object({ name: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async (args) => {
      tool('shrink', args);
      const gone = grown.get(args.name);
      if (!gone) return { ...text(`${label}: no grown tool ${args.name}`), isError: true };
      gone.remove();
      grown.delete(args.name);
      return text(`${label}: shrank ${args.name}`);
    },
  );
  server.registerTool(
    'add_note',
    {
      description: `Adds a resource live://${label}/notes/<name> (${label})`,
      inputSchema: z.object({ name: z.string(), text: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async (args) => {
      tool('add_note', args);
      server.registerResource(
        `note-${args.name}`,
        `live://${label}/notes/${args.name}`,
        { mimeType: 'text/plain', description: `A note (${label})` },
        async (uri) => {
          record({ server: label, kind: 'resource', name: uri.href, arguments: {} });
          return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: args.text }] };
        },
      );
      return text(`${label}: noted ${args.name}`);
    },
  );
  server.registerTool(
    'add_prompt',
    {
      description: `Adds a prompt (${label})`,
      inputSchema: z.object({ name: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async (args) => {
      tool('add_prompt', args);
      server.registerPrompt(args.name, { description: `Added at runtime (${label})` }, async () => {
        record({ server: label, kind: 'prompt', name: args.name, arguments: {} });
        return { messages: [{ role: 'user', content: { type: 'text', text: `${label}: ${args.name}` } }] };
      });
      return text(`${label}: added prompt ${args.name}`);
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
      tool('move_file', args);
      return text(`${label}: moved ${args.from} to ${args.to}`);
    },
  );
  server.registerTool(
    'wire_money',
    {
      description: `Wire money (${label})`,
      inputSchema: z.object({ to: z.string(), amount: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async (args) => {
      tool('wire_money', args);
      return text(`${label}: wired ${args.amount} to ${args.to}`);
    },
  );
  server.registerTool(
    'delete_file',
    {
      description: `Delete a file (${label})`,
      inputSchema: z.object({ path: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: true },
    },
    async (args) => {
      tool('delete_file', args);
      return text(`${label}: deleted ${args.path}`);
    },
  );

  server.registerResource(
    'config',
    `live://${label}/config`,
    { title: `The ${label} config`, mimeType: 'text/plain' },
    async (uri) => {
      record({ server: label, kind: 'resource', name: uri.href, arguments: {} });
      return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: `${label} config` }] };
    },
  );
  server.registerResource(
    'item',
    new ResourceTemplate(`live://${label}/items/{id}`, { list: undefined }),
    { description: `An item of ${label}`, mimeType: 'text/plain' },
    async (uri, { id }) => {
      record({ server: label, kind: 'resource', name: uri.href, arguments: { id } });
      return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: `${label} item ${String(id)}` }] };
    },
  );
  server.registerPrompt(
    'greet',
    { description: `Greets someone (${label})`, argsSchema: z.object({ name: z.string() }) },
    async (args) => {
      record({ server: label, kind: 'prompt', name: 'greet', arguments: args });
      return {
        description: `A greeting from ${label}`,
        messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${args.name}, from ${label}` } }],
      };
    },
  );
  return server;
}

/** The child process's side: the live server on stdin/stdout, what it receives appended to RECORD_FILE. */
export async function runLiveUpstream(): Promise<void> {
  const file = process.env.RECORD_FILE!;
  const server = liveServer(process.env.LABEL ?? 'live', (r) => appendFileSync(file, `${JSON.stringify(r)}\n`));
  await server.connect(new StdioServerTransport());
}

export interface LiveUpstream {
  /** For the gateway's upstream config: `{ name, command, args, env }`. */
  command: string;
  args: string[];
  env: Record<string, string>;
  /** What this instance received so far. */
  received(): LiveReceived[];
}

let bundled: Promise<string> | undefined;

/** The script, bundled once per test file. */
function script(): Promise<string> {
  bundled ??= bundleStdioServer(
    './mcp-live-upstream.ts',
    'runLiveUpstream',
    join(mkdtempSync(join(tmpdir(), 'tollgate-mcp-live-')), 'live-server.cjs'),
  );
  return bundled;
}

/**
 * A live upstream for one gateway: the gateway starts it (each start a new process with a fresh state) and stops
 * it when it closes. Each call has its own record file.
 */
export async function liveUpstream(label: string): Promise<LiveUpstream> {
  const path = await script();
  const record = join(mkdtempSync(join(tmpdir(), 'tollgate-mcp-live-record-')), 'received.jsonl');
  return {
    command: process.execPath,
    args: [path],
    env: { RECORD_FILE: record, LABEL: label },
    received: () => records<LiveReceived>(record),
  };
}
