/**
 * The gateway's Streamable HTTP sessions: each one person's, at most `limits.sessions` in all and
 * `limits.sessionsPerUser` of one person, so nobody can fill the gateway and lock the others out.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { Transport } from '@modelcontextprotocol/server';
import type { GatewayLimits } from '../mcp-config.js';
import { problem, type Session } from './shared.js';

const SESSION_IDLE_MS = 30 * 60_000;

export class HttpSessions {
  private readonly open = new Map<string, Session>();
  /**
   * Sessions whose initialize is being served: they count against both limits from the moment they are let in,
   * since a session joins `open` only after an await, and concurrent initializes would all pass the check.
   */
  private readonly starting = new Set<Session>();

  constructor(private readonly limits: Pick<GatewayLimits, 'sessions' | 'sessionsPerUser'>) {}

  /** The session of this id, if it is `sub`'s: another person's session is as good as unknown. */
  of(id: string, sub: string): Session | undefined {
    const session = this.open.get(id);
    return session?.sub === sub ? session : undefined;
  }

  /**
   * Serves an initialize request of `sub` on a transport of its own, if there is room (see `makeRoom`); the
   * session `create` makes is kept once initialized. Its place is taken before the first await and given back
   * once the start is over: by then it is open, or it never will be (refused by the transport, closed, failed).
   */
  async start(sub: string, create: () => Session, request: Request, body: unknown): Promise<Response> {
    const full = this.makeRoom(sub);
    if (full) return full;
    const session = create();
    this.starting.add(session);
    try {
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
      const response = await transport.handleRequest(request, { parsedBody: body });
      if (!transport.sessionId) void session.server.close(); // refused before it began (406, 415…): nothing to keep
      return response;
    } catch (e) {
      void session.server.close();
      throw e;
    } finally {
      this.starting.delete(session);
    }
  }

  async closeAll(): Promise<void> {
    const sessions = [...this.open.values(), ...this.starting];
    this.open.clear();
    this.starting.clear();
    await Promise.allSettled(sessions.map((s) => s.server.close()));
  }

  /**
   * Room for one more session of `sub`, counting those starting: idle sessions past their time are closed, and a
   * person at their own limit loses their least recently used open session with nothing waiting. 429 when all of
   * theirs wait for a person or are starting, 503 when the gateway is full.
   */
  private makeRoom(sub: string): Response | undefined {
    const now = Date.now();
    for (const [id, s] of this.open) if (s.pending === 0 && now - s.lastSeen > SESSION_IDLE_MS) this.close(id, s);
    const theirs = [...this.open].filter(([, s]) => s.sub === sub);
    const starting = [...this.starting].filter((s) => s.sub === sub).length;
    if (theirs.length + starting >= this.limits.sessionsPerUser) {
      const idle = theirs.filter(([, s]) => s.pending === 0).sort(([, a], [, b]) => a.lastSeen - b.lastSeen)[0];
      if (!idle) {
        return starting
          ? problem(
              429,
              'rate_limited',
              `You have ${this.limits.sessionsPerUser} MCP sessions open or starting, none idle; try again once they have started`,
              { retryAfter: 1 },
            )
          : problem(
              429,
              'rate_limited',
              `You have ${this.limits.sessionsPerUser} MCP sessions open, all waiting for people; close one or try later`,
              { retryAfter: 60 },
            );
      }
      this.close(...idle);
    }
    if (this.open.size + this.starting.size >= this.limits.sessions)
      return problem(
        503,
        'unavailable',
        `Too many MCP sessions open (${this.limits.sessions}); close one or try later`,
      );
    return undefined;
  }

  private close(id: string, s: Session): void {
    this.open.delete(id);
    void s.server.close();
  }
}
