import type { FastifyReply } from 'fastify';
import type { ServerResponse } from 'node:http';

/**
 * A handler that writes the Node response itself (a stream, a download, a page) takes the reply over: Fastify
 * then sends nothing of its own, and the headers set on the reply so far (rate limits, `@Header()`) go along.
 */
export function takeOver(reply: FastifyReply): ServerResponse {
  const res = reply.raw;
  if (!res.headersSent)
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) res.setHeader(name, value);
  if (!reply.sent) reply.hijack();
  return res;
}
