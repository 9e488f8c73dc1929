import type { Request, Response } from 'express';
import type { Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { HttpLogger, pinoHttp } from 'pino-http';
import type { Principal } from '../../domain/shared/actor';
import { correlationIdFrom } from '../context/request-context';
import { SERVER_SPAN, traceFieldsOf } from './trace-context';

type LoggedRequest = Request & { principal?: Principal; [SERVER_SPAN]?: Span };
type LoggedResponse = Response;

/** Probes and scrapes: logged at debug while they succeed, so a busy orchestrator does not fill the log. */
const QUIET_PATHS = /^\/(health\/(live|ready)|metrics)$/;
const MAX_PATH = 200;

/**
 * The matched route pattern (`/v1/tool-calls/:id`), never the raw path; undefined when no route matched
 * (Nest answers those 404s from a catch-all `{/*splat}` route, which names nothing).
 */
export function routeOf(req: Request): string | undefined {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' && !path.includes('*') ? `${req.baseUrl}${path}` : undefined;
}

/** What the error handler tells the access log: the problem's code, and the error itself for a 5xx. */
export function noteProblem(res: Response, code: string, error?: unknown): void {
  res.locals.problemCode = code;
  // pino-http reads `res.err` when it writes the request's line.
  if (error !== undefined) res.err = error instanceof Error ? error : new Error(String(error));
}

/**
 * One access log line per request, written when it ends (long-polls and event streams included: once, at the
 * end, with the whole duration): request id (the caller's X-Request-Id or a new one, echoed), method, route
 * pattern, status, duration, tenant and principal (subject and roles; never the token), the problem code of an
 * error, and the trace of the request when tracing is on. 5xx at error with the error and its stack; the rest
 * at info (probes and scrapes at debug). Headers and query strings are not logged at all.
 */
export function accessLog(logger: Logger): HttpLogger<LoggedRequest, LoggedResponse> {
  return pinoHttp<LoggedRequest, LoggedResponse>({
    logger,
    genReqId: (req, res) => {
      const id = correlationIdFrom(req.headers['x-request-id']);
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customAttributeKeys: { reqId: 'req_id' },
    // Lines logged inside a request carry its id only; the request's details are on its access line.
    quietReqLogger: true,
    quietResLogger: true,
    customLogLevel: (req, res, err) => {
      const level =
        err || res.statusCode >= 500 ? 'error' : QUIET_PATHS.test(req.path) && res.statusCode < 400 ? 'debug' : 'info';
      return logger.isLevelEnabled(level) ? level : 'silent'; // 'silent': the line is not even put together
    },
    customSuccessMessage: (req, res, ms) => summary(req, res, ms),
    customErrorMessage: (req, res, _err, ms?: number) => summary(req, res, ms),
    customSuccessObject: (req, res, val: { responseTime: number }) => fields(req, res, val.responseTime),
    customErrorObject: (req, res, err, val: { responseTime: number }) => {
      // pino-http makes up an error for a bare 5xx; only a real one is worth its stack.
      const real = res.err ?? (/^failed with status code \d+$/.test(err.message) ? undefined : err);
      return { ...fields(req, res, val.responseTime), ...(real !== undefined ? { err: real } : {}) };
    },
  });
}

function summary(req: LoggedRequest, res: LoggedResponse, ms: number | undefined): string {
  return `${req.method} ${routeOf(req) ?? pathOf(req)} ${res.statusCode}${ms === undefined ? '' : ` ${ms}ms`}`;
}

function fields(req: LoggedRequest, res: LoggedResponse, ms: number): Record<string, unknown> {
  const route = routeOf(req);
  const p = req.principal;
  const code = res.locals?.problemCode as string | undefined;
  return {
    method: req.method,
    route: route ?? null,
    ...(route ? {} : { path: pathOf(req) }),
    status: res.statusCode,
    duration_ms: ms,
    ...(p ? { tenant: p.tenant, principal: { sub: p.id, roles: p.roles } } : {}),
    ...(code ? { code } : {}),
    // The client went away before the answer was complete (a long-poll or stream it closed, a timeout).
    ...(res.writableFinished ? {} : { client_closed: true }),
    remote_addr: req.ip ?? req.socket?.remoteAddress,
    ...traceFieldsOf(req[SERVER_SPAN]),
  };
}

/** The path without its query string (tokens can hide there), cut short. */
function pathOf(req: Request): string {
  const url = req.originalUrl ?? req.url ?? '';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}…` : path;
}

/** What is known of a finished gRPC call when its access line is written. */
export interface RpcAccess {
  reqId: string;
  /** `/tollgate.v1.Tollgate/GetToolCall` */
  path: string;
  /** The status's name (`OK`, `NOT_FOUND`, …) and number. */
  status: string;
  code: number;
  durationMs: number;
  principal?: Principal;
  /** The problem code of an error (`tollgate-code`). */
  problemCode?: string;
  /** The error itself, for a call that failed on the server's side. */
  error?: unknown;
  level: 'error' | 'info' | 'debug';
  /** The client cancelled the call (or went away) before it ended. */
  clientClosed?: boolean;
  remoteAddr?: string;
  span?: Span;
}

/**
 * One access line per gRPC call, like the HTTP ones: request id (`x-request-id` metadata or a new one), the
 * method's path, its status, duration, tenant and principal (never the token), the problem code of an error,
 * the error of a server-side failure, and the call's trace. `grpc_status`/`grpc_code` rather than `status`,
 * which is HTTP's number on the other lines.
 */
export function logRpc(logger: Logger, a: RpcAccess): void {
  if (!logger.isLevelEnabled(a.level)) return;
  const p = a.principal;
  logger[a.level](
    {
      req_id: a.reqId,
      rpc: a.path,
      grpc_status: a.status,
      grpc_code: a.code,
      duration_ms: a.durationMs,
      ...(p ? { tenant: p.tenant, principal: { sub: p.id, roles: p.roles } } : {}),
      ...(a.problemCode ? { code: a.problemCode } : {}),
      ...(a.clientClosed ? { client_closed: true } : {}),
      ...(a.remoteAddr ? { remote_addr: a.remoteAddr } : {}),
      ...(a.error !== undefined ? { err: a.error instanceof Error ? a.error : new Error(String(a.error)) } : {}),
      ...traceFieldsOf(a.span),
    },
    `gRPC ${a.path} ${a.status} ${a.durationMs}ms`,
  );
}
