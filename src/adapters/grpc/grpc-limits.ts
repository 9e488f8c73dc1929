import * as grpc from '@grpc/grpc-js';
import { DomainError } from '../../domain/shared/domain-error';
import { clientKey } from '../api/auth-failures';

/**
 * What one peer may make the gRPC port hold. grpc-js holds a call's metadata (and, unless told otherwise, waits
 * for its message) before any handler runs, and by default lets a connection open unlimited streams with
 * unlimited memory and keep them forever: each bound below caps one of those.
 */
export interface GrpcLimits {
  /** A request message, as REST bodies (a larger one is refused by grpc-js: RESOURCE_EXHAUSTED). */
  maxMessageBytes: number;
  /** A call's metadata, as REST's request line and headers (headers_too_large). */
  maxMetadataBytes: number;
  /** Calls open at once on one connection (SETTINGS_MAX_CONCURRENT_STREAMS: the next stream is refused). */
  maxStreamsPerConnection: number;
  /** MiB of HTTP/2 buffers (headers, unread data) one connection may hold; past it new streams are refused. */
  maxConnectionMemoryMb: number;
  /** A connection with no call open this long is closed (GOAWAY). */
  connectionIdleMs: number;
  /** A connection is asked to go away after this long (±10%), and cut `connectionAgeGraceMs` later. */
  connectionAgeMs: number;
  connectionAgeGraceMs: number;
  /** The whole request (metadata, message, end of stream) must have come this long after the call started. */
  requestTimeoutMs: number;
  /** Calls that need no token (health, reflection: their streams may last) open at once from one address. */
  maxAnonymousPerAddress: number;
  /** The same, from all addresses together. */
  maxAnonymous: number;
}

export const DEFAULT_GRPC_LIMITS: Readonly<GrpcLimits> = {
  maxMessageBytes: 1024 * 1024,
  maxMetadataBytes: 16 * 1024,
  maxStreamsPerConnection: 100,
  maxConnectionMemoryMb: 10,
  connectionIdleMs: 5 * 60_000,
  // Hourly reconnects spread clients over the instances after a deploy; a watch cut at the end is watched again.
  connectionAgeMs: 60 * 60_000,
  connectionAgeGraceMs: 5 * 60_000,
  requestTimeoutMs: 15_000,
  maxAnonymousPerAddress: 100,
  maxAnonymous: 1000,
};

/** The grpc-js options that enforce the limits grpc-js knows (the rest are enforced by GrpcServer's interceptor). */
export function serverOptions(l: GrpcLimits): grpc.ServerOptions {
  return {
    'grpc.max_receive_message_length': l.maxMessageBytes,
    'grpc.max_concurrent_streams': l.maxStreamsPerConnection,
    'grpc-node.max_session_memory': l.maxConnectionMemoryMb,
    'grpc.max_connection_idle_ms': l.connectionIdleMs,
    'grpc.max_connection_age_ms': l.connectionAgeMs,
    'grpc.max_connection_age_grace_ms': l.connectionAgeGraceMs,
    // Dead peers are noticed, and their watches and wait slots freed, within a minute and a half.
    'grpc.keepalive_time_ms': 60_000,
    'grpc.keepalive_timeout_ms': 20_000,
    // Channelz keeps a record of every connection and call for an admin service this server does not offer.
    'grpc.enable_channelz': 0,
  };
}

/**
 * The size of metadata as HTTP/2 counts a header list (RFC 7540 §6.5.2: name, value and 32 octets an entry),
 * binary values as sent (base64).
 */
export function metadataBytes(metadata: grpc.Metadata): number {
  let n = 0;
  for (const key of Object.keys(metadata.getMap())) {
    for (const v of metadata.get(key))
      n += key.length + 32 + (typeof v === 'string' ? Buffer.byteLength(v) : Math.ceil(v.length / 3) * 4);
  }
  return n;
}

export function headersTooLarge(limit: number): DomainError {
  return new DomainError('headers_too_large', 'too_large', `The call's metadata exceeds ${limit / 1024} KiB`);
}

/**
 * Calls that need no token (health and reflection), counted per client address (an IPv6 /64 as one) and in all:
 * their streams may last, and would otherwise let one peer hold any number of them across many connections.
 * (A Tollgate call is authenticated as soon as its metadata arrives, and answered at once without a valid token.)
 */
export class AnonymousCalls {
  private readonly byAddress = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly perAddress: number,
    private readonly overall: number,
  ) {}

  /** Counts one more call from `address`, or answers undefined when the address or the server is at its bound. */
  take(address: string | undefined): (() => void) | undefined {
    const key = clientKey(address);
    const held = this.byAddress.get(key) ?? 0;
    if (held >= this.perAddress || this.total >= this.overall) return undefined;
    this.byAddress.set(key, held + 1);
    this.total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const left = (this.byAddress.get(key) ?? 1) - 1;
      if (left > 0) this.byAddress.set(key, left);
      else this.byAddress.delete(key);
    };
  }
}

export function tooManyAnonymous(): DomainError {
  return new DomainError(
    'rate_limited',
    'rate_limited',
    'Too many health and reflection calls are open from this address; close some',
    { retryAfter: 1 },
  );
}
