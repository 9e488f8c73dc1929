import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerModuleOptions } from '@nestjs/throttler';
import type { Request } from 'express';
import { Principal } from '../../domain/shared/actor';
import { DomainError } from '../../domain/shared/domain-error';
import { TollgateConfig } from '../../infrastructure/config/config';

type AuthedRequest = Request & { principal?: Principal };

/** Per token (tenant and subject) once authenticated, per address before; one window of 10 s. */
export function throttlerOptions(config: TollgateConfig): ThrottlerModuleOptions {
  return {
    throttlers: [{ name: 'default', ttl: 10_000, limit: config.rateLimitPer10s }],
    skipIf: () => config.rateLimitPer10s === 0,
    getTracker: (req) => {
      const p = (req as AuthedRequest).principal;
      return p ? `token:${p.tenant}:${p.id}` : `ip:${(req as AuthedRequest).ip ?? 'unknown'}`;
    },
    errorMessage: 'Too many requests for this token: slow down and retry after the Retry-After seconds',
  };
}

/** Runs after AuthGuard (registered after it), so it sees the principal. */
@Injectable()
export class TokenThrottlerGuard extends ThrottlerGuard {
  protected override async shouldSkip(ctx: ExecutionContext): Promise<boolean> {
    // Operators' probes and scrapes are never throttled.
    const path = ctx.switchToHttp().getRequest<Request>().path;
    return path.startsWith('/health/') || path === '/metrics';
  }
}

/** Bounds the long-polls one token holds open on this instance, so one client cannot pin every socket. */
@Injectable()
export class WaitSlots {
  private readonly held = new Map<string, number>();

  constructor(private readonly max: number) {}

  acquire(p: Principal): () => void {
    const key = `${p.tenant}:${p.id}`;
    const n = this.held.get(key) ?? 0;
    if (n >= this.max) throw new DomainError('rate_limited', 'rate_limited', `This token already holds ${n} open waits; wait for one to answer first`);
    this.held.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(key) ?? 1) - 1;
      if (left > 0) this.held.set(key, left);
      else this.held.delete(key);
    };
  }
}
