import { DomainError } from '../../domain/shared/domain-error';
import { AuthFailureLimiter, clientKey } from './auth-failures';

function limiter(limit: number, opts: { maxAddresses?: number } = {}) {
  let now = 1_000_000;
  const l = new AuthFailureLimiter(limit, { windowMs: 10_000, now: () => now, ...opts });
  return { l, advance: (ms: number) => (now += ms) };
}

function refusal(f: () => void): DomainError | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    return e as DomainError;
  }
}

describe('AuthFailureLimiter', () => {
  it('refuses an address once it has used up its failures, until its window ends, with the seconds left', () => {
    const { l, advance } = limiter(3);
    for (let i = 0; i < 3; i++) {
      expect(refusal(() => l.check('10.0.0.1'))).toBeUndefined();
      l.recordFailure('10.0.0.1');
    }
    advance(2_500);
    const e = refusal(() => l.check('10.0.0.1'));
    expect(e).toMatchObject({ code: 'rate_limited', kind: 'rate_limited', details: { retryAfter: 8 } });
    expect(refusal(() => l.check('10.0.0.2'))).toBeUndefined(); // other addresses are not affected
    advance(7_500);
    expect(refusal(() => l.check('10.0.0.1'))).toBeUndefined(); // a new window
  });

  it('counts nothing and refuses no one when the limit is 0', () => {
    const { l } = limiter(0);
    for (let i = 0; i < 100; i++) l.recordFailure('10.0.0.1');
    expect(refusal(() => l.check('10.0.0.1'))).toBeUndefined();
    expect(l.tracked).toBe(0);
  });

  it('tracks a bounded number of addresses, dropping the oldest window first', () => {
    const { l, advance } = limiter(2, { maxAddresses: 3 });
    for (const a of ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5']) {
      l.recordFailure(a);
      l.recordFailure(a);
      advance(10);
    }
    expect(l.tracked).toBe(3);
    expect(refusal(() => l.check('10.0.0.1'))).toBeUndefined(); // forgotten
    expect(refusal(() => l.check('10.0.0.5'))?.code).toBe('rate_limited');
  });

  it('forgets expired windows as new failures come in', () => {
    const { l, advance } = limiter(5);
    for (let i = 0; i < 50; i++) l.recordFailure(`10.0.1.${i}`);
    advance(10_000);
    l.recordFailure('10.0.2.1');
    expect(l.tracked).toBe(1);
  });

  it('counts IPv4-mapped addresses as IPv4 and an IPv6 host by its /64', () => {
    expect(clientKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey(undefined)).toBe('unknown');
  });
});
