import * as grpc from '@grpc/grpc-js';
import type { MethodDefinition, ServiceDefinition } from '@grpc/proto-loader';
import { constants as h2 } from 'node:http2';
import type { ServerHttp2Stream } from 'node:http2';
import { DomainError } from '../../domain/shared/domain-error';
import { ID_PATTERN } from '../api/request-params';

// What GrpcServer does to a request before, or instead of, its handler.

/** A request that did not decode: told as INVALID_ARGUMENT by the handler, not INTERNAL by gRPC. */
export const UNDECODABLE = Symbol('undecodable');

/**
 * The service with each request decoder made safe: a message protobuf cannot decode (or nests too deeply for
 * it) becomes a marker the handler answers INVALID_ARGUMENT for, after authentication, as REST answers a body it
 * cannot parse with 400, never with an internal error.
 */
export function decodingSafely(service: ServiceDefinition): ServiceDefinition {
  return Object.fromEntries(
    Object.entries(service).map(([name, m]: [string, MethodDefinition<object, object>]) => [
      name,
      {
        ...m,
        requestDeserialize: (bytes: Buffer) => {
          try {
            return m.requestDeserialize(bytes);
          } catch (e) {
            return { [UNDECODABLE]: e instanceof Error ? e.message : String(e) };
          }
        },
      },
    ]),
  ) as ServiceDefinition;
}

/**
 * An id that cannot exist (not 1 to 128 characters of [A-Za-z0-9_.:-]) names nothing: NOT_FOUND without a
 * lookup, and without echoing it (a 100,000-character id would make a status message no client accepts).
 */
export function notFoundUnlessId(id: unknown, what: string): void {
  if (typeof id !== 'string' || !ID_PATTERN.test(id))
    throw new DomainError(
      'not_found',
      'not_found',
      `${what} not found: its id is not 1 to 128 characters of [A-Za-z0-9_.:-]`,
    );
}

/**
 * grpc-js leaves a stream open when it answers before the client has finished sending (a refused call, a request
 * that did not come in time), so a peer could keep it, and what it holds, for the connection's life. Once such a
 * trailers-only answer is out, the stream is reset (RST_STREAM NO_ERROR, as RFC 9113 §8.1 allows and grpc-go and
 * gRPC core do; not after messages, where Node 20 spins on a reset that races the trailers).
 */
export function resetUnlessHalfClosed(call: grpc.ServerInterceptingCallInterface): void {
  const stream = streamOf(call);
  if (!stream || !stream.headersSent) return;
  // After the trailers have gone out: Node writes a session's submitted frames on its next turn, and Node 22 sends
  // a reset submitted at once ahead of them (the client then sees no status at all).
  setImmediate(() => {
    if (!stream.closed && !stream.destroyed && stream.state.remoteClose === 0) stream.close(h2.NGHTTP2_NO_ERROR);
  });
}

/**
 * Closes the call's connection gracefully (GOAWAY; calls in flight finish), as HTTP/1 closes it after a 431: a
 * peer sending oversized metadata would otherwise go on sending it on the same connection, each header list (up to
 * Node's own 64 KiB) becoming garbage faster than V8 collects it. A grpc-js client simply reconnects.
 */
export function closeConnection(call: grpc.ServerInterceptingCallInterface): void {
  const session = streamOf(call)?.session;
  if (session && !session.closed && !session.destroyed) session.close();
}

/**
 * The HTTP/2 stream under a grpc-js call: an internal field, as grpc-js has no API for the two uses above;
 * grpc-hardening.e2e-spec.ts fails should it move.
 */
function streamOf(call: grpc.ServerInterceptingCallInterface): ServerHttp2Stream | undefined {
  const stream = (call as unknown as { stream?: unknown }).stream;
  return stream && typeof stream === 'object' && 'session' in stream ? (stream as ServerHttp2Stream) : undefined;
}
