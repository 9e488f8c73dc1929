import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import { context, type Span } from '@opentelemetry/api';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Principal } from '../../domain/shared/actor';
import { SERVER_SPAN, traceFieldsOf } from './trace-context';

type LoggedRequest = FastifyRequest & { principal?: Principal };
/** What the error handler notes on the response for its access line. */
const PROBLEM = Symbol('tollgate.problem');
type NotedResponse = ServerResponse & { [PROBLEM]?: { code: string; error?: Error } };

/** Probes and scrapes: logged at debug while they succeed, so a busy orchestrator does not fill the log. */
const QUIET_PATHS = /^\/(health\/(live|ready)|metrics)$/;
const MAX_PATH = 200;

/**
 * The matched route pattern (`/v1/tool-calls/:id`), never the raw path; undefined when no route matched
 * (Fastify's not-found handler, which names nothing) or the route is a wildcard.
 */
export function routeOf(req: FastifyRequest): string | undefined {
  const url = req.routeOptions.url;
  return typeof url === 'string' && !url.includes('*') ? url : undefined;
}

/** What the error handler tells the access log: the problem's code, and the error itself for a 5xx. */
export function noteProblem(res: ServerResponse, code: string, error?: unknown): void {
  (res as NotedResponse)[PROBLEM] = {
    code,
    error: error === undefined ? undefined : error instanceof Error ? error : new Error(String(error)),
  };
}

/**
 * One access log line per request, written when it ends (long-polls and event streams included: once, at the
 * end, with the whole duration): request id (the caller's X-Request-Id or a new one, echoed), method, route
 * pattern, status, duration, tenant and principal (subject and roles; never the token), the problem code of an
 * error, and the trace of the request when tracing is on. 5xx at error with the error and its stack; the rest
 * at info (probes and scrapes at debug). Headers and query strings are not logged at all.
 *
 * A Fastify `onRequest` hook. The line is written on the response's `close`, which also comes when the client
 * leaves first (Fastify's own `onResponse` does not). With tracing on, it names the route on the server span.
 */
export function accessLog(logger: Logger): (req: FastifyRequest, reply: FastifyReply, done: () => void) => void {
  return (req, reply, done) => {
    const start = process.hrtime.bigint();
    const route = routeOf(req);
    if (route !== undefined) {
      // The HTTP instrumentation names the server span and sets `http.route` from this when the response ends.
      const rpc = getRPCMetadata(context.active());
      if (rpc?.type === RPCType.HTTP) rpc.route = route;
    }
    reply.raw.once('close', () => {
      const res = reply.raw as NotedResponse;
      const status = res.statusCode;
      const noted = res[PROBLEM];
      const level =
        noted?.error || status >= 500 ? 'error' : status < 400 && QUIET_PATHS.test(pathOf(req.raw)) ? 'debug' : 'info';
      if (!logger.isLevelEnabled(level)) return; // the line is not even put together
      const ms = Math.round(Number(process.hrtime.bigint() - start) / 1e6);
      const p = (req as LoggedRequest).principal;
      const path = route === undefined ? pathOf(req.raw) : undefined;
      logger[level](
        {
          req_id: req.id,
          method: req.method,
          route: route ?? null,
          ...(path !== undefined ? { path } : {}),
          status,
          duration_ms: ms,
          ...(p ? { tenant: p.tenant, principal: { sub: p.id, roles: p.roles } } : {}),
          ...(noted ? { code: noted.code } : {}),
          // The client went away before the answer was complete (a long-poll or stream it closed, a timeout).
          ...(res.writableFinished ? {} : { client_closed: true }),
          remote_addr: req.ip ?? req.socket?.remoteAddress,
          ...traceFieldsOf((req.raw as IncomingMessage & { [SERVER_SPAN]?: Span })[SERVER_SPAN]),
          ...(noted?.error ? { err: noted.error } : {}),
        },
        `${req.method} ${route ?? path} ${status} ${ms}ms`,
      );
    });
    done();
  };
}

/** The path without its query string (tokens can hide there), cut short. */
function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '';
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
