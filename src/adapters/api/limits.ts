import { Inject, Injectable } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import { createHash } from 'node:crypto';
import { Principal } from '../../domain/shared/actor';
import { DomainError } from '../../domain/shared/domain-error';
import { TOLLGATE_CONFIG, TollgateConfig } from '../../infrastructure/config/config';

// The bounds every transport applies after authentication: requests per token, and waits held open.

export const RATE_WINDOW_MS = 10_000;
export const THROTTLER = 'default';
export const RATE_LIMITED = 'Too many requests for this token: slow down and retry after the Retry-After seconds';

/** Whom a request counts against: its token (tenant and subject). */
export function tokenTracker(p: Principal): string {
  return `token:${p.tenant}:${p.id}`;
}

/**
 * TOLLGATE_RATE_LIMIT for callers outside Nest's guards (gRPC): the throttler's own storage, window and limit,
 * counted per token and per method as the guard counts per token and per route.
 */
@Injectable()
export class TokenRateLimit {
  constructor(
    @Inject(ThrottlerStorage) private readonly storage: ThrottlerStorage,
    @Inject(TOLLGATE_CONFIG) private readonly config: TollgateConfig,
  ) {}

  /** Counts one request; refuses it (429 rate_limited, with retryAfter) past the limit. */
  async hit(p: Principal, method: string): Promise<void> {
    const limit = this.config.rateLimitPer10s;
    if (limit === 0) return;
    const key = createHash('sha256')
      .update(`${method}-${THROTTLER}-${tokenTracker(p)}`)
      .digest('hex');
    const { isBlocked, timeToBlockExpire } = await this.storage.increment(
      key,
      RATE_WINDOW_MS,
      limit,
      RATE_WINDOW_MS,
      THROTTLER,
    );
    if (isBlocked)
      throw new DomainError(
        'rate_limited',
        'rate_limited',
        RATE_LIMITED.replace('the Retry-After seconds', `${timeToBlockExpire} s`),
        { retryAfter: timeToBlockExpire },
      );
  }
}

/** Seconds a refused wait should give the others: a slot frees as soon as any open wait answers. */
const WAIT_RETRY_AFTER_S = 1;

/**
 * Bounds the waits (long-polls and event streams) held open on this instance, per token and per tenant, so
 * neither one client nor one tenant's many tokens can pin every socket and waiter.
 */
@Injectable()
export class WaitSlots {
  private readonly byToken = new Map<string, number>();
  private readonly byTenant = new Map<string, number>();

  constructor(
    private readonly perToken: number,
    private readonly perTenant = Number.POSITIVE_INFINITY,
  ) {}

  acquire(p: Principal): () => void {
    const token = `${p.tenant}\u0000${p.id}`;
    const mine = this.byToken.get(token) ?? 0;
    if (mine >= this.perToken)
      throw waitLimited(`This token already holds ${mine} open waits; wait for one to answer first`);
    const tenant = this.byTenant.get(p.tenant) ?? 0;
    if (tenant >= this.perTenant)
      throw waitLimited(`This tenant already holds ${tenant} open waits on this server; wait for one to answer first`);
    this.byToken.set(token, mine + 1);
    this.byTenant.set(p.tenant, tenant + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      decrement(this.byToken, token);
      decrement(this.byTenant, p.tenant);
    };
  }
}

function waitLimited(detail: string): DomainError {
  return new DomainError('rate_limited', 'rate_limited', detail, { retryAfter: WAIT_RETRY_AFTER_S });
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
