import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** One address a host name resolved to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (as `dns.promises.lookup(host, { all: true })`). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })) as ResolvedAddress[];

/** A destination that may be reached: the parsed URL and the checked addresses to connect to (and only those). */
export interface AllowedDestination {
  ok: true;
  url: URL;
  addresses: ResolvedAddress[];
}

export interface RefusedDestination {
  ok: false;
  /** `invalid_url`: not an http(s) URL without credentials; `dns_failed`: no address; `destination_not_allowed`: a non-public address. */
  refusal: 'invalid_url' | 'dns_failed' | 'destination_not_allowed';
  /**
   * For the admin registering the URL: says what is wrong without telling a failed lookup from a private
   * answer or naming the address, so registration does not map the internal network either.
   */
  detail: string;
  /** What the name resolved to, for the operator's log. */
  resolved?: string[];
}

/**
 * Addresses outside the public unicast space (IANA special-purpose registries). IPv4 rules also match the
 * IPv4-mapped IPv6 forms (::ffff:127.0.0.1): BlockList compares those as IPv4.
 */
const NON_PUBLIC_V4: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network": connecting to 0.0.0.0 reaches the host itself
  ['10.0.0.0', 8], // RFC 1918
  ['100.64.0.0', 10], // shared address space (CGNAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // RFC 1918
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // RFC 1918
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];

/** IPv6 is public only inside 2000::/3 (global unicast), less these special blocks within it. */
const NON_PUBLIC_V6: Array<[string, number]> = [
  ['2001::', 23], // IETF protocol assignments: Teredo, benchmarking, ORCHID
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
];

const nonPublic = new BlockList();
for (const [net, prefix] of NON_PUBLIC_V4) nonPublic.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of NON_PUBLIC_V6) nonPublic.addSubnet(net, prefix, 'ipv6');
const globalUnicast = new BlockList();
globalUnicast.addSubnet('2000::', 3, 'ipv6');

/** The 16 bytes of an IPv6 address (valid per `isIP`, zone removed), as 8 groups. */
function ipv6Groups(address: string): number[] {
  let a = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a); // ::ffff:127.0.0.1
  if (dotted) {
    const [b0, b1, b2, b3] = dotted.slice(1).map(Number);
    a = `${a.slice(0, dotted.index)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head, tail] = a.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.map((g) => parseInt(g, 16));
}

const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 address an IPv6 one stands for, where the packet really goes there: IPv4-mapped (::ffff:0:0/96),
 * NAT64 (64:ff9b::/96) and 6to4 (2002::/16). Such an address is judged as its IPv4 address.
 */
export function embeddedIPv4(address: string): string | null {
  if (isIP(address) !== 6) return null;
  const g = ipv6Groups(address);
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return v4(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return v4(g[6], g[7]);
  if (g[0] === 0x2002) return v4(g[1], g[2]);
  return null;
}

/** Whether an IP address is public unicast: everything else (private, loopback, link-local, …) is not. */
export function isPublicAddress(address: string): boolean {
  const ip = address.replace(/%.*$/, '');
  const family = isIP(ip);
  if (family === 4) return !nonPublic.check(ip, 'ipv4');
  if (family !== 6) return false;
  const inner = embeddedIPv4(ip);
  if (inner !== null) return isPublicAddress(inner);
  return globalUnicast.check(ip, 'ipv6') && !nonPublic.check(ip, 'ipv6');
}

/** `http(s)://host…` without credentials, as WHATWG parses it (so `http://2130706433/` is 127.0.0.1); else why not. */
export function parseWebhookUrl(raw: string): URL | string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http(s) URL';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials (user:password@)';
  if (url.hostname === '') return 'must name a host';
  return url;
}

/**
 * Where webhooks may go (issue 11, finding 8): public unicast addresses, plus the CIDRs the operator allows
 * (TOLLGATE_WEBHOOK_ALLOW_PRIVATE). A host name is resolved once and every address it has is checked; the
 * caller then connects to those addresses only, so a name that resolves elsewhere a moment later (DNS
 * rebinding) changes nothing. Used at registration and again before every delivery attempt.
 */
export class EgressGuard {
  private readonly allowed = new BlockList();

  constructor(
    allowPrivate: readonly string[],
    private readonly resolver: Resolver = systemResolver,
  ) {
    for (const cidr of allowPrivate) {
      const [net, prefix] = cidr.split('/');
      this.allowed.addSubnet(net, Number(prefix), isIP(net) === 6 ? 'ipv6' : 'ipv4');
    }
  }

  /** Whether one IP address may be reached: public, or within the operator's allowlist. */
  allows(address: string): boolean {
    const ip = address.replace(/%.*$/, '');
    const family = isIP(ip);
    if (family === 0) return false;
    const inner = embeddedIPv4(ip);
    const listed =
      this.allowed.check(ip, family === 6 ? 'ipv6' : 'ipv4') || (inner !== null && this.allowed.check(inner, 'ipv4'));
    return listed || isPublicAddress(ip);
  }

  /** Parses the URL, resolves its host once and checks every address; no connection is made. */
  async check(raw: string): Promise<AllowedDestination | RefusedDestination> {
    const url = parseWebhookUrl(raw);
    if (typeof url === 'string') return { ok: false, refusal: 'invalid_url', detail: url };
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const literal = isIP(host);
    if (literal !== 0) {
      return this.allows(host)
        ? { ok: true, url, addresses: [{ address: host, family: literal as 4 | 6 }] }
        : { ok: false, refusal: 'destination_not_allowed', detail: `${host} is not a public address${HINT}` };
    }
    const detail = `${host} does not resolve to public addresses only${HINT}`;
    let addresses: ResolvedAddress[];
    try {
      addresses = await this.resolver(host);
    } catch {
      return { ok: false, refusal: 'dns_failed', detail };
    }
    if (addresses.length === 0) return { ok: false, refusal: 'dns_failed', detail };
    // One refused address refuses the name: a client could be sent to any of them.
    if (!addresses.every((a) => this.allows(a.address)))
      return { ok: false, refusal: 'destination_not_allowed', detail, resolved: addresses.map((a) => a.address) };
    return { ok: true, url, addresses };
  }
}

const HINT =
  '; webhooks reach private, loopback and link-local addresses only where the operator allows them (TOLLGATE_WEBHOOK_ALLOW_PRIVATE)';
