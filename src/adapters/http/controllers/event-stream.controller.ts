import { Controller, Get, Headers, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Principal } from '../../../domain/shared/actor';
import { ValidationError } from '../../../domain/shared/domain-error';
import { EventFeed, FeedSubscription } from '../../../infrastructure/streaming/event-feed';
import { CurrentPrincipal } from '../auth';
import { ApiProblems, BEARER_PROBLEMS } from '../../api/dto/problem.dto';
import { WaitSlots } from '../../api/limits';

const HEARTBEAT_MS = 15_000;

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
 */
@ApiTags('events')
@ApiBearerAuth()
@Controller('v1/events')
export class EventStreamController {
  constructor(
    private readonly feed: EventFeed,
    private readonly slots: WaitSlots,
  ) {}

  @Get('stream')
  @ApiOperation({
    operationId: 'streamEvents',
    summary: 'Live events (Server-Sent Events)',
    description:
      "Every audit event of the caller's tenant that its roles may read, as it happens: agents those of their own conversations. Frames are `id: <seq>`, `event: <type>`, `data: <the AuditEvent as JSON>`; `retry: 3000` first, a `: keep-alive` comment every 15 s while idle. Resume after an event with Last-Event-ID (or lastEventId). Counts against the open-wait bounds (429).",
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
    @Headers('last-event-id') header: string | undefined,
    @Query('lastEventId') query: unknown,
    @Res() res: Response,
  ): Promise<void> {
    const resumeAfter = seqFrom('Last-Event-ID', header) ?? seqFrom('lastEventId', query);
    const release = this.slots.acquire(p); // 429 past the per-token or per-tenant bound on open streams and long-polls
    let subscription: FeedSubscription | undefined;
    let heartbeat: NodeJS.Timeout | undefined;
    let gone = false;
    // Registered first, so a client that leaves at any point frees its slot at once.
    res.on('close', () => {
      gone = true;
      clearInterval(heartbeat);
      subscription?.close();
      release();
    });
    let after: number;
    try {
      after = resumeAfter ?? (await this.feed.head(p.tenant));
    } catch (e) {
      release();
      throw e;
    }
    if (gone) return;
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    res.write(`retry: 3000\n: stream of tenant ${p.tenant} after event ${after}\n\n`);

    // Only an idle stream needs a keep-alive; one whose client is not reading gets nothing more queued.
    heartbeat = setInterval(() => res.writableLength === 0 && res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    subscription = this.feed.subscribe(p, after, res);
  }
}
