import { Body, Controller, Get, Header, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiProduces, ApiQuery, ApiTags } from '@nestjs/swagger';
import { PurgeAuditTrailCommand } from '../../../application/commands/purge-audit-trail/purge-audit-trail.command';
import { PurgeAuditRequest } from '../dto/audit.dto';
import { parseBody } from '../validation';
import type { Request, Response } from 'express';
import { once } from 'node:events';
import { AuditEvent, AuditFilter } from '../../../application/ports/audit-log.port';
import { decodeAuditCursor } from '../../../application/queries/audit/audit.handlers';
import {
  AuditCheckpointQuery, AuditGapsQuery, AuditMetricsQuery, ExportAuditEventsQuery, ListAuditEventsQuery, VerifyAuditTrailQuery,
} from '../../../application/queries/audit/audit.queries';
import { Principal } from '../../../domain/shared/actor';
import { ValidationError } from '../../../domain/shared/domain-error';
import { EVENT_TYPES } from '../../../domain/shared/domain-event';
import { CurrentPrincipal, Roles } from '../auth';
import { enumParam, intParam, MAX_LIMIT, DEFAULT_LIMIT } from '../request-params';
import { toCsvRow, CSV_HEADER } from './audit-csv';

function text(name: string, raw: unknown): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || raw.length > 256) throw new ValidationError([{ path: name, message: 'must be given once, at most 256 characters' }]);
  return raw;
}

function date(name: string, raw: unknown): Date | undefined {
  const s = text(name, raw);
  if (s === undefined) return undefined;
  const d = new Date(s);
  if (Number.isNaN(d.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(s)) throw new ValidationError([{ path: name, message: 'must be an ISO 8601 date or date-time' }]);
  return d;
}

/** `type=A,B` or `type=A&type=B`; each one of the documented event types. */
function types(raw: unknown): string[] | undefined {
  if (raw === undefined || raw === '') return undefined;
  const list = (Array.isArray(raw) ? raw : [raw]).flatMap((v) => String(v).split(',')).map((t) => t.trim()).filter(Boolean);
  const unknown = list.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length > 0) throw new ValidationError([{ path: 'type', message: `unknown event type(s): ${unknown.join(', ')}` }]);
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
    throw new ValidationError([{ path: 'checkpoint', message: 'must be given once: the compact JWS of GET /v1/audit/checkpoint' }]);
  }
  return raw.trim();
}

function windowOf(q: Record<string, unknown>): { from?: Date; to?: Date } {
  const { from, to } = auditFilter('', { from: q.from, to: q.to });
  return { from, to };
}

@ApiTags('audit')
@ApiBearerAuth()
@Controller('v1/audit')
@Roles('auditor', 'admin')
export class AuditController {
  constructor(private readonly queries: QueryBus, private readonly commands: CommandBus) {}

  @Get('events')
  @ApiQuery({ name: 'type', required: false, description: `comma-separated: ${EVENT_TYPES.join(', ')}` })
  events(@CurrentPrincipal() p: Principal, @Query() q: Record<string, unknown>) {
    const filter = auditFilter(p.tenant, q);
    return this.queries.execute(new ListAuditEventsQuery(filter, intParam('limit', q.limit, 1, MAX_LIMIT, DEFAULT_LIMIT)));
  }

  /** Streamed in batches with backpressure: a 10-million-row export never sits in memory. */
  @Get('export')
  @ApiProduces('application/x-ndjson', 'text/csv')
  async export(@CurrentPrincipal() p: Principal, @Query() q: Record<string, unknown>, @Res() res: Response): Promise<void> {
    const format = enumParam('format', q.format, ['ndjson', 'csv'] as const) ?? 'ndjson';
    const filter = auditFilter(p.tenant, q);
    const batches: AsyncIterable<AuditEvent[]> = await this.queries.execute(new ExportAuditEventsQuery(filter));
    const iterator = batches[Symbol.asyncIterator]();
    const first = await iterator.next(); // a failure here still answers as a problem
    res.status(200);
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
  @ApiQuery({ name: 'checkpoint', required: false, description: 'a compact JWS answered earlier by GET /v1/audit/checkpoint' })
  verify(@CurrentPrincipal() p: Principal, @Query() q: Record<string, unknown>) {
    return this.queries.execute(new VerifyAuditTrailQuery(p.tenant, checkpointParam(q.checkpoint)));
  }

  /** A compact JWS (`application/jose`); with `Accept: application/json`, `{jws, tenant, seq, hash, at}`. */
  @Get('checkpoint')
  @Header('Cache-Control', 'no-store')
  @ApiProduces('application/jose', 'application/json')
  async checkpoint(@CurrentPrincipal() p: Principal, @Req() req: Request, @Res() res: Response): Promise<void> {
    const cp = await this.queries.execute(new AuditCheckpointQuery(p.tenant));
    if (req.accepts(['application/jose', 'application/json']) === 'application/json') res.json(cp);
    else res.type('application/jose').send(cp.jws);
  }

  /** Retention (admins only: auditors change nothing). Refuses a cut-off younger than six months; the purge is itself an event. */
  @Post('purge')
  @HttpCode(200)
  @Roles('admin')
  @ApiBody({ type: PurgeAuditRequest })
  purge(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    const dto = parseBody(PurgeAuditRequest, body);
    const before = date('before', dto.before)!;
    return this.commands.execute(new PurgeAuditTrailCommand(p, before, dto.reason));
  }

  @Get('metrics')
  metrics(@CurrentPrincipal() p: Principal, @Query() q: Record<string, unknown>) {
    return this.queries.execute(new AuditMetricsQuery(p.tenant, windowOf(q)));
  }

  @Get('gaps')
  gaps(@CurrentPrincipal() p: Principal, @Query() q: Record<string, unknown>) {
    return this.queries.execute(new AuditGapsQuery(p.tenant, windowOf(q)));
  }
}
