import { isIPv4, isIPv6 } from 'node:net';
import { DomainError } from '../../domain/shared/domain-error';

const WINDOW_MS = 10_000;
/** Addresses tracked at once: a flood from many addresses costs bounded memory (the oldest window is dropped). */
const MAX_ADDRESSES = 10_000;

interface Window {
  start: number;
  count: number;
}

/**
 * Failed authentications (missing, malformed or invalid bearer token) per client address, in fixed windows of
 * 10 s on this instance. Past the limit the address is refused before its token is even read, so a flood of
 * forged tokens costs no signature checks; the window's end is the Retry-After. `limit` 0 turns it off.
 */
export class AuthFailureLimiter {
  /** Insertion order is window-start order (a restarted window is re-inserted), so the first entry is the oldest. */
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly limit: number,
    private readonly opts: { windowMs?: number; maxAddresses?: number; now?: () => number } = {},
  ) {}

  /** Refuses (429 rate_limited, with Retry-After) an address that used up its failures in this window. */
  check(address: string | undefined): void {
    if (this.limit === 0) return;
    const now = this.now();
    const w = this.current(clientKey(address), now);
    if (!w || w.count < this.limit) return;
    const retryAfter = Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
    throw new DomainError(
      'rate_limited',
      'rate_limited',
      `Too many failed authentications from this address: retry after ${retryAfter} s with a valid token`,
      { retryAfter },
    );
  }

  recordFailure(address: string | undefined): void {
    if (this.limit === 0) return;
    const now = this.now();
    const key = clientKey(address);
    this.dropExpired(now);
    const w = this.current(key, now);
    if (w) {
      w.count++;
      return;
    }
    if (this.windows.size >= (this.opts.maxAddresses ?? MAX_ADDRESSES))
      this.windows.delete(this.windows.keys().next().value!);
    this.windows.set(key, { start: now, count: 1 });
  }

  /** How many addresses are tracked now (for tests of the memory bound). */
  get tracked(): number {
    return this.windows.size;
  }

  private get windowMs(): number {
    return this.opts.windowMs ?? WINDOW_MS;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  private current(key: string, now: number): Window | undefined {
    const w = this.windows.get(key);
    if (w && now - w.start >= this.windowMs) {
      this.windows.delete(key);
      return undefined;
    }
    return w;
  }

  private dropExpired(now: number): void {
    for (const [key, w] of this.windows) {
      if (now - w.start < this.windowMs) break;
      this.windows.delete(key);
    }
  }
}

/**
 * The unit one client is counted by: an IPv4 address (IPv4-mapped IPv6 included), or an IPv6 /64, since one
 * host is routinely given a whole /64 and could otherwise rotate through it.
 */
export function clientKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (isIPv4(address) || !isIPv6(address)) return address;
  const [head, tail] = address.toLowerCase().split('%')[0].split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
