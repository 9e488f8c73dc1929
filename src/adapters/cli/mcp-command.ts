import { readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { Tollgate, TollgateError } from '@tollgate/sdk';
import type { GatewayConfig, TollgateMcpGateway } from '@tollgate/sdk/mcp';
import { ConfigError } from '../../infrastructure/config/config';
import { CliError, EXIT } from './client/api-client';

/**
 * `tollgate mcp --config gateway.yaml [--http :8090]`: the MCP gateway (@tollgate/sdk/mcp) as a command. Over
 * stdio (the default) it is an MCP client's `command`; with `--http` it serves Streamable HTTP at `/mcp` with
 * bearer auth. Bad config exits 2 with every fault named; stdout belongs to the protocol, so everything said goes
 * to stderr, and never a token.
 */

export interface McpCommandOptions {
  config: string;
  http?: string;
}

/** Bigger bodies are refused (413) before they are parsed; the MCP SDK's own bound is the same. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
const MAX_CONFIG_BYTES = 256 * 1024;

export async function runMcp(o: McpCommandOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  // Loaded here, not at the top: the other commands start without the MCP SDK.
  const mcp = await import('@tollgate/sdk/mcp');
  const config = loadGatewayConfig(o.config, env, mcp.parseGatewayConfig, mcp.GatewayConfigError);
  const http =
    o.http !== undefined
      ? parseListen(o.http)
      : config.http?.port !== undefined
        ? { host: config.http.host, port: config.http.port }
        : undefined;
  const allowedHosts =
    config.http?.allowedHosts ?? (http && isLoopback(http.host) ? loopbackHosts(http.host) : undefined);
  const say = (level: string, message: string) =>
    process.stderr.write(`tollgate mcp: ${level === 'info' ? '' : `${level}: `}${message}\n`);

  const tollgate = new Tollgate({
    url: config.tollgate.url,
    token: config.tollgate.token,
    headers: { 'user-agent': 'tollgate-mcp-gateway' },
  });
  // Few and short attempts: a client starting the gateway waits on this, and the operator must hear why.
  await checkAgentToken(
    new Tollgate({
      url: config.tollgate.url,
      token: config.tollgate.token,
      retry: { maxAttempts: 3 },
      timeoutMs: 10_000,
    }),
  );
  let gateway: TollgateMcpGateway;
  try {
    gateway = await mcp.TollgateMcpGateway.start({
      tollgate,
      upstreams: config.upstreams,
      ...(config.user ? { user: config.user } : {}),
      elicitation: config.elicitation,
      hideDeniedTools: config.hideDeniedTools,
      policyRefreshMs: config.policyRefreshSeconds * 1000,
      ...(config.tollgate.inboxUrl ? { inboxUrl: config.tollgate.inboxUrl } : {}),
      ...(config.askHuman ? { askHuman: config.askHuman } : {}),
      progressIntervalMs: config.progressIntervalSeconds * 1000,
      limits: config.limits,
      http: {
        ...(allowedHosts ? { allowedHosts } : {}),
        ...(config.http?.allowedOrigins ? { allowedOrigins: config.http.allowedOrigins } : {}),
      },
      log: say,
    });
  } catch (e) {
    // A token that is not who the config says, or two tools of one name, is the operator's to fix: exit 2.
    if (e instanceof mcp.GatewayIdentityError || e instanceof mcp.GatewayConfigError) throw new ConfigError(e.message);
    throw new CliError(`tollgate mcp: ${(e as Error).message}`, EXIT.unavailable);
  }
  say(
    'info',
    `${gateway.tools.length} tools from ${config.upstreams.map((u) => u.name).join(', ')}, gated by ${config.tollgate.url}`,
  );

  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await gateway.close();
    process.exit(code);
  };
  process.once('SIGINT', () => void stop(0));
  process.once('SIGTERM', () => void stop(0));

  if (http) {
    const server = createServer((req, res) => void serveHttp(gateway, req, res, say));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e: NodeJS.ErrnoException) =>
        reject(
          new ConfigError(
            `--http ${http.host}:${http.port}: ${e.code === 'EADDRINUSE' ? 'the port is in use' : e.message}`,
          ),
        ),
      );
      server.listen(http.port, http.host, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    if (!allowedHosts)
      say(
        'warn',
        `http.allowedHosts is not set: requests naming any Host are served on ${http.host}; list the names clients use (DNS rebinding)`,
      );
    say(
      'info',
      `serving Streamable HTTP on http://${http.host.includes(':') ? `[${http.host}]` : http.host}:${port}/mcp (bearer: a person's Tollgate token)`,
    );
    return;
  }
  const { StdioServerTransport } = await import('@modelcontextprotocol/server/stdio');
  const server = gateway.server();
  server.onclose = () => void stop(0); // the client closed stdin: the session is over
  process.stdin.once('end', () => void stop(0));
  await server.connect(new StdioServerTransport());
}

/** The config file, parsed (YAML or JSON), `${VAR}`s expanded, checked: any fault is a ConfigError (exit 2). */
export function loadGatewayConfig(
  path: string,
  env: NodeJS.ProcessEnv,
  parse: (raw: unknown, env: Record<string, string | undefined>) => GatewayConfig,
  ParseError: new (...a: never[]) => Error,
): GatewayConfig {
  let text: string;
  try {
    if (statSync(path).size > MAX_CONFIG_BYTES)
      throw new ConfigError(`--config ${path}: bigger than ${MAX_CONFIG_BYTES / 1024} KiB`);
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(
      `--config ${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  let raw: unknown;
  try {
    raw = parseYaml(text, { maxAliasCount: 100 });
  } catch (e) {
    const where = e instanceof YAMLParseError && e.linePos ? ` at line ${e.linePos[0].line}` : '';
    throw new ConfigError(`--config ${path}: not valid YAML or JSON${where}: ${(e as Error).message.split('\n')[0]}`);
  }
  try {
    return parse(raw, env);
  } catch (e) {
    if (e instanceof ParseError) throw new ConfigError(`--config ${path}: ${e.message}`);
    throw e;
  }
}

/** `--http :8090`, `--http 8090`, `--http 0.0.0.0:8090`, `--http [::1]:8090`; loopback unless a host is given. */
export function parseListen(v: string): { host: string; port: number } {
  const m = /^(?:(\[[^\]]+\]|[^:]*):)?(\d{1,5})$/.exec(v.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) throw new ConfigError(`--http ${v}: use [host]:port, e.g. :8090 or 127.0.0.1:8090`);
  const host = (m[1] ?? '').replace(/^\[|\]$/g, '') || '127.0.0.1';
  return { host, port };
}

/** 127.0.0.0/8, ::1 and localhost: where only this machine's clients connect, unless a page rebinds a name to it. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The names a loopback listener answers to by default: the usual three, and its own address. */
function loopbackHosts(host: string): string[] {
  return [...new Set(['localhost', '127.0.0.1', '[::1]', host.includes(':') ? `[${host}]` : host])];
}

/** The agent token is checked before anything starts: a wrong one is the operator's to fix, not a tool error later. */
async function checkAgentToken(tollgate: Tollgate): Promise<void> {
  try {
    await tollgate.listTools({ limit: 1 });
  } catch (e) {
    if (e instanceof TollgateError && (e.status === 401 || e.status === 403)) {
      throw new ConfigError(
        `Tollgate refused the gateway's token (${e.code}: ${e.detail}); set TOLLGATE_TOKEN to an agent token (tollgate token --sub mcp-gateway --role agent)`,
      );
    }
    if (e instanceof TollgateError)
      throw new CliError(`tollgate mcp: cannot reach Tollgate at ${tollgate.url}: ${e.detail}`, EXIT.unavailable);
    throw e;
  }
}

/** Node's request as a Web `Request` for the gateway, its `Response` streamed back (SSE included). */
async function serveHttp(
  gateway: TollgateMcpGateway,
  req: IncomingMessage,
  res: ServerResponse,
  say: (level: string, message: string) => void,
): Promise<void> {
  try {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/mcp') return send(res, 404, { code: 'not_found', detail: 'The MCP endpoint is /mcp' });
    const method = req.method ?? 'GET';
    let body: Buffer | undefined;
    if (method !== 'GET' && method !== 'HEAD') {
      body = await readBody(req);
      if (!body)
        return send(res, 413, {
          code: 'payload_too_large',
          detail: `A message is at most ${MAX_BODY_BYTES / 1024 / 1024} MiB`,
        });
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers))
      if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    const request = new Request(new URL(url.pathname + url.search, 'http://localhost'), {
      method,
      headers,
      body: body && new Uint8Array(body),
      signal: abort.signal,
    });
    const response = await gateway.handleHttp(request, { clientAddress: req.socket.remoteAddress });
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) return void res.end();
    const reader = response.body.getReader();
    res.once('close', () => void reader.cancel().catch(() => undefined));
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
    res.end();
  } catch (e) {
    say('error', `HTTP ${req.method} ${req.url}: ${(e as Error).message}`);
    if (!res.headersSent) send(res, 500, { code: 'internal', detail: 'The gateway failed on this request' });
    else res.end();
  }
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, p: { code: string; detail: string }): void {
  res.writeHead(status, { 'content-type': 'application/problem+json' });
  res.end(JSON.stringify({ type: `urn:tollgate:problem:${p.code}`, title: p.code, status, ...p }));
}
