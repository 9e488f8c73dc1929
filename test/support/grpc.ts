import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';

/**
 * A gRPC client of Tollgate as a program would write it: @grpc/grpc-js with the repository's proto file loaded by
 * @grpc/proto-loader, plus the standard health and reflection clients, and a decoder of the error details.
 * Nothing here comes from the server's own code.
 */

export const PROTO_DIR = join(__dirname, '..', '..', 'proto');
const LOADER: protoLoader.Options = { longs: String, enums: String, defaults: true, oneofs: true };

const tollgate = grpc.loadPackageDefinition(
  protoLoader.loadSync('tollgate/v1/tollgate.proto', { ...LOADER, includeDirs: [PROTO_DIR] }),
) as any;
const health = grpc.loadPackageDefinition(protoLoader.loadSync(healthProtoPath, LOADER)) as any;
const reflectionProto = join(
  dirname(require.resolve('@grpc/reflection/package.json')),
  'build',
  'proto',
  'grpc',
  'reflection',
);
const reflection = grpc.loadPackageDefinition(
  protoLoader.loadSync(
    [join(reflectionProto, 'v1', 'reflection.proto'), join(reflectionProto, 'v1alpha', 'reflection.proto')],
    LOADER,
  ),
) as any;

// ---- JSON ⇄ google.protobuf.Struct / Value, as a client converts them ----

export type PbValue = Record<string, unknown>;

export function value(v: unknown): PbValue {
  if (v === null) return { nullValue: 'NULL_VALUE' };
  if (typeof v === 'number') return { numberValue: v };
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (Array.isArray(v)) return { listValue: { values: v.map(value) } };
  return { structValue: struct(v as Record<string, unknown>) };
}

export function struct(o: Record<string, unknown>): { fields: Record<string, PbValue> } {
  return { fields: Object.fromEntries(Object.entries(o).map(([k, v]) => [k, value(v)])) };
}

export function fromValue(v: any): unknown {
  switch (v.kind) {
    case 'nullValue':
      return null;
    case 'listValue':
      return (v.listValue.values ?? []).map(fromValue);
    case 'structValue':
      return json(v.structValue);
    default:
      return v[v.kind];
  }
}

export function json(s: { fields?: Record<string, unknown> } | null | undefined): Record<string, unknown> | null {
  return s ? Object.fromEntries(Object.entries(s.fields ?? {}).map(([k, v]) => [k, fromValue(v)])) : null;
}

// ---- Error details: google.rpc.Status with ErrorInfo, BadRequest and RetryInfo (the types are Google's) ----

const rpc = protobuf.parse(`
  syntax = "proto3";
  package google.rpc;
  message Any { string type_url = 1; bytes value = 2; }
  message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
  message ErrorInfo { string reason = 1; string domain = 2; map<string, string> metadata = 3; }
  message BadRequest { message FieldViolation { string field = 1; string description = 2; } repeated FieldViolation field_violations = 1; }
  message Duration { int64 seconds = 1; int32 nanos = 2; }
  message RetryInfo { Duration retry_delay = 1; }
`).root;
const asObject = { longs: Number, defaults: true } as const;

export interface Failure {
  code: grpc.status;
  details: string;
  /** The `tollgate-code` trailer. */
  tollgateCode?: string;
  /** google.rpc.Status's code and message. */
  status?: { code: number; message: string };
  info?: { reason: string; domain: string; metadata: Record<string, string> };
  violations?: Array<{ field: string; description: string }>;
  retryDelaySeconds?: number;
  /** Every detail's type, in order. */
  detailTypes: string[];
  metadata: grpc.Metadata;
}

export function decodeFailure(e: grpc.ServiceError): Failure {
  const failure: Failure = { code: e.code, details: e.details, detailTypes: [], metadata: e.metadata };
  const code = e.metadata?.get('tollgate-code')[0];
  if (typeof code === 'string') failure.tollgateCode = code;
  const bin = e.metadata?.get('grpc-status-details-bin')[0];
  if (!Buffer.isBuffer(bin)) return failure;
  const status = rpc
    .lookupType('google.rpc.Status')
    .toObject(rpc.lookupType('google.rpc.Status').decode(bin), asObject) as any;
  failure.status = { code: status.code, message: status.message };
  for (const d of status.details) {
    const type = String(d.typeUrl).replace('type.googleapis.com/', '');
    failure.detailTypes.push(type);
    const t = rpc.lookupType(type);
    const o = t.toObject(t.decode(d.value), asObject) as any;
    if (type === 'google.rpc.ErrorInfo') failure.info = o;
    if (type === 'google.rpc.BadRequest') failure.violations = o.fieldViolations;
    if (type === 'google.rpc.RetryInfo') failure.retryDelaySeconds = o.retryDelay.seconds;
  }
  return failure;
}

// ---- Clients ----

export interface Watch {
  /** Every message so far. */
  messages: any[];
  /** Resolves when the stream ends: `ok`, or the failure it ended with. */
  ended: Promise<{ ok: true } | ({ ok: false } & Failure)>;
  /** Resolves once `n` messages have arrived. */
  received(n: number): Promise<any[]>;
  cancel(): void;
}

export class TollgateGrpc {
  readonly client: grpc.Client & Record<string, any>;

  constructor(readonly address: string) {
    this.client = new tollgate.tollgate.v1.Tollgate(address, grpc.credentials.createInsecure());
  }

  metadata(token?: string, extra: Record<string, string> = {}): grpc.Metadata {
    const md = new grpc.Metadata();
    if (token !== undefined) md.set('authorization', `Bearer ${token}`);
    for (const [k, v] of Object.entries(extra)) md.set(k, v);
    return md;
  }

  /** A unary call's answer; a failure is thrown as it came (a grpc.ServiceError). */
  call<T = any>(method: string, request: object, token?: string, extra?: Record<string, string>): Promise<T> {
    return new Promise((resolve, reject) =>
      this.client[method](request, this.metadata(token, extra), (e: grpc.ServiceError | null, r: T) =>
        e ? reject(e) : resolve(r),
      ),
    );
  }

  /** The failure a unary call ends with; a call that succeeds fails the test. */
  async failure(method: string, request: object, token?: string, extra?: Record<string, string>): Promise<Failure> {
    try {
      const answer = await this.call(method, request, token, extra);
      throw new Error(`${method} succeeded, answering ${JSON.stringify(answer)}`);
    } catch (e) {
      if (!(e as grpc.ServiceError).metadata) throw e;
      return decodeFailure(e as grpc.ServiceError);
    }
  }

  /** The trailers and answer of a unary call (for x-request-id). */
  callWithTrailers(
    method: string,
    request: object,
    token?: string,
    extra?: Record<string, string>,
  ): Promise<{ answer: any; trailers: grpc.Metadata }> {
    return new Promise((resolve, reject) => {
      let trailers = new grpc.Metadata();
      let answer: any;
      let error: grpc.ServiceError | null = null;
      const c = this.client[method](
        request,
        this.metadata(token, extra),
        (e: grpc.ServiceError | null, r: unknown) => ((error = e), (answer = r)),
      );
      c.on('status', (s: grpc.StatusObject) => {
        trailers = s.metadata;
        if (error) reject(error);
        else resolve({ answer, trailers });
      });
    });
  }

  /** A WatchToolCall stream (or another server stream by `method`, e.g. WatchQuestion). */
  watch(id: string, token?: string, extra?: Record<string, string>, method = 'WatchToolCall'): Watch {
    const stream = this.client[method]({ id }, this.metadata(token, extra));
    const messages: any[] = [];
    const waiting: Array<{ n: number; resolve: (m: any[]) => void }> = [];
    stream.on('data', (m: any) => {
      messages.push(m);
      for (const w of waiting.filter((w) => messages.length >= w.n)) w.resolve(messages.slice());
    });
    const ended = new Promise<{ ok: true } | ({ ok: false } & Failure)>((resolve) => {
      stream.on('error', (e: grpc.ServiceError) => resolve({ ok: false, ...decodeFailure(e) }));
      stream.on('end', () => setImmediate(() => resolve({ ok: true })));
    });
    return {
      messages,
      ended,
      received: (n) =>
        messages.length >= n
          ? Promise.resolve(messages.slice())
          : new Promise((resolve) => waiting.push({ n, resolve })),
      cancel: () => stream.cancel(),
    };
  }

  close(): void {
    this.client.close();
  }
}

export function healthClient(address: string) {
  const client = new health.grpc.health.v1.Health(address, grpc.credentials.createInsecure());
  return {
    client,
    check: (service: string) =>
      new Promise<string>((resolve, reject) =>
        client.Check({ service }, (e: grpc.ServiceError | null, r: { status: string }) =>
          e ? reject(e) : resolve(r.status),
        ),
      ),
    list: () =>
      new Promise<Record<string, string>>((resolve, reject) =>
        client.List({}, (e: grpc.ServiceError | null, r: any) =>
          e
            ? reject(e)
            : resolve(
                Object.fromEntries(Object.entries(r.statuses).map(([k, v]) => [k, (v as { status: string }).status])),
              ),
        ),
      ),
    close: () => client.close(),
  };
}

/** grpc.reflection.v1 (or v1alpha) ServerReflectionInfo: one request, its one answer, as grpcurl asks. */
export function reflectionClient(address: string, version: 'v1' | 'v1alpha' = 'v1') {
  const client = new reflection.grpc.reflection[version].ServerReflection(address, grpc.credentials.createInsecure());
  return {
    ask: (request: object) =>
      new Promise<any>((resolve, reject) => {
        const stream = client.ServerReflectionInfo();
        stream.on('data', (d: unknown) => {
          resolve(d);
          stream.end();
        });
        stream.on('error', reject);
        stream.write(request);
      }),
    close: () => client.close(),
  };
}
