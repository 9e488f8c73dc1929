/**
 * Waiting for a decision over the gRPC watch (`new Tollgate({ url, token, grpc: 'host:port' })`): Node only.
 * `WatchToolCall` is the wake-up; the call is then read over REST (GET /v1/tool-calls/{id}), so what the caller
 * gets has the SDK's REST shapes. @grpc/grpc-js and @grpc/proto-loader are optional peer dependencies, loaded
 * here on first use; this module itself is only reached through a dynamic import with a computed specifier,
 * so bundlers of the SDK (the web inbox) never pull it, nor gRPC, in.
 */
import { TollgateError } from './errors.js';
import { abortReason, sleep, type Transport } from './http.js';
import { throwIfAborted } from './signals.js';
import type { ToolCall } from './types.js';

/**
 * What the watch needs of the SDK's client (a `TollgateClient`): its token and backoff, and a REST read of the
 * call. Named here, not imported, so that the client's lazy import of this module is no import cycle.
 */
export interface WatchingClient {
  readonly transport: Pick<Transport, 'token' | 'backoff'>;
  getToolCall(id: string, o: { signal?: AbortSignal }): Promise<ToolCall>;
}

/* The few parts of @grpc/grpc-js used here (typed locally: the SDK builds without Node's types). */
interface Metadata {
  set(key: string, value: string): void;
  get(key: string): unknown[];
}
interface ServiceError extends Error {
  code: number;
  details?: string;
  metadata?: Metadata;
}
interface ClientStream {
  on(event: 'data', fn: (m: unknown) => void): void;
  on(event: 'error', fn: (e: ServiceError) => void): void;
  on(event: 'end', fn: () => void): void;
  cancel(): void;
}
interface WatchStub {
  WatchToolCall(req: { id: string }, metadata: Metadata): ClientStream;
  close(): void;
}
interface GrpcJs {
  Metadata: new () => Metadata;
  credentials: { createInsecure(): unknown };
  loadPackageDefinition(def: unknown): {
    tollgate: { v1: { Tollgate: new (addr: string, creds: unknown) => WatchStub } };
  };
}
interface ProtoLoader {
  loadSync(file: string, o: Record<string, unknown>): unknown;
}

const OK = 0;
const CANCELLED = 1;
const UNKNOWN = 2;
const DEADLINE_EXCEEDED = 4;
const RESOURCE_EXHAUSTED = 8;
const INTERNAL = 13;
const UNAVAILABLE = 14;
/** Status names, for the TollgateError of a refusal without a `tollgate-code` trailer. */
const NAMES: Record<number, [string, number]> = {
  3: ['invalid_argument', 400],
  5: ['not_found', 404],
  7: ['forbidden', 403],
  9: ['failed_precondition', 409],
  16: ['unauthenticated', 401],
};
const HTTP_OF: Record<number, number> = { 3: 400, 5: 404, 7: 403, 8: 429, 9: 409, 14: 503, 16: 401 };

/** A computed specifier: bundlers leave it alone (and this module never runs in a browser). */
const load = <T>(name: string): Promise<T> => import(/* @vite-ignore */ name) as Promise<T>;

const clients = new WeakMap<WatchingClient, Promise<{ grpc: GrpcJs; client: WatchStub }>>();

function clientOf(tollgate: WatchingClient, address: string): Promise<{ grpc: GrpcJs; client: WatchStub }> {
  let c = clients.get(tollgate);
  if (!c) {
    c = (async () => {
      const [grpcMod, loaderMod, urlMod] = await Promise.all([
        load<GrpcJs & { default?: GrpcJs }>('@grpc/grpc-js'),
        load<ProtoLoader & { default?: ProtoLoader }>('@grpc/proto-loader'),
        load<{ fileURLToPath(u: URL): string }>('node:url'),
      ]);
      const grpc = grpcMod.default ?? grpcMod;
      const loader = loaderMod.default ?? loaderMod;
      const dir = urlMod.fileURLToPath(new URL('../proto/', import.meta.url));
      const def = loader.loadSync('tollgate/v1/tollgate.proto', {
        includeDirs: [dir],
        longs: String,
        enums: String,
        oneofs: true,
      });
      const Client = grpc.loadPackageDefinition(def).tollgate.v1.Tollgate;
      return { grpc, client: new Client(address, grpc.credentials.createInsecure()) };
    })();
    c.catch(() => clients.delete(tollgate));
    clients.set(tollgate, c);
  }
  return c;
}

/** Closes the gRPC channel of this client, if one was opened. */
export async function closeGrpc(tollgate: WatchingClient): Promise<void> {
  const c = clients.get(tollgate);
  clients.delete(tollgate);
  if (c) (await c.catch(() => undefined))?.client.close();
}

type WatchEnd = { kind: 'done' } | { kind: 'retry'; delayMs?: number } | { kind: 'fail'; error: TollgateError };

/** One WatchToolCall: resolves when the stream ends (the call left pending, or was never pending) or fails. */
async function watchOnce(
  tollgate: WatchingClient,
  address: string,
  id: string,
  signal: AbortSignal | undefined,
): Promise<WatchEnd> {
  const { grpc, client } = await clientOf(tollgate, address);
  const metadata = new grpc.Metadata();
  const token = await tollgate.transport.token();
  if (token) metadata.set('authorization', `Bearer ${token}`);
  throwIfAborted(signal);
  return new Promise<WatchEnd>((resolve, reject) => {
    const call = client.WatchToolCall({ id }, metadata);
    const onAbort = () => {
      call.cancel();
      reject(abortReason(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const settle = (end: WatchEnd) => {
      signal?.removeEventListener('abort', onAbort);
      resolve(end);
    };
    call.on('data', () => {}); // each message is a change; the stream ends once the call left pending
    call.on('end', () => settle({ kind: 'done' }));
    call.on('error', (e) => {
      if (signal?.aborted) return; // rejected by onAbort
      if (e.code === OK) return settle({ kind: 'done' });
      if (
        e.code === UNAVAILABLE ||
        e.code === CANCELLED ||
        e.code === UNKNOWN ||
        e.code === INTERNAL ||
        e.code === DEADLINE_EXCEEDED
      )
        return settle({ kind: 'retry' });
      const code = first(e.metadata, 'tollgate-code');
      if (e.code === RESOURCE_EXHAUSTED) {
        const after = retryAfterOf(e.metadata?.get('grpc-status-details-bin')?.[0]);
        return settle({ kind: 'retry', delayMs: after === undefined ? undefined : Math.min(after * 1000, 60_000) });
      }
      const [name, status] = NAMES[e.code] ?? [`grpc_${e.code}`, HTTP_OF[e.code] ?? 500];
      const problemCode = code ?? name;
      const detail = e.details || e.message;
      settle({
        kind: 'fail',
        error: new TollgateError(
          { type: `urn:tollgate:problem:${problemCode}`, title: problemCode, status, detail, code: problemCode },
          { cause: e },
        ),
      });
    });
  });
}

/**
 * The seconds a rate-limited call is asked to wait: `retryAfter` of the google.rpc.ErrorInfo metadata (else the
 * google.rpc.RetryInfo delay) in the `grpc-status-details-bin` trailer, a serialized google.rpc.Status.
 */
export function retryAfterOf(bin: unknown): number | undefined {
  if (!(bin instanceof Uint8Array)) return undefined;
  try {
    let retryInfo: number | undefined;
    for (const [field, any] of fields(bin)) {
      if (field !== 3 || !(any instanceof Uint8Array)) continue; // Status.details: Any {type_url = 1, value = 2}
      const parts = new Map(fields(any));
      const type = parts.get(1);
      const value = parts.get(2);
      if (!(type instanceof Uint8Array) || !(value instanceof Uint8Array)) continue;
      const name = new TextDecoder().decode(type);
      if (name.endsWith('/google.rpc.ErrorInfo')) {
        for (const [f, entry] of fields(value)) {
          if (f !== 3 || !(entry instanceof Uint8Array)) continue; // metadata: map<string, string>
          const kv = new Map(fields(entry));
          const k = kv.get(1);
          const v = kv.get(2);
          if (k instanceof Uint8Array && v instanceof Uint8Array && new TextDecoder().decode(k) === 'retryAfter') {
            const n = Number(new TextDecoder().decode(v));
            if (Number.isFinite(n) && n >= 0) return n;
          }
        }
      } else if (name.endsWith('/google.rpc.RetryInfo')) {
        const delay = new Map(fields(value)).get(1); // retry_delay: Duration {seconds = 1}
        const seconds = delay instanceof Uint8Array ? new Map(fields(delay)).get(1) : undefined;
        if (typeof seconds === 'number') retryInfo = seconds;
      }
    }
    return retryInfo;
  } catch {
    return undefined;
  }
}

/** The top-level fields of a protobuf message: varints as numbers, length-delimited ones as bytes. */
function fields(buf: Uint8Array): Array<[number, number | Uint8Array]> {
  const out: Array<[number, number | Uint8Array]> = [];
  let i = 0;
  const varint = (): number => {
    let n = 0;
    for (let mul = 1; ; mul *= 128) {
      if (i >= buf.length) throw new RangeError('truncated varint');
      const b = buf[i++]!;
      n += (b & 127) * mul;
      if (b < 128) return n;
    }
  };
  while (i < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) out.push([field, varint()]);
    else if (wire === 2) {
      const len = varint();
      if (i + len > buf.length) throw new RangeError('truncated field');
      out.push([field, buf.subarray(i, i + len)]);
      i += len;
    } else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else throw new RangeError(`wire type ${wire}`);
  }
  return out;
}

function first(metadata: Metadata | undefined, key: string): string | undefined {
  const v = metadata?.get(key)?.[0];
  return v === undefined ? undefined : String(v);
}

/**
 * Waits until the call leaves `pending` over the gRPC watch, then answers the call as REST reads it. A watch
 * broken by a network error or a stopping server (UNAVAILABLE) is opened again with backoff, a rate-limited one
 * after the delay asked for; NOT_FOUND, PERMISSION_DENIED and UNAUTHENTICATED end the wait with a TollgateError.
 */
export async function waitOverGrpc(
  tollgate: WatchingClient,
  address: string,
  call: ToolCall,
  signal?: AbortSignal,
): Promise<ToolCall> {
  let failures = 0;
  while (call.status === 'pending') {
    throwIfAborted(signal);
    const end = await watchOnce(tollgate, address, call.id, signal);
    if (end.kind === 'fail') throw end.error;
    if (end.kind === 'done') {
      // The watch ended: read the call as it stands (REST shapes). Still pending (a stream that ended early): watch again.
      try {
        call = await tollgate.getToolCall(call.id, { signal });
        failures = 0;
        continue;
      } catch (e) {
        throwIfAborted(signal);
        const transient = e instanceof TollgateError && (e.status === 0 || e.status === 429 || e.status >= 502);
        if (!transient) throw e;
      }
    }
    // Keep at it while the call may still be decided: until a minute past its expiry by our clock.
    const expiresAt = call.approval ? Date.parse(call.approval.expiresAt) : NaN;
    if (!Number.isNaN(expiresAt) && Date.now() > expiresAt + 60_000) {
      throw new TollgateError({
        type: 'urn:tollgate:problem:unavailable',
        title: 'Unavailable',
        status: 503,
        detail: `cannot watch ${call.id} at ${address}`,
        code: 'unavailable',
      });
    }
    failures += 1;
    await sleep((end.kind === 'retry' ? end.delayMs : undefined) ?? tollgate.transport.backoff(failures + 3), signal);
  }
  return call;
}
