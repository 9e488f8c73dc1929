import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import { noteProblem } from '../../infrastructure/observability/access-log';
import type { Response } from 'express';
import { QueryFailedError } from 'typeorm';
import { DomainError } from '../../domain/shared/domain-error';
import { Problem, problem, sendProblem } from './problem';

const STATUS_BY_KIND: Record<DomainError['kind'], number> = {
  unauthenticated: 401,
  not_found: 404,
  forbidden: 403,
  invalid: 400,
  conflict: 409,
  unavailable: 503,
  too_large: 413,
  unsupported: 415,
  rate_limited: 429,
};

const HTTP_CODES: Record<number, string> = {
  400: 'validation_failed',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'unavailable',
};

/** Network and server-state failures of PostgreSQL: fail closed with 503, never guess. */
const DB_UNAVAILABLE =
  /ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EPIPE|Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is not established|terminating connection|the database system is (starting up|shutting down)|Cannot use a pool after calling end|Driver not Connected/i;

export function toProblem(e: unknown): Problem {
  if (e instanceof DomainError) {
    const { errors, ...rest } = e.details as { errors?: unknown };
    return problem(STATUS_BY_KIND[e.kind], e.code, e.message, { ...rest, ...(errors ? { errors } : {}) });
  }
  if (e instanceof HttpException) {
    const status = e.getStatus();
    const body = e.getResponse();
    const detail = typeof body === 'string' ? body : ((body as { message?: unknown }).message?.toString() ?? e.message);
    return problem(status, HTTP_CODES[status] ?? `http_${status}`, detail);
  }
  // Class 22 is PostgreSQL's "data exception": input it cannot store (e.g. a NUL byte in a path id).
  const pgCode = (e as { driverError?: { code?: string } })?.driverError?.code;
  if (e instanceof QueryFailedError && pgCode?.startsWith('22')) {
    return problem(400, 'validation_failed', 'The request holds a value the database cannot store');
  }
  if (isDatabaseUnavailable(e)) {
    return problem(503, 'unavailable', 'The database is unavailable; nothing was recorded. Retry later.', {
      retryAfter: DB_RETRY_AFTER_S,
    });
  }
  return problem(500, 'internal', 'An unexpected error occurred; it has been logged.');
}

const DB_REFUSAL_CODES = new Set(['3D000', '55000', '57P01', '57P02', '57P03', '57P04', '57P05']);

/** Seconds a client should wait before retrying while the database is away: long enough not to pile on. */
const DB_RETRY_AFTER_S = 2;

export function isDatabaseUnavailable(e: unknown): boolean {
  const err = e as { code?: string; message?: string; driverError?: { code?: string } };
  const code = err?.driverError?.code ?? err?.code;
  // 08 connection, 28 authorisation, 3D000 no such database, 57P0x shutdown or terminated session,
  // 53xxx out of resources (53300 too many connections), 55000 database not accepting connections.
  if (code && (/^(08|28|53)/.test(code) || DB_REFUSAL_CODES.has(code))) return true;
  if (e instanceof QueryFailedError && !code) return DB_UNAVAILABLE.test(e.message);
  return typeof err?.message === 'string' && DB_UNAVAILABLE.test(err.message);
}

/**
 * Every error as a problem. The error is not logged here: the request's access line says what went wrong, with
 * the problem's code, and for a 5xx the error itself (its stack included).
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  catch(e: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const p = toProblem(e);
    noteProblem(res, p.code, p.status >= 500 ? e : undefined);
    sendProblem(res, p);
  }
}
