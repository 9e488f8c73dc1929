import type { Response } from 'express';

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

export function sendProblem(res: Response, p: Problem): void {
  if (res.headersSent) return;
  if (p.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
  // A problem that knows when to come back says so in the standard header too (429, 503).
  if (typeof p.retryAfter === 'number' && Number.isFinite(p.retryAfter))
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(p.retryAfter))));
  res.status(p.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(p));
}
