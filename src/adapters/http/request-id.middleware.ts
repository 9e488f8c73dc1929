import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { correlationIdFrom, RequestContexts } from '../../infrastructure/context/request-context';

/**
 * Every request gets a correlation id (the caller's X-Request-Id, or a new one), echoed and written into its
 * audit events. The access log names the request first (`req.id`); this keeps that same id.
 */
@Injectable()
export class RequestIdMiddleware implements NestMiddleware {
  use(req: Request & { id?: unknown }, res: Response, next: NextFunction): void {
    const correlationId = typeof req.id === 'string' ? req.id : correlationIdFrom(req.headers['x-request-id']);
    res.setHeader('X-Request-Id', correlationId);
    RequestContexts.run({ correlationId }, next);
  }
}
