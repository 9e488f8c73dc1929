/**
 * The gateway's Streamable HTTP sessions: each one person's, at most `limits.sessions` in all and
 * `limits.sessionsPerUser` of one person, so nobody can fill the gateway and lock the others out.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { GatewayLimits } from '../mcp-config.js';
import { problem, type Session } from './shared.js';

const SESSION_IDLE_MS = 30 * 60_000;

export class HttpSessions {
  private readonly open = new Map<string, Session>();

  constructor(private readonly limits: Pick<GatewayLimits, 'sessions' | 'sessionsPerUser'>) {}

  /** The session of this id, if it is `sub`'s: another person's session is as good as unknown. */
  of(id: string, sub: string): Session | undefined {
    const session = this.open.get(id);
    return session?.sub === sub ? session : undefined;
  }

  /**
   * Room for one more session of `sub`: idle sessions past their time are closed, and a person at their own limit
   * loses their least recently used session with nothing waiting. 429 when all of theirs wait for a person, 503
   * when the gateway is full.
   */
  makeRoom(sub: string): Response | undefined {
    const now = Date.now();
    for (const [id, s] of this.open) if (s.pending === 0 && now - s.lastSeen > SESSION_IDLE_MS) this.close(id, s);
    const theirs = [...this.open].filter(([, s]) => s.sub === sub);
    if (theirs.length >= this.limits.sessionsPerUser) {
      const idle = theirs.filter(([, s]) => s.pending === 0).sort(([, a], [, b]) => a.lastSeen - b.lastSeen)[0];
      if (!idle) return problem(429, 'rate_limited', `You have ${this.limits.sessionsPerUser} MCP sessions open, all waiting for people; close one or try later`, { retryAfter: 60 });
      this.close(...idle);
    }
    if (this.open.size >= this.limits.sessions) return problem(503, 'unavailable', `Too many MCP sessions open (${this.limits.sessions}); close one or try later`);
    return undefined;
  }

  /** Serves a session's initialize request on a transport of its own; the session is kept once initialized. */
  async start(session: Session, request: Request, body: unknown): Promise<Response> {
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => void this.open.set(id, session),
      onsessionclosed: (id) => void this.open.delete(id),
    });
    session.transport = transport;
    transport.onclose = () => {
      if (transport.sessionId) this.open.delete(transport.sessionId);
    };
    await session.server.connect(transport as Transport);
    return transport.handleRequest(request, { parsedBody: body });
  }

  async closeAll(): Promise<void> {
    const sessions = [...this.open.values()];
    this.open.clear();
    await Promise.allSettled(sessions.map((s) => s.server.close()));
  }

  private close(id: string, s: Session): void {
    this.open.delete(id);
    void s.server.close();
  }
}
