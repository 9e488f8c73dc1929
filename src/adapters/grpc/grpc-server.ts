import * as grpc from '@grpc/grpc-js';
import type { ServiceDefinition } from '@grpc/proto-loader';
import { BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import type { Context, Span } from '@opentelemetry/api';
import { context as otelContext, SpanStatusCode } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { hasAnyRole, isAgent, Principal } from '../../domain/shared/actor';
import { ValidationError } from '../../domain/shared/domain-error';
import { InvalidTokenError, JwtVerifier } from '../../infrastructure/auth/jwt-verifier';
import { grpcListenProblem } from '../../infrastructure/config/startup-errors';
import { correlationIdFrom, RequestContexts } from '../../infrastructure/context/request-context';
import { logRpc } from '../../infrastructure/observability/access-log';
import { startServerSpan } from '../../infrastructure/observability/trace-context';
import { AuthFailureLimiter } from '../api/auth-failures';
import { TollgateMetrics } from '../metrics/metrics';
import { grpcError, TOLLGATE_CODE } from './grpc-errors';
import { GrpcHealth, HEALTH_PROTO } from './grpc-health';
import {
  DEFAULT_GRPC_LIMITS,
  GrpcLimits,
  AnonymousCalls,
  headersTooLarge,
  metadataBytes,
  serverOptions,
  tooManyAnonymous,
} from './grpc-limits';
import { loadForReflection, loadTollgateProto, protoDir, TOLLGATE_PROTO, TOLLGATE_SERVICE } from './proto';
import { addReflection } from './reflection';
import { closeConnection, decodingSafely, notFoundUnlessId, resetUnlessHalfClosed, UNDECODABLE } from './grpc-requests';
import { RpcCall, TollgateRpcs } from './tollgate.rpcs';
import { ForbiddenError, UnauthenticatedError } from '../api/errors';
import { TokenRateLimit } from '../api/limits';

type Msg = Record<string, unknown>;

interface Method {
  /** The caller needs one of these roles (PERMISSION_DENIED otherwise), as the REST route's @Roles. */
  roles?: string[];
  /** The request field naming what the call looks up, and what it names: an id that cannot exist is not looked up. */
  lookup?: readonly ['id' | 'conversationId', string];
  unary?: (r: TollgateRpcs, c: RpcCall, req: any) => Promise<Msg>; // eslint-disable-line @typescript-eslint/no-explicit-any
  stream?: (r: TollgateRpcs, c: RpcCall, req: any, send: (m: Msg) => void) => Promise<void>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** tollgate.v1.Tollgate's methods: each one's role check and the TollgateRpcs method that serves it. */
const METHODS: Record<string, Method> = {
  StartConversation: { roles: ['agent'], unary: (r, c, q) => r.startConversation(c, q) },
  GetConversation: { lookup: ['conversationId', 'Conversation'], unary: (r, c, q) => r.getConversation(c, q) },
  ProposeToolCalls: { lookup: ['conversationId', 'Conversation'], unary: (r, c, q) => r.proposeToolCalls(c, q) },
  GetToolCall: { lookup: ['id', 'Tool call'], unary: (r, c, q) => r.getToolCall(c, q) },
  WatchToolCall: { lookup: ['id', 'Tool call'], stream: (r, c, q, send) => r.watchToolCall(c, q, send) },
  DecideToolCall: { lookup: ['id', 'Tool call'], unary: (r, c, q) => r.decideToolCall(c, q) },
  ClaimExecution: { lookup: ['id', 'Tool call'], unary: (r, c, q) => r.claimExecution(c, q) },
  ReportResult: { lookup: ['id', 'Tool call'], unary: (r, c, q) => r.reportResult(c, q) },
  ListApprovals: { unary: (r, c, q) => r.listApprovals(c, q) },
  RegisterTool: { roles: ['agent', 'admin'], unary: (r, c, q) => r.registerTool(c, q) },
  GetMe: { unary: (r, c) => r.getMe(c) },
  GetStatus: { roles: ['admin', 'approver', 'auditor'], unary: (r, c) => r.getStatus(c) },
  AskQuestion: {
    lookup: ['conversationId', 'Conversation'],
    roles: ['agent'],
    unary: (r, c, q) => r.askQuestion(c, q),
  },
  GetQuestion: { lookup: ['id', 'Question'], unary: (r, c, q) => r.getQuestion(c, q) },
  WatchQuestion: { lookup: ['id', 'Question'], stream: (r, c, q, send) => r.watchQuestion(c, q, send) },
  AnswerQuestion: { lookup: ['id', 'Question'], unary: (r, c, q) => r.answerQuestion(c, q) },
};

/** How long a stop lets calls in flight finish before it cuts them (as HTTP's drain). */
const SHUTDOWN_GRACE_MS = 10_000;
const BEARER = /^Bearer\s+([A-Za-z0-9_\-.=]+)$/i;
const HEALTH_SERVICE = 'grpc.health.v1.Health';
/**
 * Statuses that mean the server failed (logged at error, with the error; a span marked failed). Not CANCELLED,
 * DEADLINE_EXCEEDED or UNIMPLEMENTED: a client that goes away, its deadline or the request time passing, a call
 * without its message or to a method this server lacks are the client's doing, and a flood of them is no fault.
 */
const SERVER_FAULTS = new Set([
  grpc.status.UNKNOWN,
  grpc.status.INTERNAL,
  grpc.status.DATA_LOSS,
  grpc.status.UNAVAILABLE,
]);

/** What the access line, the metrics and the span of one call gather while it runs. */
interface CallRecord {
  reqId: string;
  started: bigint;
  span: Span;
  context: Context;
  remoteAddr?: string;
  principal?: Principal;
  error?: unknown;
  done: boolean;
  /** Frees the call's place among the anonymous ones (health, reflection) when it ends. */
  release?: () => void;
  /** Ends the call if its request has not all come in time; cleared once it has. */
  timer?: NodeJS.Timeout;
  /** The caller's address is past its failed-authentication budget: the call is refused and the connection closed. */
  pastFailureBudget?: boolean;
}

/**
 * The gRPC adapter: tollgate.v1.Tollgate (TollgateRpcs, the same commands and queries as REST), the standard
 * health service and server reflection, on TOLLGATE_GRPC_PORT beside HTTP. Authentication, roles, rate limits
 * and error mapping happen here, around each method; an interceptor gives every call (health and reflection
 * included) its access line, metrics, span and request id.
 */
@Injectable()
export class GrpcServer implements BeforeApplicationShutdown {
  private server?: grpc.Server;
  private health?: GrpcHealth;
  private logger?: Logger;
  private closing = false;
  private stopped?: Promise<void>;
  /** Calls in flight, aborted when the server stops (watches answer with the call as it stands and end). */
  private readonly inFlight = new Set<AbortController>();
  private readonly records = new WeakMap<grpc.Metadata, CallRecord>();
  private limits: GrpcLimits = DEFAULT_GRPC_LIMITS;
  private anonymous = new AnonymousCalls(DEFAULT_GRPC_LIMITS.maxAnonymousPerAddress, DEFAULT_GRPC_LIMITS.maxAnonymous);

  constructor(
    private readonly rpcs: TollgateRpcs,
    private readonly verifier: JwtVerifier,
    private readonly rateLimit: TokenRateLimit,
    private readonly metrics: TollgateMetrics,
    private readonly dataSource: DataSource,
    /** Failed authentications per address, one budget with REST's (TOLLGATE_AUTH_FAILURE_LIMIT). */
    @Inject(AuthFailureLimiter) private readonly failures: AuthFailureLimiter,
  ) {}

  /**
   * Binds `host:port` (0: a free port) and serves; answers the address bound, e.g. `127.0.0.1:8081`. A port in
   * use, or one this user may not take, is a ConfigError naming TOLLGATE_GRPC_PORT. `limits` (tests) override
   * DEFAULT_GRPC_LIMITS.
   */
  async listen(host: string, port: number, logger: Logger, limits: Partial<GrpcLimits> = {}): Promise<string> {
    this.logger = logger;
    this.limits = { ...DEFAULT_GRPC_LIMITS, ...limits };
    this.anonymous = new AnonymousCalls(this.limits.maxAnonymousPerAddress, this.limits.maxAnonymous);
    // grpc-js's own diagnostics go to the server's log, not to stderr around the start-up's one line.
    grpc.setLogger({
      error: (...a: unknown[]) => logger.debug({ grpc: a.join(' ') }, 'grpc-js'),
      info: () => undefined,
      debug: () => undefined,
    });
    grpc.setLogVerbosity(grpc.logVerbosity.ERROR);
    const server = new grpc.Server({
      ...serverOptions(this.limits),
      interceptors: [(descriptor, call) => this.observe(descriptor, call)],
    });
    const tollgate = loadTollgateProto();
    server.addService(decodingSafely(tollgate.service), this.handlers(tollgate.service));
    this.health = new GrpcHealth(this.dataSource, [TOLLGATE_SERVICE]);
    this.health.addToServer(server);
    addReflection(server, [loadForReflection(TOLLGATE_PROTO, [protoDir()]), loadForReflection(HEALTH_PROTO)]);
    const address = `${host.includes(':') ? `[${host}]` : host}`;
    let bound: number;
    try {
      bound = await new Promise<number>((resolve, reject) =>
        server.bindAsync(`${address}:${port}`, grpc.ServerCredentials.createInsecure(), (e, p) =>
          e ? reject(e) : resolve(p),
        ),
      );
    } catch (e) {
      server.forceShutdown();
      throw grpcListenProblem(e, host, port) ?? e;
    }
    this.server = server;
    await this.health.refresh();
    return `${address}:${bound}`;
  }

  /**
   * Graceful stop: health turns NOT_SERVING, no new calls are taken, each watch answers with the call as it
   * stands and ends (UNAVAILABLE: watch again), calls in flight finish (at most 10 s, then they are cut).
   */
  close(): Promise<void> {
    return (this.stopped ??= this.stop());
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.close();
  }

  private async stop(): Promise<void> {
    this.closing = true;
    const server = this.server;
    if (!server) return;
    this.health?.close();
    for (const c of this.inFlight) c.abort();
    await new Promise<void>((resolve) => {
      const cut = setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, SHUTDOWN_GRACE_MS);
      server.tryShutdown(() => {
        clearTimeout(cut);
        resolve();
      });
    });
  }

  private handlers(service: ServiceDefinition): grpc.UntypedServiceImplementation {
    const impl: grpc.UntypedServiceImplementation = {};
    for (const name of Object.keys(service)) {
      const m = METHODS[name];
      if (m.unary) {
        const run = m.unary;
        impl[name] = (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
          void this.serve(name, m, call, (c) => run(this.rpcs, c, call.request)).then(
            (answer) => callback(null, answer),
            (e) => callback(this.failed(call.metadata, e)),
          );
        };
      } else {
        const run = m.stream!;
        impl[name] = (call: grpc.ServerWritableStream<unknown, unknown>) => {
          void this.serve(name, m, call, (c) => run(this.rpcs, c, call.request, (msg) => call.write(msg))).then(
            () => call.end(),
            (e) => call.emit('error', this.failed(call.metadata, e)),
          );
        };
      }
    }
    return impl;
  }

  /** One call of tollgate.v1.Tollgate, admitted by the interceptor: in its span and request context, its request checked, served. */
  private async serve<T>(
    name: string,
    m: Method,
    call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>,
    run: (c: RpcCall) => Promise<T>,
  ): Promise<T> {
    const rec = this.records.get(call.metadata)!;
    return otelContext.with(rec.context, () =>
      RequestContexts.run({ correlationId: rec.reqId }, async () => {
        const principal = rec.principal!;
        const request = call.request as { [UNDECODABLE]?: string } | undefined;
        if (request?.[UNDECODABLE] !== undefined)
          throw new ValidationError([{ path: '', message: `is not a valid ${name} request: ${request[UNDECODABLE]}` }]);
        if (m.lookup) notFoundUnlessId((request as Record<string, unknown>)[m.lookup[0]], m.lookup[1]);
        const abort = new AbortController();
        const cancelled = () => abort.abort();
        call.once('cancelled', cancelled);
        this.inFlight.add(abort);
        if (this.closing) abort.abort();
        try {
          const channel = call.metadata.get('x-tollgate-channel')[0];
          return await run({
            principal,
            channel: typeof channel === 'string' ? channel : undefined,
            signal: abort.signal,
            closing: () => this.closing,
          });
        } finally {
          this.inFlight.delete(abort);
          call.off('cancelled', cancelled);
        }
      }),
    );
  }

  /**
   * What depends on the caller alone, checked as soon as its metadata arrives (before its message is read, so that
   * neither a caller without a token nor one past its rate can make the server hold calls): the token, the
   * method's roles (as the REST route's @Roles), the token's rate.
   */
  private async admit(path: string, metadata: grpc.Metadata, rec: CallRecord): Promise<void> {
    const name = path.slice(path.lastIndexOf('/') + 1);
    const principal = (rec.principal = await this.authenticate(metadata, rec.remoteAddr, rec));
    const roles = METHODS[name]?.roles;
    if (roles && !hasAnyRole(principal, roles)) {
      const agent = isAgent(principal) ? 'An agent token acts only as an agent, whatever other roles it carries. ' : '';
      throw new ForbiddenError(`${agent}This needs one of the roles: ${roles.join(', ')}`);
    }
    await this.rateLimit.hit(principal, `${TOLLGATE_SERVICE}-${name}`);
    // As REST's interceptor: the person behind the call is kept on record (written only when something changed).
    await this.rpcs.seen(principal);
  }

  /** As REST's AuthGuard: a token known good at once; else the address's failure budget (no crypto for a flood), then the token. */
  private async authenticate(
    metadata: grpc.Metadata,
    address: string | undefined,
    rec: CallRecord,
  ): Promise<Principal> {
    const header = metadata.get('authorization')[0];
    const m = typeof header === 'string' ? BEARER.exec(header.trim()) : null;
    // A token verified before passes whatever the address's failures: only failures are counted against it.
    const known = m ? this.verifier.remembered(m[1]) : undefined;
    if (known) return { ...known, via: 'grpc' };
    rec.pastFailureBudget = true;
    this.failures.check(address);
    rec.pastFailureBudget = false;
    if (!m) {
      this.failures.recordFailure(address);
      throw new UnauthenticatedError('Send authorization: Bearer <JWT> metadata');
    }
    try {
      // Recorded as the channel of what an agent does over gRPC (a person's decision names its own).
      return { ...(await this.verifier.verify(m[1])), via: 'grpc' };
    } catch (e) {
      if (!(e instanceof InvalidTokenError)) throw e;
      this.failures.recordFailure(address);
      throw new UnauthenticatedError(`Invalid token: ${e.message}`);
    }
  }

  private failed(metadata: grpc.Metadata, e: unknown): grpc.ServiceError {
    const answer = grpcError(e);
    const rec = this.records.get(metadata);
    if (rec && SERVER_FAULTS.has(answer.code)) rec.error = e;
    return Object.assign(new Error(answer.details), answer) as grpc.ServiceError;
  }

  /**
   * The interceptor of every call: request id and span; then, before the handler sees anything, the bounds on what
   * a peer may make the server hold (metadata size, time for the request to come in, open health and reflection
   * calls) and, for tollgate.v1.Tollgate, the token, so that a caller without one is answered before its message
   * is read; when the call ends, its access line and metrics.
   */
  private observe(
    descriptor: grpc.ServerMethodDefinition<unknown, unknown>,
    call: grpc.ServerInterceptingCallInterface,
  ): grpc.ServerInterceptingCall {
    const path = descriptor.path;
    let rec: CallRecord | undefined;
    /** Headers went out before the status (else the status is a trailers-only answer). */
    let answered = false;
    const arrived = () => {
      clearTimeout(rec?.timer);
      if (rec) rec.timer = undefined;
    };
    const finish = (code: grpc.status, trailers?: grpc.Metadata | null, clientClosed = false) => {
      if (!rec || rec.done) return;
      rec.done = true;
      arrived();
      rec.release?.();
      const seconds = Number(process.hrtime.bigint() - rec.started) / 1e9;
      const status = grpc.status[code] ?? String(code);
      const problemCode = trailers?.get(TOLLGATE_CODE)[0];
      // A watch the server ends while it stops is part of stopping, not a failure.
      const fault = SERVER_FAULTS.has(code) && !clientClosed && !(this.closing && problemCode === 'unavailable');
      rec.span.setAttribute('rpc.grpc.status_code', code);
      if (fault) rec.span.setStatus({ code: SpanStatusCode.ERROR, message: status });
      rec.span.end();
      this.metrics.grpcCall(path, status, seconds);
      const quiet = path.startsWith(`/${HEALTH_SERVICE}/`) && code === grpc.status.OK;
      if (this.logger) {
        logRpc(this.logger, {
          reqId: rec.reqId,
          path,
          status,
          code,
          durationMs: Math.round(seconds * 1000),
          principal: rec.principal,
          problemCode: typeof problemCode === 'string' ? problemCode : undefined,
          error: fault ? rec.error : undefined,
          level: fault ? 'error' : quiet ? 'debug' : 'info',
          clientClosed,
          remoteAddr: rec.remoteAddr,
          span: rec.span,
        });
      }
    };
    const intercepting = new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, pass) => {
            const r = (rec = this.record(path, metadata, call.getConnectionInfo().remoteAddress));
            const refuse = (e: unknown) => intercepting.sendStatus(this.failed(metadata, e));
            if (metadataBytes(metadata) > this.limits.maxMetadataBytes) {
              refuse(headersTooLarge(this.limits.maxMetadataBytes));
              return closeConnection(call);
            }
            const tollgate = path.startsWith(`/${TOLLGATE_SERVICE}/`);
            if (!tollgate && !(r.release = this.anonymous.take(r.remoteAddr))) return refuse(tooManyAnonymous());
            const seconds = this.limits.requestTimeoutMs / 1000;
            r.timer = setTimeout(
              () =>
                intercepting.sendStatus({
                  code: grpc.status.DEADLINE_EXCEEDED,
                  details: `The request did not come in within ${seconds} s`,
                  metadata: new grpc.Metadata(),
                }),
              this.limits.requestTimeoutMs,
            );
            r.timer.unref(); // a stalled call does not keep a stopping process alive
            if (!tollgate) return pass(metadata);
            otelContext
              .with(r.context, () =>
                RequestContexts.run({ correlationId: r.reqId }, () => this.admit(path, metadata, r)),
              )
              .then(
                () => pass(metadata),
                (e) => {
                  refuse(e);
                  // A peer past its failed-authentication budget is flooding: it reconnects before it tries again.
                  if (r.pastFailureBudget) closeConnection(call);
                },
              );
          },
          // A stream of requests (reflection) has come in with its first message; a single request with its end.
          onReceiveMessage: (message, next) => {
            if (descriptor.requestStream) arrived();
            next(message);
          },
          onReceiveHalfClose: (next) => {
            arrived();
            next();
          },
          onCancel: () => finish(grpc.status.CANCELLED, undefined, true),
        }),
      sendMetadata: (metadata, next) => {
        if (rec) metadata.set('x-request-id', rec.reqId);
        answered = true;
        next(metadata);
      },
      sendStatus: (status, next) => {
        const trailers = status.metadata ?? new grpc.Metadata();
        if (rec) trailers.set('x-request-id', rec.reqId);
        finish(status.code, trailers);
        next({ ...status, metadata: trailers });
        if (!answered) resetUnlessHalfClosed(call);
      },
    });
    return intercepting;
  }

  /** A call's record, from its metadata: request id, and a span that continues the caller's trace. */
  private record(path: string, metadata: grpc.Metadata, remoteAddr: string | undefined): CallRecord {
    const reqId = correlationIdFrom(metadata.get('x-request-id')[0] as string | undefined);
    const carrier = { traceparent: text(metadata, 'traceparent'), tracestate: text(metadata, 'tracestate') };
    const [, service = '', method = ''] = path.split('/');
    const { span, context } = startServerSpan(
      path.slice(1),
      { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method },
      carrier,
    );
    const rec: CallRecord = { reqId, started: process.hrtime.bigint(), span, context, remoteAddr, done: false };
    this.records.set(metadata, rec);
    return rec;
  }
}

function text(metadata: grpc.Metadata, key: string): string | undefined {
  const v = metadata.get(key)[0];
  return typeof v === 'string' ? v : undefined;
}
