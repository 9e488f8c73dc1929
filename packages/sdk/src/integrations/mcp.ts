/**
 * MCP gateway (`@tollgate/sdk/mcp`): an MCP server that fronts upstream MCP servers and gates every `tools/call`
 * through Tollgate. `tools/list` passes the upstream tools through (prefixed `<server>__` where two upstreams
 * share a name) and registers each with Tollgate, its MCP annotations mapped to tool flags. A call is proposed in
 * the session's conversation, waits for a decision (MCP progress meanwhile; an MCP elicitation when the policy lets
 * the requester decide and a person's token is at hand), is claimed, forwarded upstream with the approved
 * (maybe edited) arguments, reported, and its result returned unchanged. A refusal is a tool result with
 * `isError: true` saying who refused and why, for the model to tell the user. With `askHuman`, a built-in
 * `ask_human` tool lets the model ask a person a question in the same conversation (and in the chat, by
 * elicitation, when the user may answer); its result is the answer.
 *
 * Built on @modelcontextprotocol/sdk (an optional peer dependency): its Client talks to the upstreams, its
 * low-level Server (tool schemas pass through as JSON Schema) to the client, over any transport; `handleHttp`
 * serves Streamable HTTP with Web-standard Request/Response, so it mounts in any server. `tollgate mcp` is the CLI.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, ErrorCode, isInitializeRequest, ListToolsRequestSchema, McpError, type CallToolResult, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { TollgateConversation, ToolCallHandle } from '../conversation.js';
import { TollgateError, ToolCallRejectedError } from '../errors.js';
import { newId } from '../ids.js';
import type { Question } from '../questions.js';
import { Tollgate } from '../tollgate.js';
import type { ConversationUserInput, JsonObject, ToolAnnotations, ToolCall } from '../types.js';
import { DEFAULT_LIMITS, type AskHumanConfig, type GatewayLimits, type UpstreamConfig } from './mcp-config.js';

export { parseGatewayConfig, GatewayConfigError, MAX_CONFIG_BYTES, MAX_UPSTREAMS, DEFAULT_TOLLGATE_URL, type AskHumanConfig, type GatewayConfig, type GatewayLimits, type UpstreamConfig, type StdioUpstream, type HttpUpstream } from './mcp-config.js';

/** The built-in tool's name (`askHuman`): an upstream tool of that name is refused while it is on. */
export const ASK_HUMAN_TOOL = 'ask_human';

export interface McpGatewayOptions {
  /** The gateway's client of Tollgate, with an agent token: it registers tools, proposes, claims and reports. */
  tollgate: Tollgate;
  /** The upstream MCP servers, by name: the operator's allow-list, nothing else is started or reached. */
  upstreams: UpstreamConfig[];
  /** The end user of sessions that bring none (stdio), with their own token if they may decide in the chat. */
  user?: ConversationUserInput & { token?: string };
  /** Ask in the chat (MCP elicitation) when the policy lets the requester decide. Default true. */
  elicitation?: boolean;
  /**
   * List the built-in `ask_human` tool: the model asks a person a question (free text, or one of `choices`) in the
   * session's conversation and gets the answer as the result. `true` or `{ timeoutSeconds }`. Default off.
   */
  askHuman?: boolean | AskHumanConfig;
  /** How often a waiting call sends MCP progress. Default 10,000 ms. */
  progressIntervalMs?: number;
  limits?: Partial<GatewayLimits>;
  /** The MCP server's name and version as clients see them. */
  serverInfo?: { name: string; version: string };
  /** Where the gateway says what it does (stderr in the CLI: stdout is the protocol). Never given a token. */
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

/** One MCP session's person: the conversation's end user, and their token when they may decide in the chat. */
export interface SessionIdentity {
  user?: ConversationUserInput;
  /** A person's Tollgate token (never an agent's): elicited decisions are made with it, `via: "mcp"`. */
  userToken?: string;
}

/** A tool as the gateway exposes it. */
export interface GatewayTool {
  /** The name clients call (and Tollgate's tool name, for policies and people). */
  name: string;
  upstream: string;
  /** The upstream's own name for it. */
  upstreamName: string;
  tool: McpTool;
  flags: Required<Pick<ToolAnnotations, 'isReadOnly' | 'destructive'>>;
}

interface Upstream {
  config: UpstreamConfig;
  client: Client;
}

interface Session extends SessionIdentity {
  server: Server;
  /** The person's `sub` behind an HTTP session: later requests must come from the same person. */
  sub?: string;
  conversation?: Promise<TollgateConversation>;
  pending: number;
  transport?: WebStandardStreamableHTTPServerTransport;
  lastSeen: number;
}

const MAX_TOOLS = 1000;
const MAX_DESCRIPTION = 4000;
const TOLLGATE_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;
const AUTH_CACHE_MS = 60_000;
const MAX_AUTH_CACHE = 1000;
const SESSION_IDLE_MS = 30 * 60_000;
const MAX_QUESTION = 4000;

/** `ask_human` as clients list it: read-only (it changes nothing), never proposed as a tool call. */
const ASK_HUMAN: McpTool = {
  name: ASK_HUMAN_TOOL,
  title: 'Ask a person',
  description:
    'Ask a person (the user, or an approver in Tollgate) a question and wait for the answer: free text, or one of `choices`. Use it when you need a decision or a fact only a person has; the answer is the result.',
  inputSchema: {
    type: 'object',
    properties: {
      question: { type: 'string', minLength: 1, maxLength: MAX_QUESTION, description: 'The question, as the person will read it' },
      choices: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 200 }, minItems: 2, maxItems: 20, uniqueItems: true, description: 'Optional: 2 to 20 distinct answers to pick from' },
    },
    required: ['question'],
  },
  annotations: { title: 'Ask a person', readOnlyHint: true, openWorldHint: false },
};

export class TollgateMcpGateway {
  private readonly upstreams = new Map<string, Upstream>();
  private exposed = new Map<string, GatewayTool>();
  private readonly registered = new Set<string>();
  private readonly sessions = new Map<string, Session>();
  private readonly verified = new Map<string, { sub: string; user: ConversationUserInput; until: number }>();
  private readonly limits: GatewayLimits;
  private readonly askHuman?: AskHumanConfig;
  private closed = false;

  private constructor(private readonly options: McpGatewayOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    if (options.askHuman) this.askHuman = options.askHuman === true ? {} : options.askHuman;
  }

  /** Connects to every upstream, lists their tools and registers them with Tollgate. Throws if an upstream cannot be reached. */
  static async start(options: McpGatewayOptions): Promise<TollgateMcpGateway> {
    if (!(options?.tollgate instanceof Tollgate)) throw new TypeError('TollgateMcpGateway.start({ tollgate }) needs a Tollgate client with an agent token');
    if (!options.upstreams?.length) throw new TypeError('TollgateMcpGateway.start({ upstreams }) needs at least one upstream MCP server');
    const gateway = new TollgateMcpGateway(options);
    try {
      for (const config of options.upstreams) await gateway.connectUpstream(config);
      await gateway.refreshTools();
    } catch (e) {
      await gateway.close();
      throw e;
    }
    return gateway;
  }

  /** The tools clients see, by exposed name. */
  get tools(): GatewayTool[] {
    return [...this.exposed.values()];
  }

  /**
   * A new MCP server for one session (one Tollgate conversation): connect it to any transport, e.g.
   * `await gateway.server().connect(new StdioServerTransport())`. Without an identity, the configured user.
   */
  server(identity: SessionIdentity = {}): Server {
    const session: Session = { ...this.defaultIdentity(), ...identity, pending: 0, lastSeen: Date.now(), server: undefined as unknown as Server };
    session.server = this.buildServer(session);
    return session.server;
  }

  /**
   * Streamable HTTP with bearer auth, for one path of a server of yours: the bearer token is a person's Tollgate
   * token (checked with Tollgate; agents' tokens are refused), who becomes the session's end user and may decide
   * in the chat. Answers 401 without a valid token, 404 for another person's (or an unknown) session.
   */
  async handleHttp(request: Request): Promise<Response> {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get('authorization') ?? '')?.[1];
    if (!token) return problem(401, 'unauthenticated', 'A bearer token is required: your Tollgate token (the same one the inbox uses)');
    const who = await this.verifyPerson(token);
    if ('status' in who) return who;
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId) {
      const session = this.sessions.get(sessionId);
      if (!session || session.sub !== who.sub) return problem(404, 'not_found', 'No such MCP session: initialize a new one');
      session.userToken = token; // the person's freshest token decides from now on
      session.lastSeen = Date.now();
      return session.transport!.handleRequest(request);
    }
    if (request.method !== 'POST') return problem(400, 'validation_failed', 'No mcp-session-id: start a session with an initialize request');
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      return problem(400, 'validation_failed', 'The body is not JSON');
    }
    if (!isInitializeRequest(body)) return problem(400, 'validation_failed', 'No mcp-session-id: start a session with an initialize request');
    this.evictIdleSessions();
    if (this.sessions.size >= this.limits.sessions) return problem(503, 'unavailable', `Too many MCP sessions open (${this.limits.sessions}); close one or try later`);
    const session: Session = { user: who.user, userToken: token, sub: who.sub, pending: 0, lastSeen: Date.now(), server: undefined as unknown as Server };
    session.server = this.buildServer(session);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => void this.sessions.set(id, session),
      onsessionclosed: (id) => void this.sessions.delete(id),
    });
    session.transport = transport;
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await session.server.connect(transport as Transport);
    return transport.handleRequest(request, { parsedBody: body });
  }

  /** Closes the sessions and the upstreams (stdio servers are stopped). */
  async close(): Promise<void> {
    this.closed = true;
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(sessions.map((s) => s.server.close()));
    await Promise.allSettled([...this.upstreams.values()].map((u) => u.client.close()));
  }

  /* ── upstreams and tools ──────────────────────────────────────────────────────────────────────────────── */

  private async connectUpstream(config: UpstreamConfig): Promise<void> {
    const client = new Client({ name: 'tollgate-mcp-gateway', version: VERSION });
    let transport: Transport;
    if ('command' in config) {
      // Loaded only for stdio upstreams: the HTTP-only gateway runs where there are no child processes.
      const { StdioClientTransport, getDefaultEnvironment } = await import('@modelcontextprotocol/sdk/client/stdio.js');
      transport = new StdioClientTransport({ command: config.command, args: config.args ?? [], env: { ...getDefaultEnvironment(), ...config.env }, ...(config.cwd ? { cwd: config.cwd } : {}), stderr: 'inherit' });
    } else {
      transport = new StreamableHTTPClientTransport(new URL(config.url), config.headers ? { requestInit: { headers: config.headers } } : {}) as Transport;
    }
    try {
      await client.connect(transport);
    } catch (e) {
      throw new Error(`upstream ${config.name}: could not connect (${'command' in config ? `command ${config.command}` : config.url}): ${messageOf(e)}`, { cause: e });
    }
    this.upstreams.set(config.name, { config, client });
  }

  /** Lists every upstream's tools, names them (prefixing collisions) and registers them with Tollgate. */
  private async refreshTools(): Promise<void> {
    const listed: Array<{ upstream: string; tool: McpTool }> = [];
    for (const [name, { client }] of this.upstreams) {
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
    const counts = new Map<string, number>();
    for (const { tool } of listed) counts.set(tool.name, (counts.get(tool.name) ?? 0) + 1);
    const exposed = new Map<string, GatewayTool>();
    for (const { upstream, tool } of listed) {
      const name = counts.get(tool.name)! > 1 ? `${upstream}__${tool.name}` : tool.name;
      if (exposed.has(name)) throw new Error(`upstream ${upstream}: two tools would be called ${name}; rename an upstream`);
      if (this.askHuman && name === ASK_HUMAN_TOOL) throw new Error(`upstream ${upstream}: its tool ${name} has the name of the built-in askHuman tool; turn askHuman off or rename the upstream's tool`);
      const readOnly = tool.annotations?.readOnlyHint === true;
      // MCP's defaults: a tool that is not read-only may be destructive unless its server says otherwise.
      const destructive = !readOnly && tool.annotations?.destructiveHint !== false;
      exposed.set(name, { name, upstream, upstreamName: tool.name, tool, flags: { isReadOnly: readOnly, destructive } });
    }
    this.exposed = exposed;
    await Promise.all([...exposed.values()].map((t) => this.register(t)));
  }

  /**
   * PUT /v1/tools/{name} with the flags the server's annotations give. They are hints: a tool an admin
   * registered is the admin's (403 for agents), and a policy rule wins over flags anyway.
   */
  private async register(tool: GatewayTool): Promise<void> {
    const name = tollgateName(tool.name);
    try {
      const description = tool.tool.description ?? tool.tool.title ?? tool.tool.annotations?.title;
      await this.options.tollgate.registerTool(name, { ...(description ? { description: description.slice(0, MAX_DESCRIPTION) } : {}), isReadOnly: tool.flags.isReadOnly, destructive: tool.flags.destructive });
      this.registered.add(name);
    } catch (e) {
      if (e instanceof TollgateError && e.code === 'forbidden') {
        this.registered.add(name);
        this.log('info', `tool ${name}: registered by an admin; their flags stand over the server's annotations`);
        return;
      }
      // Not fatal: the proposal carries the flags as annotations, which count for an unregistered tool.
      this.log('warn', `tool ${name}: could not register it with Tollgate (${messageOf(e)}); will try again on its first call`);
    }
  }

  /* ── the MCP server of a session ──────────────────────────────────────────────────────────────────────── */

  private buildServer(session: Session): Server {
    const server = new Server(this.options.serverInfo ?? { name: 'tollgate-mcp-gateway', version: VERSION }, {
      capabilities: { tools: {} },
      instructions: `Tool calls go through Tollgate: some run at once, some wait for a person to approve them. A refused call answers with who refused and why; tell the user.${this.askHuman ? ` When you need an answer only a person has, call ${ASK_HUMAN_TOOL}.` : ''}`,
    });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...this.tools.map((t) => ({ ...t.tool, name: t.name })), ...(this.askHuman ? [ASK_HUMAN] : [])] }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      if (this.askHuman && request.params.name === ASK_HUMAN_TOOL) {
        if (session.pending >= this.limits.pendingCallsPerSession) {
          return refusalResult(`${ASK_HUMAN_TOOL} did not ask: ${this.limits.pendingCallsPerSession} calls of this session already wait for a person; try again once they are answered`);
        }
        session.pending += 1;
        try {
          return await this.ask(session, request.params.arguments ?? {}, {
            signal: extra.signal,
            requestId: extra.requestId,
            progress: progressOf(extra._meta?.progressToken, (n) => extra.sendNotification(n)),
          });
        } finally {
          session.pending -= 1;
        }
      }
      const tool = this.exposed.get(request.params.name);
      if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      if (session.pending >= this.limits.pendingCallsPerSession) {
        return refusalResult(`${tool.name} did not run: ${this.limits.pendingCallsPerSession} calls of this session already wait for a decision; try again once they are decided`);
      }
      session.pending += 1;
      try {
        return await this.call(session, tool, (request.params.arguments ?? {}) as JsonObject, {
          signal: extra.signal,
          requestId: extra.requestId,
          progress: progressOf(extra._meta?.progressToken, (n) => extra.sendNotification(n)),
        });
      } finally {
        session.pending -= 1;
      }
    });
    return server;
  }

  /** Propose → wait (progress, elicitation) → claim → forward → report → the upstream's result, unchanged. */
  private async call(session: Session, tool: GatewayTool, args: JsonObject, ctx: CallContext): Promise<CallToolResult> {
    const name = tollgateName(tool.name);
    if (!this.registered.has(name)) await this.register(tool);
    let handle: ToolCallHandle;
    try {
      const conversation = await this.conversationOf(session);
      const client = session.server.getClientVersion();
      handle = await conversation.propose(
        {
          toolName: name,
          arguments: args,
          annotations: tool.flags,
          reason: `Asked for over MCP${client ? ` by ${client.name}` : ''} (${tool.upstream} server)`,
          display: { title: (tool.tool.title ?? tool.tool.annotations?.title ?? tool.name).slice(0, 500) },
        },
        { signal: ctx.signal },
      );
    } catch (e) {
      return this.failure(tool, e, 'could not be proposed');
    }
    try {
      if (handle.toolCall.status === 'pending') await this.waitForDecision(session, handle, ctx);
      return await handle.run(
        async (approved) => {
          const result = (await this.upstreams.get(tool.upstream)!.client.callTool({ name: tool.upstreamName, arguments: approved }, undefined, {
            signal: ctx.signal,
            timeout: this.limits.toolTimeoutSeconds * 1000,
            resetTimeoutOnProgress: true,
            // The upstream's own progress goes on to the client, in the same sequence as the waiting's.
            onprogress: (p) => ctx.progress(p.message ?? `${tool.name} is running`),
          })) as CallToolResult;
          if (result.isError) throw new UpstreamToolError(result);
          return result;
        },
        { signal: ctx.signal, output: (r) => (r.structuredContent ?? { content: r.content }) as JsonObject },
      );
    } catch (e) {
      if (e instanceof UpstreamToolError) return e.result;
      if (e instanceof ToolCallRejectedError) return refusalResult(`${e.message}. The call did not run.`);
      if (e instanceof TollgateError) return this.failure(tool, e, 'could not be completed');
      throw e; // the upstream's own protocol error (reported as failed by run()) reaches the client as such
    }
  }

  /** Long-polls the decision, telling the client meanwhile; asks in the chat when the requester may decide. */
  private async waitForDecision(session: Session, handle: ToolCallHandle, ctx: CallContext): Promise<void> {
    const call = handle.toolCall;
    const stop = new AbortController();
    const tell = ctx.progress;
    const waiting = `${call.toolName} waits for approval in Tollgate (${call.policy.reason}; approvers: ${call.approval?.approvers.join(', ') ?? 'people'})`;
    tell(waiting);
    const timer = setInterval(() => tell(waiting), this.options.progressIntervalMs ?? 10_000);
    const asking = this.askInChat(session, call, ctx, stop.signal).catch((e) => this.log('warn', `tool call ${call.id}: asking in the chat failed: ${messageOf(e)}`));
    try {
      await handle.wait({ signal: ctx.signal });
    } finally {
      clearInterval(timer);
      stop.abort(); // decided elsewhere (the inbox): the question in the chat is withdrawn
      await asking;
    }
  }

  /**
   * MCP elicitation: a yes/no with an optional reason, when the policy lets the requester decide, the client can
   * be asked, and a person's token is at hand. The answer is decided with that token, `via: "mcp"`; the first
   * decision wins, so one made in the inbox meanwhile stands (409 already_decided).
   */
  private async askInChat(session: Session, call: ToolCall, ctx: CallContext, signal: AbortSignal): Promise<void> {
    if (this.options.elicitation === false || !session.userToken) return;
    // Separation of duties: a requester who may not approve is not asked (they can still reject in the inbox).
    if (!call.approval?.approvers.includes('requester') || call.approval.selfApproval === false) return;
    if (!session.server.getClientCapabilities()?.elicitation) return;
    const expiresAt = Date.parse(call.approval.expiresAt);
    const timeout = Number.isNaN(expiresAt) ? undefined : Math.max(1000, expiresAt - Date.now());
    const args = JSON.stringify(call.arguments);
    const answer = await session.server.elicitInput(
      {
        mode: 'form',
        message: `Allow ${call.toolName} with ${args.length > 1000 ? `${args.slice(0, 1000)}…` : args}? (${call.policy.reason})`,
        requestedSchema: {
          type: 'object',
          properties: {
            approve: { type: 'boolean', title: 'Approve', description: `Run ${call.toolName} now` },
            reason: { type: 'string', title: 'Reason', description: 'Optional: why (recorded in the audit trail)', maxLength: 4000 },
          },
          required: ['approve'],
        },
      },
      { relatedRequestId: ctx.requestId, signal, ...(timeout ? { timeout } : {}) },
    ).catch((e) => {
      if (signal.aborted) return undefined;
      throw e;
    });
    if (!answer || answer.action === 'cancel' || signal.aborted) return; // dismissed: the inbox decides
    const content = answer.content ?? {};
    const reason = typeof content.reason === 'string' && content.reason.trim() ? content.reason.trim().slice(0, 4000) : undefined;
    const approve = answer.action === 'accept' && content.approve === true;
    const person = new Tollgate({ url: this.options.tollgate.url, token: session.userToken, channel: 'mcp', headers: { 'user-agent': 'tollgate-mcp-gateway' } });
    try {
      await person.inbox().decide(call.id, { decision: approve ? 'approve' : 'reject', ...(reason ? { reason } : approve ? {} : { reason: 'declined in the chat' }) });
    } catch (e) {
      if (e instanceof TollgateError && e.code === 'already_decided') return; // someone decided first: theirs stands
      if (e instanceof TollgateError && e.code === 'forbidden') {
        this.log('warn', `tool call ${call.id}: the session's person may not decide it (${e.detail}); it waits for the inbox`);
        return;
      }
      throw e;
    }
  }

  /* ── ask_human ────────────────────────────────────────────────────────────────────────────────────────── */

  /**
   * Asks in the session's conversation and waits for the outcome (progress meanwhile; an elicitation when the user
   * may answer): the answer is the result's text; an expired or cancelled question an `isError` result.
   */
  private async ask(session: Session, args: Record<string, unknown>, ctx: CallContext): Promise<CallToolResult> {
    const input = askInput(args);
    if (typeof input === 'string') return refusalResult(`${ASK_HUMAN_TOOL}: ${input}`);
    const tollgate = this.options.tollgate;
    let question: Question;
    try {
      const conversation = await this.conversationOf(session);
      // The key is made once, before the first attempt: a retried ask never asks twice.
      question = await tollgate.questions.ask(
        conversation.id,
        { text: input.question, ...(input.choices ? { choices: input.choices } : {}), ...(this.askHuman?.timeoutSeconds ? { timeoutSeconds: this.askHuman.timeoutSeconds } : {}), id: newId('ask') },
        { signal: ctx.signal },
      );
    } catch (e) {
      if (e instanceof TollgateError && e.code === 'validation_failed') return refusalResult(`${ASK_HUMAN_TOOL}: Tollgate refused the question: ${e.detail}`);
      return this.failure(ASK_HUMAN_TOOL, e, 'could not be asked');
    }
    const stop = new AbortController();
    const waiting = `Waiting for a person to answer in Tollgate: ${clip(question.text, 200)}`;
    ctx.progress(waiting);
    const timer = setInterval(() => ctx.progress(waiting), this.options.progressIntervalMs ?? 10_000);
    const asking = this.askQuestionInChat(session, question, ctx, stop.signal).catch((e) => this.log('warn', `question ${question.id}: asking in the chat failed: ${messageOf(e)}`));
    try {
      question = await tollgate.questions.wait(question, { signal: ctx.signal });
    } catch (e) {
      if (e instanceof TollgateError) return this.failure(ASK_HUMAN_TOOL, e, 'could not be answered');
      throw e; // aborted: the client cancelled the call
    } finally {
      clearInterval(timer);
      stop.abort(); // answered elsewhere (the inbox), expired or cancelled: the question in the chat is withdrawn
      await asking;
    }
    if (question.status === 'answered' && question.answer) return { content: [{ type: 'text', text: question.answer.text }] };
    if (question.status === 'expired') {
      return refusalResult(`Nobody answered the question in time (it expired after ${question.timeoutSeconds} s): "${clip(question.text, 200)}". Go on without the answer, or tell the user.`);
    }
    return refusalResult(`The question was cancelled in Tollgate${question.reason ? ` (${question.reason})` : ''} and will not be answered: "${clip(question.text, 200)}".`);
  }

  /**
   * MCP elicitation for a question the session's user may answer (`askTo` names the requester) when the client
   * can be asked and a person's token is at hand. The answer is posted with that token, `via: "mcp"`; the first
   * answer wins, so one given in the inbox meanwhile stands (409 already_answered).
   */
  private async askQuestionInChat(session: Session, question: Question, ctx: CallContext, signal: AbortSignal): Promise<void> {
    if (this.options.elicitation === false || !session.userToken) return;
    if (!question.askTo.includes('requester')) return;
    if (!session.server.getClientCapabilities()?.elicitation) return;
    const expiresAt = Date.parse(question.expiresAt);
    const timeout = Number.isNaN(expiresAt) ? undefined : Math.max(1000, expiresAt - Date.now());
    const answerField = question.choices?.length
      ? { type: 'string' as const, title: 'Answer', enum: question.choices }
      : { type: 'string' as const, title: 'Answer', minLength: 1, maxLength: MAX_QUESTION };
    const reply = await session.server
      .elicitInput(
        { mode: 'form', message: question.text, requestedSchema: { type: 'object', properties: { answer: answerField }, required: ['answer'] } },
        { relatedRequestId: ctx.requestId, signal, ...(timeout ? { timeout } : {}) },
      )
      .catch((e) => {
        if (signal.aborted) return undefined;
        throw e;
      });
    if (!reply || reply.action !== 'accept' || signal.aborted) return; // declined or dismissed: the inbox answers
    const answer = typeof reply.content?.answer === 'string' ? reply.content.answer.trim() : '';
    if (!answer) return;
    const person = new Tollgate({ url: this.options.tollgate.url, token: session.userToken, channel: 'mcp', headers: { 'user-agent': 'tollgate-mcp-gateway' } });
    try {
      await person.answer(question.id, answer, { channel: 'mcp' });
    } catch (e) {
      if (e instanceof TollgateError && e.code === 'already_answered') return; // someone answered first: theirs stands
      if (e instanceof TollgateError && (e.code === 'forbidden' || e.code === 'validation_failed')) {
        this.log('warn', `question ${question.id}: the answer in the chat was refused (${e.code}: ${e.detail}); it waits for the inbox`);
        return;
      }
      throw e;
    }
  }

  private conversationOf(session: Session): Promise<TollgateConversation> {
    if (!session.conversation) {
      const client = session.server.getClientVersion();
      session.conversation = this.options.tollgate
        .conversation({
          id: `mcp-${crypto.randomUUID()}`,
          ...(session.user ? { user: session.user } : {}),
          title: `MCP session${client ? ` of ${client.name}` : ''}`.slice(0, 1000),
          metadata: { mcp: { client: client ? { name: client.name, version: client.version } : null, upstreams: [...this.upstreams.keys()] } },
        })
        .catch((e) => {
          session.conversation = undefined; // the next call tries again
          throw e;
        });
    }
    return session.conversation;
  }

  private failure(tool: GatewayTool | string, e: unknown, what: string): CallToolResult {
    if (!(e instanceof TollgateError)) throw e;
    const name = typeof tool === 'string' ? tool : tool.name;
    if (e.code === 'halted') return refusalResult(`${name} was refused: Tollgate is halted (${e.detail}). The call did not run.`);
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

  /** A bearer token is a person's Tollgate token: Tollgate checks it (GET /v1/approvals answers only people). */
  private async verifyPerson(token: string): Promise<{ sub: string; user: ConversationUserInput } | Response> {
    const cached = this.verified.get(token);
    if (cached && cached.until > Date.now()) return cached;
    const claims = jwtClaims(token);
    if (!claims) return problem(401, 'unauthenticated', 'The bearer token is not a Tollgate token (a JWT)');
    const person = new Tollgate({ url: this.options.tollgate.url, token, retry: { maxAttempts: 2 }, headers: { 'user-agent': 'tollgate-mcp-gateway' } });
    try {
      await person.inbox().list({ limit: 1 });
    } catch (e) {
      if (e instanceof TollgateError && (e.status === 401 || e.status === 403)) {
        return problem(e.status, e.code, e.status === 403 ? 'An agent token cannot open an MCP session: use a person\'s Tollgate token' : `Tollgate refused the token: ${e.detail}`);
      }
      this.log('error', `checking a bearer token with Tollgate failed: ${messageOf(e)}`);
      return problem(503, 'unavailable', 'Tollgate could not check the token; try again');
    }
    const user: ConversationUserInput = { id: claims.sub, ...(claims.name ? { name: claims.name } : {}), roles: claims.roles };
    const entry = { sub: claims.sub, user, until: Math.min(Date.now() + AUTH_CACHE_MS, claims.exp ? claims.exp * 1000 : Infinity) };
    if (this.verified.size >= MAX_AUTH_CACHE) this.verified.clear();
    this.verified.set(token, entry);
    return entry;
  }

  private evictIdleSessions(): void {
    const now = Date.now();
    for (const [id, s] of this.sessions) {
      if (s.pending === 0 && now - s.lastSeen > SESSION_IDLE_MS) {
        this.sessions.delete(id);
        void s.server.close();
      }
    }
  }

  private log(level: 'info' | 'warn' | 'error', message: string): void {
    if (this.closed && level === 'info') return;
    this.options.log?.(level, message);
  }
}

interface CallContext {
  signal: AbortSignal;
  requestId: string | number;
  /** Sends MCP progress when the client asked for it (a progressToken); otherwise does nothing. */
  progress(message: string): void;
}

/** An upstream result with `isError`: reported to Tollgate as failed, returned to the client unchanged. */
class UpstreamToolError extends Error {
  constructor(readonly result: CallToolResult) {
    super(textOf(result) || 'the tool reported an error');
  }
}

const VERSION = '0.5.0';

type ProgressNotification = { method: 'notifications/progress'; params: { progressToken: string | number; progress: number; message: string } };

/** Progress must rise with each notification of a request: one counter per call. */
function progressOf(token: string | number | undefined, send: (n: ProgressNotification) => Promise<void>): (message: string) => void {
  let progress = 0;
  return (message) => {
    if (token === undefined) return;
    progress += 1;
    send({ method: 'notifications/progress', params: { progressToken: token, progress, message } }).catch(() => undefined);
  };
}

/** The ask_human arguments checked, or what is wrong with them (said to the model, which can correct itself). */
function askInput(args: Record<string, unknown>): { question: string; choices?: string[] } | string {
  const question = typeof args.question === 'string' ? args.question.trim() : '';
  if (!question) return 'question is required: the text to ask';
  if (question.length > MAX_QUESTION) return `question: at most ${MAX_QUESTION} characters`;
  if (args.choices === undefined || args.choices === null) return { question };
  if (!Array.isArray(args.choices) || args.choices.some((c) => typeof c !== 'string')) return 'choices: must be a list of strings';
  return { question, choices: args.choices as string[] };
}

function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

function refusalResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function textOf(result: CallToolResult): string {
  return result.content
    .filter((c): c is { type: 'text'; text: string } => c.type === 'text')
    .map((c) => c.text)
    .join('\n')
    .slice(0, 16_000);
}

/** Tollgate's tool names are `[A-Za-z0-9_.:-]{1,128}`; MCP's may hold other characters. */
function tollgateName(name: string): string {
  if (TOLLGATE_NAME.test(name)) return name;
  return name.replace(/[^A-Za-z0-9_.:-]/g, '_').slice(0, 128) || 'tool';
}

/** The claims the gateway reads (after Tollgate checked the token): who, to make them the conversation's user. */
function jwtClaims(token: string): { sub: string; name?: string; roles: string[]; exp?: number } | undefined {
  try {
    const part = token.split('.')[1];
    if (!part) return undefined;
    const json = JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(part.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0)))) as Record<string, unknown>;
    if (typeof json.sub !== 'string' || !json.sub) return undefined;
    return {
      sub: json.sub,
      ...(typeof json.name === 'string' ? { name: json.name } : {}),
      roles: Array.isArray(json.roles) ? json.roles.filter((r): r is string => typeof r === 'string').slice(0, 64) : [],
      ...(typeof json.exp === 'number' ? { exp: json.exp } : {}),
    };
  } catch {
    return undefined;
  }
}

function problem(status: number, code: string, detail: string): Response {
  const headers: Record<string, string> = { 'content-type': 'application/problem+json' };
  if (status === 401) headers['www-authenticate'] = 'Bearer';
  return new Response(JSON.stringify({ type: `urn:tollgate:problem:${code}`, title: TITLES[status] ?? 'Error', status, detail, code }), { status, headers });
}

const TITLES: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 503: 'Service Unavailable' };

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
