import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { correlationIdFrom, RequestContexts } from '../../infrastructure/context/request-context';

/** Fastify's `genReqId`: the request's id is its correlation id, the caller's X-Request-Id or a new one. */
export function requestIdOf(req: IncomingMessage): string {
  return correlationIdFrom(req.headers['x-request-id']);
}

/**
 * Every request gets a correlation id (Fastify's `request.id`, from `requestIdOf`), echoed and written into its
 * audit events. A Fastify `onRequest` hook: the rest of the request (body parsing, guards, the handler) runs in
 * its context. The header goes on the Node response, so answers written there (event streams) carry it too.
 */
export function requestIds(req: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.raw.setHeader('X-Request-Id', req.id);
  RequestContexts.run({ correlationId: req.id }, done);
}
