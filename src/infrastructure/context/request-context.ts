import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/** What one incoming request carries through every layer without threading it by hand. */
export interface RequestContext {
  /** Correlates the request with the audit events it wrote (X-Request-Id). */
  correlationId: string;
}

const als = new AsyncLocalStorage<RequestContext>();

export const RequestContexts = {
  run<T>(ctx: RequestContext, fn: () => T): T {
    return als.run(ctx, fn);
  },
  current(): RequestContext | undefined {
    return als.getStore();
  },
};

const SAFE_ID = /^[A-Za-z0-9_.:\-]{1,128}$/;

/** A caller's X-Request-Id if it is a sensible token, else a fresh one. */
export function correlationIdFrom(header: string | string[] | undefined): string {
  const v = Array.isArray(header) ? header[0] : header;
  return v && SAFE_ID.test(v) ? v : `req_${randomUUID().replace(/-/g, '')}`;
}
