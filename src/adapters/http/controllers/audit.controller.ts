import { Body, Controller, Get, Header, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import {
  ApiBearerAuth,
  ApiBody,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { PurgeAuditTrailCommand } from '../../../application/commands/purge-audit-trail/purge-audit-trail.command';
import { ApiAuditFilters, ApiWindowQuery } from '../../api/dto/api-params';
import { PurgeAuditRequest } from '../../api/dto/audit.dto';
import { ApiProblems, BEARER_PROBLEMS, BODY_PROBLEMS } from '../../api/dto/problem.dto';
import {
  AuditCheckpointView,
  AuditEventPageView,
  AuditGapsView,
  AuditMetricsView,
  AuditPurgeResultView,
  AuditReviewersView,
  VerifyResultView,
} from '../../api/dto/views.dto';
import { parseBody } from '../../api/validation';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { preferredType } from '../accepts';
import { takeOver } from '../raw-response';
import { once } from 'node:events';
import { AuditFilter } from '../../../application/ports/audit-log.port';
import { decodeAuditCursor } from '../../../application/queries/audit/audit.handlers';
import {
  AuditCheckpointQuery,
  AuditGapsQuery,
  AuditMetricsQuery,
  AuditReviewersQuery,
  ExportAuditEventsQuery,
  ListAuditEventsQuery,
  VerifyAuditTrailQuery,
} from '../../../application/queries/audit/audit.queries';
import { Principal } from '../../../domain/shared/actor';
import { ValidationError } from '../../../domain/shared/domain-error';
import { EVENT_TYPES } from '../../../domain/shared/domain-event';
import { CurrentPrincipal, Roles } from '../auth';
import { enumParam, intParam, MAX_LIMIT, DEFAULT_LIMIT } from '../../api/request-params';
import { toCsvRow, CSV_HEADER } from './audit-csv';

function text(name: string, raw: unknown): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || raw.length > 256)
    throw new ValidationError([{ path: name, message: 'must be given once, at most 256 characters' }]);
  return raw;
}

function date(name: string, raw: unknown): Date | undefined {
  const s = text(name, raw);
  if (s === undefined) return undefined;
  const d = new Date(s);
  if (Number.isNaN(d.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(s))
    throw new ValidationError([{ path: name, message: 'must be an ISO 8601 date or date-time' }]);
  return d;
}

/** `type=A,B` or `type=A&type=B`; each one of the documented event types. */
function types(raw: unknown): string[] | undefined {
  if (raw === undefined || raw === '') return undefined;
  const list = (Array.isArray(raw) ? raw : [raw])
    .flatMap((v) => String(v).split(','))
    .map((t) => t.trim())
    .filter(Boolean);
  const unknown = list.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length > 0)
    throw new ValidationError([{ path: 'type', message: `unknown event type(s): ${unknown.join(', ')}` }]);
  return list;
}

export function auditFilter(tenantId: string, q: Record<string, unknown>): AuditFilter {
  const from = date('from', q.from);
  const to = date('to', q.to);
  if (from && to && from > to) throw new ValidationError([{ path: 'from', message: 'must not be after `to`' }]);
  let afterSeq: number | undefined;
  const cursor = text('cursor', q.cursor);
  if (cursor !== undefined) {
    const seq = decodeAuditCursor(cursor);
    if (seq === null) throw new ValidationError([{ path: 'cursor', message: 'is not a cursor this server issued' }]);
    afterSeq = seq;
  }
  return {
    tenantId,
    conversationId: text('conversationId', q.conversationId),
    toolCallId: text('toolCallId', q.toolCallId),
    toolName: text('toolName', q.toolName),
    actor: text('actor', q.actor),
    types: types(q.type),
    from,
    to,
    afterSeq,
  };
}

function checkpointParam(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || raw.trim() === '' || raw.length > 4096) {
    throw new ValidationError([
      { path: 'checkpoint', message: 'must be given once: the compact JWS of GET /v1/audit/checkpoint' },
    ]);
  }
  return raw.trim();
}

function windowOf(q: Record<string, unknown>): { from?: Date; to?: Date } {
  const { from, to } = auditFilter('', { from: q.from, to: q.to });
  return { from, to };
}

@ApiTags('audit')
@ApiBearerAuth()
@ApiExtraModels(AuditCheckpointView)
@Controller('v1/audit')
@Roles('auditor', 'admin')
export class AuditController {
  constructor(
    private readonly queries: QueryBus,
    private readonly commands: CommandBus,
  ) {}

  @Get('events')
  @ApiOperation({
    operationId: 'listAuditEvents',
    summary: 'List audit events',
    description: 'Auditors and admins. In seq order, filtered; a page of at most `limit`.',
  })
  @ApiAuditFilters(EVENT_TYPES)
  @ApiQuery({
    name: 'limit',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
    description: 'Events per page',
  })
  @ApiOkResponse({ type: AuditEventPageView })
  @ApiProblems(...BEARER_PROBLEMS, 'validation_failed', 'forbidden')
  events(@CurrentPrincipal() p: Principal, @Query() q: Record<string, unknown>) {
    const filter = auditFilter(p.tenant, q);
    return this.queries.execute(
      new ListAuditEventsQuery(filter, intParam('limit', q.limit, 1, MAX_LIMIT, DEFAULT_LIMIT)),
    );
  }

  /** Streamed in batches with backpressure: a 10-million-row export never sits in memory. */
  @Get('export')
  @ApiOperation({
    operationId: 'exportAuditEvents',
    summary: 'Export audit events as a file',
    description:
      'Auditors and admins. The whole selection, streamed: NDJSON (one event per line, as listed) or CSV (`actor` and `data` as JSON columns; cells a spreadsheet would run as formulas start with a quote).',
  })
  @ApiQuery({
    name: 'format',
    required: false,
    schema: { type: 'string', enum: ['ndjson', 'csv'], default: 'ndjson' },
    description: 'The file format',
  })
  @ApiAuditFilters(EVENT_TYPES)
  @ApiOkResponse({
    description: 'The events, as an attachment',
    content: {
      'application/x-ndjson': { schema: { type: 'string', description: 'One AuditEvent as JSON per line' } },
      'text/csv': { schema: { type: 'string', description: `RFC 4180, a header row first: ${CSV_HEADER.trim()}` } },
    },
  })
  @ApiProblems(...BEARER_PROBLEMS, 'validation_failed', 'forbidden')
  async export(
    @CurrentPrincipal() p: Principal,
    @Query() q: Record<string, unknown>,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const format = enumParam('format', q.format, ['ndjson', 'csv'] as const) ?? 'ndjson';
    const filter = auditFilter(p.tenant, q);
    const batches = await this.queries.execute(new ExportAuditEventsQuery(filter));
    const iterator = batches[Symbol.asyncIterator]();
    const first = await iterator.next(); // a failure here still answers as a problem
    const res = takeOver(reply); // written with backpressure: each batch waits for 'drain'
    res.statusCode = 200;
    res.setHeader('Content-Type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
    res.setHeader('Content-Disposition', `attachment; filename="tollgate-audit-${p.tenant}.${format}"`);
    res.setHeader('Cache-Control', 'no-store');
    const write = async (chunk: string) => {
      if (!res.write(chunk)) await once(res, 'drain');
    };
    try {
      if (format === 'csv') await write(CSV_HEADER);
      for (let r = first; !r.done; r = await iterator.next()) {
        if (res.destroyed) return;
        await write(r.value.map((e) => (format === 'csv' ? toCsvRow(e) : JSON.stringify(e) + '\n')).join(''));
      }
      res.end();
    } catch {
      res.destroy(); // headers are gone: cutting the stream is the only honest signal left
    }
  }

  /** With `checkpoint` (a JWS from GET checkpoint, kept outside the database), also checks the chain still reaches it. */
  @Get('verify')
  @ApiOperation({
    operationId: 'verifyAuditTrail',
    summary: 'Verify the hash chain',
    description:
      "Auditors and admins. Recomputes the tenant's chain from the first kept event; with `checkpoint`, also checks that the chain still reaches it with the same hash. Without `checkpoint`, the latest one the service wrote to its file sink (TOLLGATE_CHECKPOINT_SINK) is used and named (`checkpoint.source: sink`); `noCheckpoint` says why none could be (an https sink, which is not read back; a sink that cannot be read). No sink, or none written yet for the tenant: the answer is as without a sink.",
  })
  @ApiQuery({
    name: 'checkpoint',
    required: false,
    type: 'string',
    description:
      'A compact JWS answered earlier by GET /v1/audit/checkpoint (or written to the sink), kept outside the database; default: the latest in the file sink',
  })
  @ApiOkResponse({ type: VerifyResultView, description: 'ok: false names the first bad seq and what is wrong there' })
  @ApiProblems(...BEARER_PROBLEMS, 'validation_failed', 'forbidden')
  verify(@CurrentPrincipal() p: Principal, @Query() q: Record<string, unknown>) {
    return this.queries.execute(new VerifyAuditTrailQuery(p.tenant, checkpointParam(q.checkpoint)));
  }

  /** A compact JWS (`application/jose`); with `Accept: application/json`, `{jws, tenant, seq, hash, at}`. */
  @Get('checkpoint')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'getAuditCheckpoint',
    summary: "Sign the chain's head",
    description:
      'Auditors and admins. A compact JWS over {tenant, seq, hash, at} with the receipt key: keep it outside the database, and verify against it later.',
  })
  @ApiOkResponse({
    description: 'The JWS (application/jose); with Accept: application/json, the JWS and its claims',
    content: {
      'application/jose': { schema: { type: 'string', description: 'Compact JWS, typ tollgate-checkpoint+jwt' } },
      'application/json': { schema: { $ref: getSchemaPath(AuditCheckpointView) } },
    },
  })
  @ApiProblems(...BEARER_PROBLEMS, 'forbidden')
  async checkpoint(
    @CurrentPrincipal() p: Principal,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const cp = await this.queries.execute(new AuditCheckpointQuery(p.tenant));
    if (preferredType(req.headers.accept, ['application/jose', 'application/json']) === 'application/json')
      reply.type('application/json; charset=utf-8').send(JSON.stringify(cp));
    else reply.type('application/jose; charset=utf-8').send(cp.jws);
  }

  /** Retention (admins only: auditors change nothing). Refuses a cut-off younger than six months; the purge is itself an event. */
  @Post('purge')
  @HttpCode(200)
  @Roles('admin')
  @ApiOperation({
    operationId: 'purgeAuditTrail',
    summary: 'Purge audit events older than a date',
    description:
      'Admins only. Removes the oldest events before `before`, which must be at least six months ago, and records an AuditPurged event that verify continues from.',
  })
  @ApiBody({
    type: PurgeAuditRequest,
    examples: {
      retention: {
        summary: 'Keep two years',
        value: { before: '2024-01-01T00:00:00Z', reason: 'retention: two years' },
      },
    },
  })
  @ApiOkResponse({ type: AuditPurgeResultView })
  @ApiProblems(...BEARER_PROBLEMS, ...BODY_PROBLEMS, 'forbidden')
  purge(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    const dto = parseBody(PurgeAuditRequest, body);
    const before = date('before', dto.before)!;
    return this.commands.execute(new PurgeAuditTrailCommand(p, before, dto.reason));
  }

  @Get('metrics')
  @ApiOperation({
    operationId: 'getAuditMetrics',
    summary: 'Decision counts and approval latency',
    description: 'Auditors and admins, over the window; pendingApprovals is now, whatever the window.',
  })
  @ApiWindowQuery()
  @ApiOkResponse({ type: AuditMetricsView })
  @ApiProblems(...BEARER_PROBLEMS, 'validation_failed', 'forbidden')
  metrics(@CurrentPrincipal() p: Principal, @Query() q: Record<string, unknown>) {
    return this.queries.execute(new AuditMetricsQuery(p.tenant, windowOf(q)));
  }

  @Get('gaps')
  @ApiOperation({
    operationId: 'getAuditGaps',
    summary: 'Where human oversight failed or could fail',
    description:
      'Auditors and admins. HITL-EXEC, HITL-02, HITL-03 and RUN-01 from the events in the window, HITL-01 from the current policy and registry.',
  })
  @ApiWindowQuery()
  @ApiOkResponse({ type: AuditGapsView })
  @ApiProblems(...BEARER_PROBLEMS, 'validation_failed', 'forbidden')
  gaps(@CurrentPrincipal() p: Principal, @Query() q: Record<string, unknown>) {
    return this.queries.execute(new AuditGapsQuery(p.tenant, windowOf(q)));
  }

  @Get('reviewers')
  @ApiOperation({
    operationId: 'getAuditReviewers',
    summary: 'How each person decides: approve rate, time to decide',
    description:
      "Auditors and admins, over the window: per person who decided held calls, their decisions, approvals, rejections, approve rate, median and p90 time to decide, and how many were made within 2 s of the card being shown. Time to decide runs from when the server first showed that person the card (GET of the call, the approvals list, the action-link page; the request time when never) to the decision. `rubberStamping` is HITL-03's test: at least 10 approvals, half or more of them within 2 s.",
  })
  @ApiWindowQuery()
  @ApiOkResponse({ type: AuditReviewersView })
  @ApiProblems(...BEARER_PROBLEMS, 'validation_failed', 'forbidden')
  reviewers(@CurrentPrincipal() p: Principal, @Query() q: Record<string, unknown>) {
    return this.queries.execute(new AuditReviewersQuery(p.tenant, windowOf(q)));
  }
}
