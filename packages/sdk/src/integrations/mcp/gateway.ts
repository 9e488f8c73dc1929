/**
 * The MCP gateway: an MCP server that fronts upstream MCP servers and gates every `tools/call` through Tollgate.
 * `tools/list` passes the upstream tools through (under their own names, or `<server>__<name>` for a namespaced
 * server) and registers each with Tollgate, as destructive unless the operator trusts its server's annotations.
 * A call is proposed in the session's conversation, waits for a decision (MCP progress meanwhile; an elicitation
 * when the policy lets the requester decide and a person's token is at hand), is claimed, forwarded upstream with
 * the approved (maybe edited) arguments, reported, and its result returned unchanged. A refusal is a tool result
 * with `isError: true` saying who refused and why, for the model to tell the user.
 *
 * The tool list (tool-list.ts) follows the upstreams (`notifications/tools/list_changed`: new tools are registered
 * and flagged as at start, and clients are told) and the policy (tools a rule denies whatever the arguments are left
 * out, unless `hideDeniedTools` is off). Resources and prompts pass through (passthrough.ts).
 *
 * Built on the MCP TypeScript SDK v2 (`@modelcontextprotocol/client` and `/server`, optional peer dependencies):
 * its Client talks to the upstreams, its low-level Server (tool schemas pass through as JSON Schema) to the client,
 * over any transport; `handleHttp` serves Streamable HTTP with Web-standard Request/Response, so it mounts in any
 * server. `tollgate mcp` is the CLI.
 */
import {
  isInitializeRequest,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
} from '@modelcontextprotocol/server';
import type { TollgateConversation, ToolCallHandle } from '../../conversation.js';
import { TollgateError, ToolCallRejectedError } from '../../errors.js';
import { Tollgate } from '../../tollgate.js';
import type { ConversationUserInput, JsonObject } from '../../types.js';
import { DEFAULT_LIMITS, type AskHumanConfig, type GatewayLimits, type UpstreamConfig } from '../mcp-config.js';
import { ask, ASK_HUMAN, ASK_HUMAN_TOOL, askInChat, type AskDeps, cardUrl, needsPasskey } from './chat.js';
import { BearerAuth, originFault, type HttpGuardOptions } from './http-auth.js';
import { HttpSessions } from './http-sessions.js';
import { checkIdentities } from './identity.js';
import { PassThrough } from './passthrough.js';
import {
  type CallContext,
  clip,
  type Log,
  messageOf,
  problem,
  progressOf,
  quoted,
  refusalResult,
  type Session,
  type SessionIdentity,
  textOf,
  VERSION,
} from './shared.js';
import { ToolList } from './tool-list.js';
import { displayTitle, type GatewayTool } from './tools.js';
import { connectUpstream, type ListKind, type Upstream } from './upstreams.js';

/** How long changes of prompts or resources are gathered before sessions are told once. */
const TELL_AFTER_MS = 250;

export interface McpGatewayOptions {
  /** The gateway's client of Tollgate, with an agent token: it registers tools, proposes, claims and reports. */
  tollgate: Tollgate;
  /** The upstream MCP servers, by name: the operator's allow-list, nothing else is started or reached. */
  upstreams: UpstreamConfig[];
  /**
   * The end user of sessions that bring none (stdio), with their own token if they may decide in the chat. The
   * token must be that person's, of the gateway's tenant (Tollgate is asked at start).
   */
  user?: ConversationUserInput & { token?: string };
  /**
   * Ask in the chat (MCP elicitation) when the policy lets the requester decide: a form where a chat answer may
   * decide the call, else a link to its card in the inbox (URL mode) when the client takes one. Default true.
   */
  elicitation?: boolean;
  /**
   * Leave out of `tools/list` the tools a policy rule denies whatever the arguments (a call to one by name is still
   * proposed, denied and recorded). Default true.
   */
  hideDeniedTools?: boolean;
  /** How often the policy is read again for `hideDeniedTools`, in ms; 0: only at start. Default 60,000. */
  policyRefreshMs?: number;
  /** Where people open Tollgate's web inbox: links to a call's card. Default: the Tollgate client's URL. */
  inboxUrl?: string;
  /**
   * List the built-in `ask_human` tool: the model asks a person a question (free text, or one of `choices`) in the
   * session's conversation and gets the answer as the result. `true` or `{ timeoutSeconds }`. Default off.
   */
  askHuman?: boolean | AskHumanConfig;
  /** How often a waiting call sends MCP progress. Default 10,000 ms. */
  progressIntervalMs?: number;
  limits?: Partial<GatewayLimits>;
  /** `handleHttp`'s Host and Origin checks (DNS rebinding). Default: any Host, and only same-origin browsers. */
  http?: HttpGuardOptions;
  /** The MCP server's name and version as clients see them. */
  serverInfo?: { name: string; version: string };
  /** Where the gateway says what it does (stderr in the CLI: stdout is the protocol). Never given a token. */
  log?: Log;
}

/** What `handleHttp` knows of a request besides the request: the client's address, for its failure limit. */
export interface HttpRequestInfo {
  clientAddress?: string;
}

export class TollgateMcpGateway {
  private readonly upstreams = new Map<string, Upstream>();
  private readonly toolList: ToolList;
  /** Prompt and resource changes gathered for a moment before sessions are told. */
  private readonly telling = new Set<ListKind>();
  /**
   * Every session's server and when it was made, to tell them of changed lists. One without a transport is not yet
   * connected, or closed: it is dropped once it has been so for a minute.
   */
  private readonly live = new Map<Server, number>();
  private readonly passThrough: PassThrough;
  private readonly sessions: HttpSessions;
  private readonly limits: GatewayLimits;
  private readonly askHuman?: AskHumanConfig;
  private readonly auth: BearerAuth;
  private readonly deps: AskDeps;
  /** The gateway's tenant (its agent token's), asked of Tollgate at start. */
  private tenant = '';
  private closed = false;

  private constructor(private readonly options: McpGatewayOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.sessions = new HttpSessions(this.limits);
    this.passThrough = new PassThrough(this.upstreams, (level, message) => this.log(level, message));
    if (options.askHuman) this.askHuman = options.askHuman === true ? {} : options.askHuman;
    const log: Log = (level, message) => this.log(level, message);
    this.toolList = new ToolList({
      tollgate: options.tollgate,
      upstreams: this.upstreams,
      reserved: this.askHuman ? [ASK_HUMAN_TOOL] : [],
      hideDenied: options.hideDeniedTools !== false,
      log,
      changed: () => this.tell('tools'),
    });
    this.auth = new BearerAuth(options.tollgate.url, () => this.tenant, this.limits.failedAuthPerMinute, log);
    this.deps = {
      tollgate: options.tollgate,
      ...(options.inboxUrl ? { inboxUrl: options.inboxUrl } : {}),
      elicitation: options.elicitation !== false,
      log,
      askHuman: this.askHuman ?? {},
      progressIntervalMs: options.progressIntervalMs ?? 10_000,
      conversationOf: (s) => this.conversationOf(s),
      failure: (tool, e, what) => this.failure(tool, e, what),
    };
  }

  /**
   * Checks who the tokens are (the gateway's an agent's; the user's that user's, in the same tenant), connects to
   * every upstream, lists their tools and registers them with Tollgate. Throws a GatewayIdentityError for a wrong
   * token, and an Error if an upstream cannot be reached or two tools would share a name.
   */
  static async start(options: McpGatewayOptions): Promise<TollgateMcpGateway> {
    if (!(options?.tollgate instanceof Tollgate))
      throw new TypeError('TollgateMcpGateway.start({ tollgate }) needs a Tollgate client with an agent token');
    if (!options.upstreams?.length)
      throw new TypeError('TollgateMcpGateway.start({ upstreams }) needs at least one upstream MCP server');
    const gateway = new TollgateMcpGateway(options);
    try {
      gateway.tenant = await checkIdentities(options.tollgate, options.user);
      for (const config of options.upstreams)
        gateway.upstreams.set(
          config.name,
          await connectUpstream(config, (upstream, kind) => gateway.upstreamChanged(upstream, kind)),
        );
      await gateway.toolList.start(options.policyRefreshMs ?? 60_000);
    } catch (e) {
      await gateway.close();
      throw e;
    }
    return gateway;
  }

  /** Every tool of the upstreams, by exposed name (those hidden from clients too). */
  get tools(): GatewayTool[] {
    return this.toolList.all;
  }

  /** The tools `tools/list` answers: all but those the policy denies outright, unless `hideDeniedTools` is off. */
  get listedTools(): GatewayTool[] {
    return this.toolList.visible;
  }

  /**
   * A new MCP server for one session (one Tollgate conversation): connect it to any transport, e.g.
   * `await gateway.server().connect(new StdioServerTransport())`. Without an identity, the configured user.
   */
  server(identity: SessionIdentity = {}): Server {
    const session: Session = {
      ...this.defaultIdentity(),
      ...identity,
      pending: 0,
      lastSeen: Date.now(),
      server: undefined as unknown as Server,
    };
    session.server = this.buildServer(session);
    return session.server;
  }

  /**
   * Streamable HTTP with bearer auth, for one path of a server of yours: the bearer token is a person's Tollgate
   * token of the gateway's tenant (checked with Tollgate; agents' tokens are refused), who becomes the session's
   * end user and may decide in the chat. Answers 403 for a Host or Origin not allowed, 401 without a valid token,
   * 429 to an address past its failed tokens, 404 for another person's (or an unknown) session. Pass the client's
   * address in `info` for the failure limit to count per client.
   */
  async handleHttp(request: Request, info: HttpRequestInfo = {}): Promise<Response> {
    const refused = originFault(request, this.options.http ?? {});
    if (refused) return refused;
    const token = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get('authorization') ?? '')?.[1];
    const who = await this.auth.verify(token, info.clientAddress);
    if (who instanceof Response) return who;
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId) {
      const session = this.sessions.of(sessionId, who.sub);
      if (!session) return problem(404, 'not_found', 'No such MCP session: initialize a new one');
      session.userToken = token; // the person's freshest token decides from now on
      session.lastSeen = Date.now();
      return session.transport!.handleRequest(request);
    }
    if (request.method !== 'POST')
      return problem(400, 'validation_failed', 'No mcp-session-id: start a session with an initialize request');
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      return problem(400, 'validation_failed', 'The body is not JSON');
    }
    if (!isInitializeRequest(body))
      return problem(400, 'validation_failed', 'No mcp-session-id: start a session with an initialize request');
    return this.sessions.start(
      who.sub,
      () => {
        const session: Session = {
          user: who.user,
          userToken: token,
          sub: who.sub,
          pending: 0,
          lastSeen: Date.now(),
          server: undefined as unknown as Server,
        };
        session.server = this.buildServer(session);
        return session;
      },
      request,
      body,
    );
  }

  /** Closes the sessions and the upstreams (stdio servers are stopped), and lets the results in flight land. */
  async close(): Promise<void> {
    this.closed = true;
    this.toolList.close();
    await this.sessions.closeAll();
    await Promise.allSettled([...this.upstreams.values()].map((u) => u.client.close()));
    await this.options.tollgate.flush();
  }

  /* ── upstreams and tools ──────────────────────────────────────────────────────────────────────────────── */

  /** An upstream said one of its lists changed: tools are the tool list's to follow; the others are only told. */
  private upstreamChanged(upstream: string, kind: ListKind): void {
    if (this.closed) return;
    if (kind === 'tools') return this.toolList.upstreamChanged(upstream);
    const passed = kind === 'prompts' ? this.passThrough.withPrompts() : this.passThrough.withResources();
    if (kind === 'resources') this.passThrough.forget(upstream);
    if (passed.some((u) => u.config.name === upstream)) this.tellSoon(kind);
  }

  private tellSoon(kind: ListKind): void {
    if (this.telling.has(kind)) return;
    this.telling.add(kind);
    setTimeout(() => {
      this.telling.delete(kind);
      if (!this.closed) this.tell(kind);
    }, TELL_AFTER_MS).unref?.();
  }

  private dropClosed(): void {
    const old = Date.now() - 60_000;
    for (const [server, made] of this.live) if (!server.transport && made < old) this.live.delete(server);
  }

  /** `notifications/<kind>/list_changed` to every open session. */
  private tell(kind: ListKind): void {
    this.dropClosed();
    for (const server of this.live.keys()) {
      if (!server.transport) continue;
      const sent =
        kind === 'tools'
          ? server.sendToolListChanged()
          : kind === 'prompts'
            ? server.sendPromptListChanged()
            : server.sendResourceListChanged();
      sent.catch(() => undefined); // a session closing meanwhile: nothing to tell
    }
  }

  /* ── the MCP server of a session ──────────────────────────────────────────────────────────────────────── */

  private buildServer(session: Session): Server {
    const prompts = this.passThrough.withPrompts().length > 0;
    const resources = this.passThrough.withResources().length > 0;
    const server = new Server(this.options.serverInfo ?? { name: 'tollgate-mcp-gateway', version: VERSION }, {
      capabilities: {
        tools: { listChanged: true },
        ...(prompts ? { prompts: { listChanged: true } } : {}),
        ...(resources ? { resources: { listChanged: true } } : {}),
      },
      instructions: `Tool calls go through Tollgate: some run at once, some wait for a person to approve them. A refused call answers with who refused and why; tell the user.${this.askHuman ? ` When you need an answer only a person has, call ${ASK_HUMAN_TOOL}.` : ''}`,
    });
    this.dropClosed();
    this.live.set(server, Date.now());
    server.setRequestHandler('tools/list', async () => ({
      tools: [...this.listedTools.map((t) => ({ ...t.tool, name: t.name })), ...(this.askHuman ? [ASK_HUMAN] : [])],
    }));
    const upstreamOptions = (signal: AbortSignal) => ({ signal, timeout: this.limits.toolTimeoutSeconds * 1000 });
    if (prompts) {
      server.setRequestHandler('prompts/list', (_, extra) =>
        this.passThrough.listPrompts(upstreamOptions(extra.mcpReq.signal)),
      );
      server.setRequestHandler('prompts/get', (request, extra) =>
        this.passThrough.getPrompt(request.params, upstreamOptions(extra.mcpReq.signal)),
      );
    }
    if (resources) {
      server.setRequestHandler('resources/list', (_, extra) =>
        this.passThrough.listResources(upstreamOptions(extra.mcpReq.signal)),
      );
      server.setRequestHandler('resources/templates/list', (_, extra) =>
        this.passThrough.listResourceTemplates(upstreamOptions(extra.mcpReq.signal)),
      );
      server.setRequestHandler('resources/read', (request, extra) =>
        this.passThrough.readResource(request.params, upstreamOptions(extra.mcpReq.signal)),
      );
    }
    server.setRequestHandler('tools/call', async (request, extra) => {
      const builtIn = this.askHuman && request.params.name === ASK_HUMAN_TOOL;
      const tool = builtIn ? undefined : this.toolList.get(request.params.name);
      if (!builtIn && !tool)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      const max = this.limits.pendingCallsPerSession;
      if (session.pending >= max) {
        return refusalResult(
          builtIn
            ? `${ASK_HUMAN_TOOL} did not ask: ${max} calls of this session already wait for a person; try again once they are answered`
            : `${tool!.name} did not run: ${max} calls of this session already wait for a decision; try again once they are decided`,
        );
      }
      const ctx: CallContext = {
        signal: extra.mcpReq.signal,
        requestId: extra.mcpReq.id,
        progress: progressOf(extra.mcpReq._meta?.progressToken, (n) => extra.mcpReq.notify(n)),
      };
      session.pending += 1;
      try {
        if (builtIn) return await ask(this.deps, session, request.params.arguments ?? {}, ctx);
        return await this.call(session, tool!, (request.params.arguments ?? {}) as JsonObject, ctx);
      } finally {
        session.pending -= 1;
      }
    });
    return server;
  }

  /** Propose → wait (progress, elicitation) → claim → forward → report → the upstream's result, unchanged. */
  private async call(session: Session, tool: GatewayTool, args: JsonObject, ctx: CallContext): Promise<CallToolResult> {
    await this.toolList.ensureRegistered(tool);
    let handle: ToolCallHandle;
    try {
      const conversation = await this.conversationOf(session);
      handle = await conversation.propose(
        {
          toolName: tool.name,
          arguments: args,
          annotations: tool.flags,
          reason: `Asked for over MCP${this.clientSays(session)} (a tool of the upstream ${tool.upstream})`,
          display: { title: displayTitle(tool) },
        },
        // Claimed in the same request when the policy lets it through: it is forwarded at once.
        { signal: ctx.signal, claim: true },
      );
    } catch (e) {
      return this.failure(tool.name, e, 'could not be proposed');
    }
    try {
      if (handle.toolCall.status === 'pending') await this.waitForDecision(session, handle, ctx);
      return await handle.run(
        async (approved) => {
          const result = (await this.upstreams.get(tool.upstream)!.client.callTool(
            { name: tool.upstreamName, arguments: approved },
            {
              signal: ctx.signal,
              timeout: this.limits.toolTimeoutSeconds * 1000,
              resetTimeoutOnProgress: true,
              // The upstream's own progress goes on to the client, in the same sequence as the waiting's.
              onprogress: (p) => ctx.progress(p.message ?? `${tool.name} is running`),
            },
          )) as CallToolResult;
          if (result.isError) throw new UpstreamToolError(result);
          return result;
        },
        { signal: ctx.signal, output: (r) => (r.structuredContent ?? { content: r.content }) as JsonObject },
      );
    } catch (e) {
      if (e instanceof UpstreamToolError) return e.result;
      if (e instanceof ToolCallRejectedError) return refusalResult(`${e.message}. The call did not run.`);
      if (e instanceof TollgateError) return this.failure(tool.name, e, 'could not be completed');
      throw e; // the upstream's own protocol error (reported as failed by run()) reaches the client as such
    }
  }

  /** Long-polls the decision, telling the client meanwhile; asks in the chat when the requester may decide. */
  private async waitForDecision(session: Session, handle: ToolCallHandle, ctx: CallContext): Promise<void> {
    const call = handle.toolCall;
    const stop = new AbortController();
    const card = cardUrl(this.deps.inboxUrl ?? this.deps.tollgate.url, call.id);
    // A call that needs a passkey is approved in the inbox only: the progress says so, and the wait goes on for it.
    const passkey = needsPasskey(call) ? '; it needs a passkey: approve it in the Tollgate inbox' : '';
    const waiting = `${call.toolName} waits for approval in Tollgate (${call.policy.reason}; approvers: ${call.approval?.approvers.join(', ') ?? 'people'}${passkey}): ${card}`;
    ctx.progress(waiting);
    const timer = setInterval(() => ctx.progress(waiting), this.deps.progressIntervalMs);
    const asking = askInChat(this.deps, session, call, ctx, stop.signal).catch((e) =>
      this.log('warn', `tool call ${call.id}: asking in the chat failed: ${messageOf(e)}`),
    );
    try {
      await handle.wait({ signal: ctx.signal });
    } finally {
      clearInterval(timer);
      stop.abort(); // decided elsewhere (the inbox): the question in the chat is withdrawn
      await asking;
    }
  }

  /** The client's name for itself, attributed: any client may say it is anything. */
  private clientSays(session: Session): string {
    const client = session.server.getClientVersion();
    return client?.name ? ` (the client says it is ${quoted(client.name, 64)})` : '';
  }

  private conversationOf(session: Session): Promise<TollgateConversation> {
    if (!session.conversation) {
      const client = session.server.getClientVersion();
      session.conversation = this.options.tollgate
        .conversation({
          id: `mcp-${crypto.randomUUID()}`,
          ...(session.user ? { user: session.user } : {}),
          title: `MCP session${this.clientSays(session)}`,
          metadata: {
            mcp: {
              client: client
                ? { name: clip(String(client.name), 200), version: clip(String(client.version), 100) }
                : null,
              upstreams: [...this.upstreams.keys()],
            },
          },
        })
        .catch((e) => {
          session.conversation = undefined; // the next call tries again
          throw e;
        });
    }
    return session.conversation;
  }

  private failure(name: string, e: unknown, what: string): CallToolResult {
    if (!(e instanceof TollgateError)) throw e;
    if (e.code === 'halted')
      return refusalResult(`${name} was refused: Tollgate is halted (${e.detail}). The call did not run.`);
    this.log('error', `tool ${name}: ${what}: ${e.code}: ${e.detail}${e.requestId ? ` (request ${e.requestId})` : ''}`);
    // Fail closed: without Tollgate's approval, nothing runs.
    return refusalResult(`${name} ${what} in Tollgate (${e.code}: ${e.detail}). The call did not run.`);
  }

  private defaultIdentity(): SessionIdentity {
    const u = this.options.user;
    if (!u) return {};
    const { token, ...user } = u;
    return { user, ...(token ? { userToken: token } : {}) };
  }

  private log(level: 'info' | 'warn' | 'error', message: string): void {
    if (this.closed && level === 'info') return;
    this.options.log?.(level, message);
  }
}

/** An upstream result with `isError`: reported to Tollgate as failed, returned to the client unchanged. */
class UpstreamToolError extends Error {
  constructor(readonly result: CallToolResult) {
    super(textOf(result) || 'the tool reported an error');
  }
}
