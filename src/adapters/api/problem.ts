import { HttpException } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { DomainError } from '../../domain/shared/domain-error';

// Problems (RFC 9457) are the one error shape: REST sends them as they are, gRPC tells them as a status and trailers.

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  [extra: string]: unknown;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** RFC 9457 problem details; `code` is the stable, machine-readable part. */
export function problem(status: number, code: string, detail: string, extra: Record<string, unknown> = {}): Problem {
  const core = { type: `urn:tollgate:problem:${code}`, title: TITLES[status] ?? 'Error', status, detail, code };
  // Extras follow the standard members and never shadow them.
  return { ...core, ...Object.fromEntries(Object.entries(extra).filter(([k]) => !(k in core))) };
}

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
  // Fastify's own refusals before a handler runs (body limit, media type, a malformed URL) carry their status.
  const status = (e as { statusCode?: unknown })?.statusCode;
  if (e instanceof Error && e.name === 'FastifyError' && typeof status === 'number' && status >= 400 && status < 500)
    return problem(status, HTTP_CODES[status] ?? `http_${status}`, e.message);
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
