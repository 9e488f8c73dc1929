/**
 * The MCP gateway's configuration (`tollgate mcp --config gateway.yaml`): which upstream MCP servers to front
 * (the `mcpServers` block MCP clients already use), how to reach Tollgate, and for whom the calls are made.
 * `parseGatewayConfig` checks a parsed document (YAML or JSON) and expands `${VAR}` in its strings; every fault
 * is reported with its path, all at once. Pure: no I/O, the environment is passed in.
 */
import type { ConversationUserInput } from '../types.js';
import {
  type Env,
  expand,
  flag,
  integer,
  isHostName,
  isHttpUrl,
  isObject,
  optionalObject,
  optionalString,
  optionalStringList,
  originOf,
  stringMap,
  unknownKeys,
} from './mcp/config-fields.js';

/** What every upstream may say, whatever its transport. */
interface UpstreamCommon {
  name: string;
  /**
   * Expose its tools as `<name>__<tool>` rather than under their own names. Names never depend on which other
   * servers are configured: two servers offering one name stop the start until one of them is namespaced.
   */
  namespace?: boolean;
  /**
   * Believe its MCP annotations (`readOnlyHint`, `destructiveHint`) when registering its tools. Off by default:
   * MCP says annotations are untrusted unless the server is, so an untrusted server's tools count as destructive.
   */
  trustAnnotations?: boolean;
  /**
   * List and read its resources through the gateway. Default false: a read is not a tool call, nothing is proposed
   * or recorded, and some clients hand resource reads to the model as tools.
   */
  resources?: boolean;
  /** List and get its prompts through the gateway (a prompt may embed resources). Default false. */
  prompts?: boolean;
}

/** An upstream MCP server started as a child process speaking MCP over its stdin/stdout. */
export interface StdioUpstream extends UpstreamCommon {
  command: string;
  args?: string[];
  /** Added to a minimal environment (PATH, HOME, …): the gateway's own variables, its tokens among them, are not passed on. */
  env?: Record<string, string>;
  cwd?: string;
}

/** An upstream MCP server reached over Streamable HTTP. */
export interface HttpUpstream extends UpstreamCommon {
  url: string;
  /** Sent with every request, e.g. `{ Authorization: 'Bearer ${UPSTREAM_TOKEN}' }`. */
  headers?: Record<string, string>;
}

export type UpstreamConfig = StdioUpstream | HttpUpstream;

export interface GatewayLimits {
  /** Tool calls of one MCP session waiting for a decision at once; more are refused (isError). Default 8. */
  pendingCallsPerSession: number;
  /** Streamable HTTP sessions open at once. Default 100. */
  sessions: number;
  /** Streamable HTTP sessions one person holds at once (their oldest idle one is closed for a new one). Default 5. */
  sessionsPerUser: number;
  /**
   * Bearer tokens Tollgate refuses per client address and minute; past it the address gets `429` until the minute
   * is over, and its tokens no longer reach Tollgate (tokens it has verified still pass). 0: no limit. Default 30.
   */
  failedAuthPerMinute: number;
  /** How long a forwarded call may run upstream, in seconds (progress from the upstream extends it). Default 300. */
  toolTimeoutSeconds: number;
}

/** Streamable HTTP (`--http`): where to listen, and which Host and Origin headers to accept (DNS rebinding). */
export interface HttpListenConfig {
  host: string;
  /** Absent: serve stdio unless `--http` is given. */
  port?: number;
  /** Host names (any port) requests may name in `Host`. Default on a loopback address: localhost, 127.0.0.1, [::1]. */
  allowedHosts?: string[];
  /** Browser origins (`https://app.example.com`) allowed besides the gateway's own. Default none. */
  allowedOrigins?: string[];
}

/** The gateway's built-in `ask_human` tool: the model asks a person a question in the session's conversation. */
export interface AskHumanConfig {
  /** Seconds before an unanswered question expires (1 to 86,400). Default: Tollgate's (300). */
  timeoutSeconds?: number;
}

export interface GatewayConfig {
  tollgate: {
    /** Default: TOLLGATE_URL, else http://127.0.0.1:8080. */
    url: string;
    /** The gateway's agent token. Default: TOLLGATE_TOKEN. */
    token: string;
    /** Where people open the web inbox (a call's card is linked from the chat). Default: TOLLGATE_INBOX_URL, else `url`. */
    inboxUrl?: string;
  };
  /** Over stdio: the end user the conversations are for (over HTTP, the bearer token's person). */
  user?: ConversationUserInput & {
    /** That person's own Tollgate token: lets them decide in the chat (elicitation). Default: TOLLGATE_USER_TOKEN. */
    token?: string;
  };
  upstreams: UpstreamConfig[];
  http?: HttpListenConfig;
  /**
   * Ask the user in the chat when the policy lets the requester decide: a form where a chat answer may decide the
   * call, else (when the client supports it) a link to the call's card in the inbox. Default true.
   */
  elicitation: boolean;
  /** Leave out of `tools/list` the tools a policy rule denies whatever the arguments. Default true. */
  hideDeniedTools: boolean;
  /** How often the policy is read again for hideDeniedTools, in seconds; 0: only at start. Default 60. */
  policyRefreshSeconds: number;
  /** How often a waiting call sends MCP progress, in seconds. Default 10. */
  progressIntervalSeconds: number;
  limits: GatewayLimits;
  /** `askHuman: true` (or `{ timeoutSeconds }`) lists the built-in `ask_human` tool; absent when off (the default). */
  askHuman?: AskHumanConfig;
}

export const MAX_CONFIG_BYTES = 256 * 1024;
export const MAX_UPSTREAMS = 32;
export const DEFAULT_TOLLGATE_URL = 'http://127.0.0.1:8080';
export const DEFAULT_LIMITS: GatewayLimits = {
  pendingCallsPerSession: 8,
  sessions: 100,
  sessionsPerUser: 5,
  failedAuthPerMinute: 30,
  toolTimeoutSeconds: 300,
};
const UPSTREAM_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export class GatewayConfigError extends Error {
  override readonly name = 'GatewayConfigError';
  constructor(readonly faults: string[]) {
    super(faults.length === 1 ? faults[0] : `${faults.length} problems:\n  ${faults.join('\n  ')}`);
  }
}

/**
 * A parsed config document (an object) checked, with `${VAR}` expanded from `env` in every string. A variable
 * that is not set is a fault, not an empty string: a missing secret must not silently become "".
 */
export function parseGatewayConfig(raw: unknown, env: Env = {}): GatewayConfig {
  const faults: string[] = [];
  const doc = expand(raw, '', env, faults, 0);
  if (!isObject(doc))
    throw new GatewayConfigError(['the config must be a YAML or JSON object with an `mcpServers` block']);
  unknownKeys(
    doc,
    [
      'tollgate',
      'user',
      'mcpServers',
      'http',
      'elicitation',
      'hideDeniedTools',
      'policyRefreshSeconds',
      'progressIntervalSeconds',
      'limits',
      'askHuman',
    ],
    '',
    faults,
  );

  const tg = optionalObject(doc.tollgate, 'tollgate', faults) ?? {};
  unknownKeys(tg, ['url', 'token', 'inboxUrl'], 'tollgate', faults);
  const inboxUrl = optionalString(tg.inboxUrl, 'tollgate.inboxUrl', faults) ?? env.TOLLGATE_INBOX_URL;
  if (inboxUrl !== undefined && !isHttpUrl(inboxUrl))
    faults.push(`tollgate.inboxUrl: must be an http(s) URL, got ${JSON.stringify(inboxUrl)}`);
  const url = optionalString(tg.url, 'tollgate.url', faults) ?? env.TOLLGATE_URL ?? DEFAULT_TOLLGATE_URL;
  if (!isHttpUrl(url)) faults.push(`tollgate.url: must be an http(s) URL, got ${JSON.stringify(url)}`);
  const token = optionalString(tg.token, 'tollgate.token', faults) ?? env.TOLLGATE_TOKEN ?? '';
  if (!token.trim() && !faults.some((f) => f.startsWith('tollgate.token:')))
    faults.push('tollgate.token: no token: set TOLLGATE_TOKEN (an agent token) or tollgate.token in the config');

  let user: GatewayConfig['user'];
  const u = optionalObject(doc.user, 'user', faults);
  if (u) {
    unknownKeys(u, ['id', 'name', 'roles', 'token'], 'user', faults);
    const id = optionalString(u.id, 'user.id', faults);
    if (!id) faults.push('user.id: required: the end user the calls are made for');
    else if (id.length > 256) faults.push('user.id: at most 256 characters');
    const name = optionalString(u.name, 'user.name', faults);
    const roles = optionalStringList(u.roles, 'user.roles', faults, 64);
    const userToken = optionalString(u.token, 'user.token', faults) ?? env.TOLLGATE_USER_TOKEN;
    if (id)
      user = {
        id,
        ...(name ? { name } : {}),
        ...(roles ? { roles } : {}),
        ...(userToken?.trim() ? { token: userToken.trim() } : {}),
      };
  }

  const upstreams: UpstreamConfig[] = [];
  const servers = optionalObject(doc.mcpServers, 'mcpServers', faults);
  if (!servers || Object.keys(servers).length === 0)
    faults.push('mcpServers: required: at least one upstream MCP server');
  else if (Object.keys(servers).length > MAX_UPSTREAMS)
    faults.push(`mcpServers: at most ${MAX_UPSTREAMS} upstream servers`);
  else
    for (const [name, value] of Object.entries(servers)) {
      const upstream = parseUpstream(name, value, faults);
      if (upstream) upstreams.push(upstream);
    }

  const http = parseHttp(doc.http, faults);

  const elicitation = doc.elicitation === undefined ? true : doc.elicitation;
  if (typeof elicitation !== 'boolean') faults.push('elicitation: must be true or false');
  const hideDeniedTools = doc.hideDeniedTools === undefined ? true : doc.hideDeniedTools;
  if (typeof hideDeniedTools !== 'boolean') faults.push('hideDeniedTools: must be true or false');
  const policyRefreshSeconds =
    doc.policyRefreshSeconds === undefined
      ? 60
      : integer(doc.policyRefreshSeconds, 'policyRefreshSeconds', faults, 0, 86_400);
  const progressIntervalSeconds =
    doc.progressIntervalSeconds === undefined
      ? 10
      : integer(doc.progressIntervalSeconds, 'progressIntervalSeconds', faults, 1, 3600);

  const l = optionalObject(doc.limits, 'limits', faults) ?? {};
  unknownKeys(l, Object.keys(LIMIT_BOUNDS), 'limits', faults);
  const limits = Object.fromEntries(
    Object.entries(LIMIT_BOUNDS).map(([k, [min, max]]) => [
      k,
      l[k] === undefined
        ? DEFAULT_LIMITS[k as keyof GatewayLimits]
        : (integer(l[k], `limits.${k}`, faults, min, max) ?? 0),
    ]),
  ) as unknown as GatewayLimits;

  const askHuman = parseAskHuman(doc.askHuman, faults);

  if (faults.length) throw new GatewayConfigError(faults);
  return {
    tollgate: {
      url: url.replace(/\/+$/, ''),
      token: token.trim(),
      ...(inboxUrl ? { inboxUrl: inboxUrl.replace(/\/+$/, '') } : {}),
    },
    ...(user ? { user } : {}),
    upstreams,
    ...(http ? { http } : {}),
    elicitation: elicitation as boolean,
    hideDeniedTools: hideDeniedTools as boolean,
    policyRefreshSeconds: policyRefreshSeconds ?? 60,
    progressIntervalSeconds: progressIntervalSeconds ?? 10,
    limits,
    ...(askHuman ? { askHuman } : {}),
  };
}

/** Each limit's lowest and highest value (failedAuthPerMinute 0: no limit of the gateway's own). */
const LIMIT_BOUNDS: Record<keyof GatewayLimits, [number, number]> = {
  pendingCallsPerSession: [1, 64],
  sessions: [1, 10_000],
  sessionsPerUser: [1, 1000],
  failedAuthPerMinute: [0, 100_000],
  toolTimeoutSeconds: [1, 86_400],
};

function parseHttp(v: unknown, faults: string[]): HttpListenConfig | undefined {
  const h = optionalObject(v, 'http', faults);
  if (!h) return undefined;
  unknownKeys(h, ['host', 'port', 'allowedHosts', 'allowedOrigins'], 'http', faults);
  const host = optionalString(h.host, 'http.host', faults) ?? '127.0.0.1';
  const port = integer(h.port, 'http.port', faults, 0, 65535);
  const allowedHosts = optionalStringList(h.allowedHosts, 'http.allowedHosts', faults, 64)?.map((x) =>
    x.trim().toLowerCase(),
  );
  allowedHosts?.forEach((x, i) => {
    if (!isHostName(x))
      faults.push(
        `http.allowedHosts[${i}]: a host name without scheme or port (example.com, 127.0.0.1, [::1]), got ${JSON.stringify(x)}`,
      );
  });
  const allowedOrigins = optionalStringList(h.allowedOrigins, 'http.allowedOrigins', faults, 64)?.map((x, i) => {
    const origin = originOf(x);
    if (!origin)
      faults.push(
        `http.allowedOrigins[${i}]: an origin such as https://app.example.com (scheme, host, optional port), got ${JSON.stringify(x)}`,
      );
    return origin ?? x;
  });
  return {
    host,
    ...(port !== undefined ? { port } : {}),
    ...(allowedHosts ? { allowedHosts } : {}),
    ...(allowedOrigins ? { allowedOrigins } : {}),
  };
}

/** `askHuman`: true, false, or `{ timeoutSeconds }` (which enables it too). */
function parseAskHuman(v: unknown, faults: string[]): AskHumanConfig | undefined {
  if (v === undefined || v === null || v === false) return undefined;
  if (v === true) return {};
  if (!isObject(v)) {
    faults.push('askHuman: must be true, false or an object with timeoutSeconds');
    return undefined;
  }
  unknownKeys(v, ['timeoutSeconds'], 'askHuman', faults);
  const timeoutSeconds = integer(v.timeoutSeconds, 'askHuman.timeoutSeconds', faults, 1, 86_400);
  return timeoutSeconds === undefined ? {} : { timeoutSeconds };
}

function parseUpstream(name: string, value: unknown, faults: string[]): UpstreamConfig | undefined {
  const at = `mcpServers.${name}`;
  if (!UPSTREAM_NAME.test(name))
    faults.push(
      `${at}: the name must match ${UPSTREAM_NAME} (namespace: true prefixes the names of its tools with it)`,
    );
  if (!isObject(value)) {
    faults.push(`${at}: must be an object with either command (stdio) or url (Streamable HTTP)`);
    return undefined;
  }
  unknownKeys(
    value,
    [
      'type',
      'command',
      'args',
      'env',
      'cwd',
      'url',
      'headers',
      'namespace',
      'trustAnnotations',
      'resources',
      'prompts',
    ],
    at,
    faults,
  );
  const common = {
    name,
    ...flag(value, 'namespace', at, faults),
    ...flag(value, 'trustAnnotations', at, faults),
    ...flag(value, 'resources', at, faults),
    ...flag(value, 'prompts', at, faults),
  };
  const type = optionalString(value.type, `${at}.type`, faults);
  if (type !== undefined && !['stdio', 'http', 'streamable-http', 'streamableHttp'].includes(type))
    faults.push(`${at}.type: must be stdio or http (Streamable HTTP), got ${JSON.stringify(type)}`);
  const hasCommand = value.command !== undefined;
  const hasUrl = value.url !== undefined;
  if (hasCommand === hasUrl) {
    faults.push(`${at}: give either command (a stdio server) or url (a Streamable HTTP server)`);
    return undefined;
  }
  if (hasCommand) {
    if (type && type !== 'stdio') faults.push(`${at}.type: ${type} needs url, not command`);
    for (const k of ['headers']) if (value[k] !== undefined) faults.push(`${at}.${k}: only for url servers`);
    const command = optionalString(value.command, `${at}.command`, faults);
    if (command !== undefined && !command.trim()) faults.push(`${at}.command: must not be empty`);
    const args = optionalStringList(value.args, `${at}.args`, faults, 256);
    const env = stringMap(value.env, `${at}.env`, faults);
    const cwd = optionalString(value.cwd, `${at}.cwd`, faults);
    return command
      ? { ...common, command, ...(args ? { args } : {}), ...(env ? { env } : {}), ...(cwd ? { cwd } : {}) }
      : undefined;
  }
  if (type === 'stdio') faults.push(`${at}.type: stdio needs command, not url`);
  for (const k of ['args', 'env', 'cwd'])
    if (value[k] !== undefined) faults.push(`${at}.${k}: only for command (stdio) servers`);
  const url = optionalString(value.url, `${at}.url`, faults);
  if (url !== undefined && !isHttpUrl(url))
    faults.push(`${at}.url: must be an http(s) URL, got ${JSON.stringify(url)}`);
  const headers = stringMap(value.headers, `${at}.headers`, faults);
  return url ? { ...common, url, ...(headers ? { headers } : {}) } : undefined;
}
