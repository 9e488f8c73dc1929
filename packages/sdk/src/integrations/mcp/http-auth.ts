/**
 * Who may use the gateway over Streamable HTTP: the request's Host and Origin (DNS rebinding, the MCP transport's
 * requirement), then its bearer token, a person's of the gateway's own tenant as Tollgate tells (`GET /v1/me`).
 * Failed tokens are counted per client address, so a flood of forged tokens stops at the gateway instead of
 * spending Tollgate's failed-authentication limit for the gateway's address (which would lock everyone out).
 */
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { TollgateError } from '../../errors.js';
import { Tollgate } from '../../tollgate.js';
import type { ConversationUserInput, Me } from '../../types.js';
import { originOf } from './config-fields.js';
import { type Log, messageOf, problem } from './shared.js';

/** A bearer token's person, once Tollgate has vouched for them. */
export interface Person {
  sub: string;
  user: ConversationUserInput;
}

export interface HttpGuardOptions {
  /** Host names (any port) the `Host` header may name; unset: not checked. */
  allowedHosts?: string[];
  /** Browser origins allowed besides the request's own; a request without `Origin` (not a browser) passes. */
  allowedOrigins?: string[];
}

const AUTH_CACHE_MS = 60_000;
const MAX_AUTH_CACHE = 1000;
const WINDOW_MS = 60_000;
/** Addresses tracked at once: a flood from many addresses costs bounded memory (the oldest window goes). */
const MAX_ADDRESSES = 10_000;
const MAX_TOKEN = 16 * 1024;
/** As Tollgate allows: a token that expired longer ago than this is refused without asking. */
const CLOCK_TOLERANCE_S = 60;

/** `403` for a Host or Origin the gateway was not told to serve, else undefined. */
export function originFault(request: Request, o: HttpGuardOptions): Response | undefined {
  const host = (request.headers.get('host') ?? new URL(request.url).host).toLowerCase();
  if (o.allowedHosts) {
    let hostname: string | undefined;
    try {
      hostname = new URL(`http://${host}`).hostname;
    } catch {
      hostname = undefined;
    }
    if (!hostname || !o.allowedHosts.includes(hostname))
      return problem(
        403,
        'forbidden',
        `This gateway does not serve the host ${JSON.stringify(host.slice(0, 255))} (http.allowedHosts)`,
      );
  }
  const origin = request.headers.get('origin');
  if (origin === null) return undefined;
  const normalised = originOf(origin);
  const own = normalised !== undefined && new URL(normalised).host === host;
  if (!own && !(normalised && o.allowedOrigins?.includes(normalised)))
    return problem(
      403,
      'forbidden',
      `Requests from the origin ${JSON.stringify(origin.slice(0, 255))} are not allowed (http.allowedOrigins)`,
    );
  return undefined;
}

export class BearerAuth {
  private readonly verified = new Map<string, Person & { until: number }>();
  private readonly failures = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly tollgateUrl: string,
    /** The gateway's own tenant (its agent token's): only that tenant's people are let in. */
    private readonly tenant: () => string,
    private readonly failedAuthPerMinute: number,
    private readonly log: Log,
  ) {}

  /**
   * The token's person, or the problem to answer. A token Tollgate vouched for within the minute passes at once,
   * even from an address past its failure limit: a forger sharing the address cannot lock its people out.
   */
  async verify(token: string | undefined, address: string | undefined): Promise<Person | Response> {
    if (!token)
      return problem(
        401,
        'unauthenticated',
        'A bearer token is required: your Tollgate token (the same one the inbox uses)',
      );
    const cached = this.verified.get(token);
    if (cached && cached.until > Date.now()) return cached;
    const key = clientKey(address);
    const limited = this.limited(key);
    if (limited) return limited;
    // Refused here, it costs Tollgate nothing and is not counted: the limit guards what reaches Tollgate.
    const claims = localClaims(token);
    if (typeof claims === 'string')
      return problem(401, 'unauthenticated', `The bearer token is not a valid Tollgate token: ${claims}`);
    let me: Me;
    try {
      // One attempt: a client whose request failed tries again itself, and a 429 must not hold the request.
      me = await new Tollgate({
        url: this.tollgateUrl,
        token,
        retry: { maxAttempts: 1 },
        headers: { 'user-agent': 'tollgate-mcp-gateway' },
      }).me();
    } catch (e) {
      if (e instanceof TollgateError && e.status === 401)
        return this.failed(key, problem(401, e.code, `Tollgate refused the token: ${e.detail}`));
      if (e instanceof TollgateError && e.status === 429) {
        this.failed(key, undefined); // not verified: counts as this client's, whose tokens Tollgate is refusing
        return problem(
          503,
          'unavailable',
          'Tollgate is not checking tokens from the gateway for now; try again shortly',
          { retryAfter: 10 },
        );
      }
      this.log('error', `checking a bearer token with Tollgate failed: ${messageOf(e)}`);
      return problem(503, 'unavailable', 'Tollgate could not check the token; try again');
    }
    if (me.kind === 'agent')
      return problem(403, 'forbidden', "An agent token cannot open an MCP session: use a person's Tollgate token");
    // Roles never cross tenants: another tenant's admin is nobody here, not an admin.
    if (me.tenant !== this.tenant())
      return problem(
        403,
        'forbidden',
        "The token is of another tenant than this gateway's: use a token of its own tenant",
      );
    const user: ConversationUserInput = { id: me.id, ...(me.name ? { name: me.name } : {}), roles: me.roles };
    const entry = {
      sub: me.id,
      user,
      until: Math.min(Date.now() + AUTH_CACHE_MS, claims.exp ? claims.exp * 1000 : Infinity),
    };
    if (this.verified.size >= MAX_AUTH_CACHE) this.verified.clear();
    this.verified.set(token, entry);
    return entry;
  }

  /** `429` with Retry-After while the address is past its failures of this minute. */
  private limited(key: string): Response | undefined {
    if (this.failedAuthPerMinute === 0) return undefined;
    const now = Date.now();
    const w = this.failures.get(key);
    if (!w || now - w.start >= WINDOW_MS || w.count < this.failedAuthPerMinute) return undefined;
    const retryAfter = Math.max(1, Math.ceil((w.start + WINDOW_MS - now) / 1000));
    return problem(
      429,
      'rate_limited',
      `Too many refused tokens from this address: retry after ${retryAfter} s with a valid token`,
      { retryAfter },
    );
  }

  private failed<T extends Response | undefined>(key: string, answer: T): T {
    if (this.failedAuthPerMinute === 0) return answer;
    const now = Date.now();
    const w = this.failures.get(key);
    if (w && now - w.start < WINDOW_MS) w.count += 1;
    else {
      this.failures.delete(key); // re-inserted: the map stays in window-start order, oldest first
      if (this.failures.size >= MAX_ADDRESSES) this.failures.delete(this.failures.keys().next().value!);
      this.failures.set(key, { start: now, count: 1 });
    }
    return answer;
  }
}

/**
 * What can be told of a token without its key: a JWT with a signing algorithm, a subject, not long expired. The
 * rest (the signature above all) is Tollgate's to check; this only keeps obvious junk from costing it anything.
 */
function localClaims(token: string): { exp?: number } | string {
  if (token.length > MAX_TOKEN) return 'too long';
  let header: { alg?: unknown };
  let payload: { sub?: unknown; exp?: unknown };
  try {
    header = decodeProtectedHeader(token);
    payload = decodeJwt(token);
  } catch {
    return 'not a JWT';
  }
  if (typeof header.alg !== 'string' || header.alg.toLowerCase() === 'none') return 'unsigned';
  if (typeof payload.sub !== 'string' || !payload.sub) return 'no subject';
  if (
    payload.exp !== undefined &&
    (typeof payload.exp !== 'number' || payload.exp + CLOCK_TOLERANCE_S < Date.now() / 1000)
  )
    return 'expired';
  return typeof payload.exp === 'number' ? { exp: payload.exp } : {};
}

/**
 * The unit one client is counted by: an IPv4 address (IPv4-mapped IPv6 included), or an IPv6 /64, since one host
 * is routinely given a whole /64 and could otherwise rotate through it (as Tollgate counts).
 */
export function clientKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!address.includes(':')) return address;
  const [head, tail] = address.toLowerCase().split('%')[0].split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
