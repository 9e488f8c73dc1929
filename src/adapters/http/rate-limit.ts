import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerModuleOptions } from '@nestjs/throttler';
import type { FastifyRequest } from 'fastify';
import { Principal } from '../../domain/shared/actor';
import { TollgateConfig } from '../../infrastructure/config/config';
import { RATE_LIMITED, RATE_WINDOW_MS, THROTTLER, tokenTracker } from '../api/limits';

type AuthedRequest = FastifyRequest & { principal?: Principal };

/** Per token (tenant and subject) once authenticated, per address before; one window of 10 s. */
export function throttlerOptions(config: TollgateConfig): ThrottlerModuleOptions {
  return {
    throttlers: [{ name: THROTTLER, ttl: RATE_WINDOW_MS, limit: config.rateLimitPer10s }],
    skipIf: () => config.rateLimitPer10s === 0,
    getTracker: (req) => {
      const p = (req as AuthedRequest).principal;
      return p ? tokenTracker(p) : `ip:${(req as AuthedRequest).ip ?? 'unknown'}`;
    },
    errorMessage: RATE_LIMITED,
  };
}

/** Runs after AuthGuard (registered after it), so it sees the principal. */
@Injectable()
export class TokenThrottlerGuard extends ThrottlerGuard {
  protected override async shouldSkip(ctx: ExecutionContext): Promise<boolean> {
    // Operators' probes and scrapes are never throttled.
    const route = ctx.switchToHttp().getRequest<FastifyRequest>().routeOptions.url ?? '';
    return route.startsWith('/health/') || route === '/metrics';
  }
}
