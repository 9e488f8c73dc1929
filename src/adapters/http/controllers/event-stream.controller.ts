import { Controller, Get, Headers, Inject, Optional, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Principal } from '../../../domain/shared/actor';
import { ValidationError } from '../../../domain/shared/domain-error';
import { EventFeed, FeedSubscription } from '../../../infrastructure/streaming/event-feed';
import { WebSessions } from '../../../infrastructure/auth/web-sessions';
import { Credential, CurrentCredential, CurrentPrincipal, WEB_SESSIONS } from '../auth';
import { ApiProblems, BEARER_PROBLEMS } from '../../api/dto/problem.dto';
import { WaitSlots } from '../../api/limits';
import { takeOver } from '../raw-response';

/** How often an idle stream gets a keep-alive, and a session's stream looks whether its session still lives. */
const HEARTBEAT_MS = 15_000;
/** setTimeout's longest wait; a later deadline is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function seqFrom(name: string, raw: unknown): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^\d{1,15}$/.test(raw))
    throw new ValidationError([{ path: name, message: 'must be the id of an event (its seq)' }]);
  return Number(raw);
}

/**
 * Server-Sent Events of the caller's tenant (CONTRACT §10): frames `id: <seq>`, `event: <type>`,
 * `data: <event JSON>`. `Last-Event-ID` (or `?lastEventId=`, for a browser's first connect) resumes after
 * that event; without it the stream starts with what happens next. A comment every 15 s keeps proxies open.
 * The feed writes with backpressure and shows the caller only what its roles may read over REST.
 *
 * A stream outlives the request that was checked when it opened, so it ends (and the client, reconnecting, gets
 * 401) once what let it in has ended: a bearer token at its `exp`; a session when signed out here (at once), at its
 * lifetime or idle deadline, or — signed out on another instance — at the next heartbeat's look at it.
 */
@ApiTags('events')
@ApiBearerAuth()
@Controller('v1/events')
export class EventStreamController {
  constructor(
    private readonly feed: EventFeed,
    private readonly slots: WaitSlots,
    /** Single sign-on's sessions, null without it. */
    @Optional() @Inject(WEB_SESSIONS) private readonly sessions: WebSessions | null = null,
  ) {}

  @Get('stream')
  @ApiOperation({
    operationId: 'streamEvents',
    summary: 'Live events (Server-Sent Events)',
    description:
      "Every audit event of the caller's tenant that its roles may read, as it happens: agents those of their own conversations. Frames are `id: <seq>`, `event: <type>`, `data: <the AuditEvent as JSON>`; `retry: 3000` first, a `: keep-alive` comment every 15 s while idle. Resume after an event with Last-Event-ID (or lastEventId). Counts against the open-wait bounds (429). The stream ends when the caller's token is no longer accepted or its session is signed out, expires or idles out; reconnecting then gets 401.",
  })
  @ApiHeader({
    name: 'last-event-id',
    required: false,
    description: 'Last-Event-ID: the seq of the last event received; the stream resumes after it',
    schema: { type: 'string', pattern: '^[0-9]{1,15}$' },
  })
  @ApiQuery({
    name: 'lastEventId',
    required: false,
    description: 'The same as Last-Event-ID, for a first connect that cannot set headers',
    schema: { type: 'string', pattern: '^[0-9]{1,15}$' },
  })
  @ApiOkResponse({
    description: 'An endless stream of events',
    content: {
      'text/event-stream': {
        schema: { type: 'string', description: 'Server-Sent Events' },
        example: 'id: 42\nevent: ToolCallApproved\ndata: {"seq":42,"type":"ToolCallApproved"}\n\n',
      },
    },
  })
  @ApiProblems(...BEARER_PROBLEMS, 'waits_limited', 'validation_failed')
  async stream(
    @CurrentPrincipal() p: Principal,
    @CurrentCredential() credential: Credential | undefined,
    @Headers('last-event-id') header: string | undefined,
    @Query('lastEventId') query: unknown,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const res = reply.raw; // the stream is written to the Node response, with its backpressure
    const resumeAfter = seqFrom('Last-Event-ID', header) ?? seqFrom('lastEventId', query);
    const release = this.slots.acquire(p); // 429 past the per-token or per-tenant bound on open streams and long-polls
    let subscription: FeedSubscription | undefined;
    let heartbeat: NodeJS.Timeout | undefined;
    let deadline: NodeJS.Timeout | undefined;
    let gone = false;
    // Registered first, so a client that leaves at any point frees its slot at once.
    res.on('close', () => {
      gone = true;
      clearInterval(heartbeat);
      clearTimeout(deadline);
      unwatch();
      subscription?.close();
      release();
    });
    // Nothing more is delivered from the moment the credential is found ended; what is queued already goes out.
    const end = () => {
      if (gone) return;
      gone = true;
      subscription?.close();
      if (res.headersSent) res.end();
      else res.destroy();
    };
    const session = credential?.kind === 'session' && this.sessions ? this.sessions : undefined;
    const unwatch = session && credential?.kind === 'session' ? session.onEnd(credential.cookie, end) : () => undefined;
    const endAt = (at: Date) => {
      clearTimeout(deadline);
      deadline = setTimeout(() => void recheck(), Math.max(0, Math.min(at.getTime() - Date.now(), MAX_TIMER_MS)));
      deadline.unref();
    };
    const recheck = async () => {
      if (gone || !credential) return;
      let until: Date | undefined;
      if (credential.kind === 'bearer') until = credential.expiresAt;
      else if (session) {
        try {
          until = await session.liveUntil(credential.cookie);
        } catch {
          until = undefined; // fails closed: the client reconnects, and the guard decides afresh
        }
        if (until === undefined) return end();
      }
      if (until === undefined || gone) return;
      if (until.getTime() <= Date.now()) return end();
      endAt(until);
    };
    let after: number;
    try {
      after = resumeAfter ?? (await this.feed.head(p.tenant));
    } catch (e) {
      release();
      throw e;
    }
    if (gone) return;
    takeOver(reply);
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    res.write(`retry: 3000\n: stream of tenant ${p.tenant} after event ${after}\n\n`);

    // Only an idle stream needs a keep-alive; one whose client is not reading gets nothing more queued. A session
    // is looked at again each time: one signed out on another instance ends no later than this.
    heartbeat = setInterval(() => {
      if (res.writableLength === 0) res.write(': keep-alive\n\n');
      if (session) void recheck();
    }, HEARTBEAT_MS);
    subscription = this.feed.subscribe(p, after, res);
    void recheck();
  }
}
