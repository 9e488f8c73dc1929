import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { noteProblem } from '../../infrastructure/observability/access-log';
import { Problem, PROBLEM_CONTENT_TYPE, toProblem } from '../api/problem';
import { takeOver } from './raw-response';

/**
 * Every error as a problem, those Fastify raises before a handler runs (body limits, media types) included. The
 * error is not logged here: the request's access line says what went wrong, with the problem's code, and for a
 * 5xx the error itself (its stack included).
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  catch(e: unknown, host: ArgumentsHost): void {
    answerWithProblem(host.switchToHttp().getResponse<FastifyReply>(), e);
  }
}

/**
 * `e` as the answer's problem, noted for the access line. Also Fastify's `frameworkErrors`: what its router refuses
 * before any route or hook runs (a malformed percent-encoding in the path) never reaches Nest's filters.
 */
export function answerWithProblem(reply: FastifyReply, e: unknown): void {
  const p = toProblem(e);
  noteProblem(reply.raw, p.code, p.status >= 500 ? e : undefined);
  sendProblem(reply, p);
}

export function sendProblem(reply: FastifyReply, p: Problem): void {
  const res = reply.raw;
  if (res.headersSent || res.writableEnded) return;
  if (p.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
  // A problem that knows when to come back says so in the standard header too (429, 503).
  if (typeof p.retryAfter === 'number' && Number.isFinite(p.retryAfter))
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(p.retryAfter))));
  const body = JSON.stringify(p);
  // Straight to the Node response: it is right whether or not a handler took the reply over (streams do).
  takeOver(reply);
  res.statusCode = p.status;
  res.setHeader('Content-Type', `${PROBLEM_CONTENT_TYPE}; charset=utf-8`);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
