import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import { noteProblem } from '../../infrastructure/observability/access-log';
import type { Response } from 'express';
import { Problem, PROBLEM_CONTENT_TYPE, toProblem } from '../api/problem';

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

export function sendProblem(res: Response, p: Problem): void {
  if (res.headersSent) return;
  if (p.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
  // A problem that knows when to come back says so in the standard header too (429, 503).
  if (typeof p.retryAfter === 'number' && Number.isFinite(p.retryAfter))
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(p.retryAfter))));
  res.status(p.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(p));
}
