import { INestApplication, Logger, LogLevel } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Server as HttpServer } from 'node:http';
import type { Duplex } from 'node:stream';
import { AddressInfo } from 'node:net';
import type { DestinationStream, Logger as PinoLoggerInstance } from 'pino';
import { DataSource } from 'typeorm';
import type { OutboxConsumer } from './application/ports/outbox.port';
import { DomainError } from './domain/shared/domain-error';
import { AppModule } from './app.module';
import { resolveAuth } from './infrastructure/auth/dev-secret';
import { ConfigError, LogLevelName, TollgateConfig } from './infrastructure/config/config';
import { databaseProblem, dataDirProblem, listenProblem } from './infrastructure/config/startup-errors';
import { accessLog } from './infrastructure/observability/access-log';
import { createLogger, nestLogger } from './infrastructure/observability/logging';
import { configuredKey } from './infrastructure/receipts/receipt-signer';
import { loadDataKeys } from './infrastructure/secrets/data-key';
import { openDataSource } from './infrastructure/database/data-source';
import { EmbeddedPostgres, startEmbeddedPostgres } from './infrastructure/database/embedded-postgres';
import { InProcessWaiters } from './infrastructure/waiting/in-process-waiters';
import { EventFeed } from './infrastructure/streaming/event-feed';
import { ACTION_ROUTE } from './adapters/actions/actions.controller';
import { SLACK_INTERACTIONS_PATH } from './adapters/slack/slack-interactions.controller';
import { setupOpenApi } from './adapters/http/openapi';
import { answerWithProblem } from './adapters/http/problem.filter';
import { useBodyParsers } from './adapters/http/body-parsers';
import { requestIdOf, requestIds } from './adapters/http/request-id.hook';
import { httpMetrics, TollgateMetrics } from './adapters/metrics/metrics';
import { GrpcServer } from './adapters/grpc/grpc-server';
import { applyPolicyDocument, PolicyFileWatcher, readPolicyFile } from './adapters/policy-file/policy-file';

export interface RunningServer {
  app: INestApplication;
  config: TollgateConfig;
  dataSource: DataSource;
  /** Base URL once listening, e.g. http://127.0.0.1:8080 */
  url: string;
  /** Where gRPC listens, e.g. 127.0.0.1:8081; undefined when TOLLGATE_GRPC_PORT is off. */
  grpcAddress?: string;
  /** The server's pino logger (JSON or pretty, at the configured level). */
  logger: PinoLoggerInstance;
  close(): Promise<void>;
}

export interface StartOptions {
  /** `false`: no logs at all (tests); a list of Nest levels: the most verbose one listed. Default: `config.logLevel`. */
  logLevels?: LogLevel[] | false;
  /** Where log lines go instead of stdout (tests read them). */
  logDestination?: DestinationStream;
  outboxConsumers?: OutboxConsumer[];
}

/** What the service does first with every request (request id, access log, metrics), as Fastify hooks. */
type OnRequestHook = (req: FastifyRequest, reply: FastifyReply, done: () => void) => void;

const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'];
const BODY_LIMIT = 1024 * 1024;

/**
 * Starts Tollgate: the database (embedded PGlite unless DATABASE_URL), migrations, the Nest app,
 * the policy file, then the HTTP and gRPC listeners. `close()` stops them in reverse order. What an operator
 * must fix (a busy port, a data dir in use, a database out of reach) is thrown as a one-line ConfigError.
 */
export async function startServer(raw: TollgateConfig, opts: StartOptions = {}): Promise<RunningServer> {
  const logger = createLogger({
    level: levelOf(opts.logLevels, raw.logLevel),
    format: raw.logFormat,
    instanceId: raw.instanceId,
    destination: opts.logDestination,
  });
  let config = raw;
  try {
    config = resolveAuth(raw);
  } catch (e) {
    throw dataDirProblem(e, raw.dataDir) ?? e;
  }
  // A configured signing key that will not do stops the start before any database is opened.
  if (config.signingKey || config.signingKeyFile) await configuredKey(config);
  // So does a configured data key that is not 32 bytes (secret arguments: infrastructure/secrets/data-key.ts).
  if (config.dataKey || config.dataKeyFile) loadDataKeys(config);
  let embedded: EmbeddedPostgres | undefined;
  let dataSource: DataSource | undefined;
  try {
    dataSource = await openDatabase(config, (e) => (embedded = e));
    let hooks: OnRequestHook[] = [];
    const app = await NestFactory.create<NestFastifyApplication>(
      AppModule.forRoot(config, dataSource, { outboxConsumers: opts.outboxConsumers }),
      httpAdapter(() => hooks),
      { bodyParser: false, logger: nestLogger(logger) },
    );
    let grpcAddress: string | undefined;
    try {
      hooks = configureHttp(app, logger);
      await app.init();
      if (config.policyFile) await loadPolicyFile(app, config.policyFile);
      // gRPC first, so that once /health/ready answers both serve. A busy gRPC port is a ConfigError naming TOLLGATE_GRPC_PORT.
      if (config.grpcPort !== undefined)
        grpcAddress = await app.get(GrpcServer).listen(config.host, config.grpcPort, logger);
      await app.listen(config.port, config.host);
    } catch (e) {
      await app.close().catch(() => undefined); // its timers and listeners go with it
      throw listenProblem(e, config.host, config.port) ?? e;
    }
    const address = app.getHttpServer().address() as AddressInfo;
    const ds = dataSource;
    // Watched from now on: a change is applied as a new version when it differs; an invalid file is logged and ignored.
    const policyWatcher = config.policyFile
      ? new PolicyFileWatcher(app.get(CommandBus), config.policyFile, new Logger('Policy')).start()
      : undefined;
    return {
      app,
      config,
      dataSource: ds,
      logger,
      url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${address.port}`,
      grpcAddress,
      async close() {
        await policyWatcher?.stop();
        await Promise.all([drainHttp(app), app.get(GrpcServer).close()]);
        await app.close();
        await ds.destroy().catch(() => undefined);
        await embedded?.stop();
      },
    };
  } catch (e) {
    await dataSource?.destroy().catch(() => undefined);
    await embedded?.stop();
    throw e;
  }
}

/** The embedded database or DATABASE_URL's, migrated; a refusal the operator can fix becomes a ConfigError. */
async function openDatabase(config: TollgateConfig, started: (e: EmbeddedPostgres) => void): Promise<DataSource> {
  if (config.databaseUrl) {
    try {
      return await openDataSource({ url: config.databaseUrl, directUrl: config.databaseDirectUrl }, config.migrate);
    } catch (e) {
      throw databaseProblem(e, config.databaseUrl) ?? e;
    }
  }
  let embedded: EmbeddedPostgres;
  try {
    embedded = await startEmbeddedPostgres(config.dataDir);
  } catch (e) {
    throw dataDirProblem(e, config.dataDir) ?? e;
  }
  started(embedded);
  return openDataSource({ embedded }, config.migrate);
}

/**
 * Graceful stop: take no new connections, answer every long-poll with the call as it stands, let in-flight
 * requests finish (at most 10 s), and close keep-alive connections as they fall idle.
 */
async function drainHttp(app: INestApplication): Promise<void> {
  const http = app.getHttpServer() as HttpServer;
  if (!http.listening) return;
  const closed = new Promise<void>((resolve) => http.close(() => resolve()));
  app.get(InProcessWaiters).beforeApplicationShutdown(); // long-polls answer with the call as it stands
  app.get(EventFeed).beforeApplicationShutdown(); // event streams end; clients reconnect elsewhere with Last-Event-ID
  const idle = setInterval(() => http.closeIdleConnections(), 50);
  const deadline = setTimeout(() => http.closeAllConnections(), 10_000);
  await closed;
  clearInterval(idle);
  clearTimeout(deadline);
}

/**
 * Fastify under Nest: no logger of its own (the access log is a hook), the request id from X-Request-Id, Node's
 * timeouts as Express had them, and routes matched as Express matched them (a trailing slash is the same route,
 * a long id reaches its handler rather than a 414).
 */
function httpAdapter(onRequest: () => OnRequestHook[]): FastifyAdapter {
  return new FastifyAdapter({
    logger: false,
    genReqId: requestIdOf,
    bodyLimit: BODY_LIMIT,
    keepAliveTimeout: 5_000,
    requestTimeout: 300_000,
    clientErrorHandler: answerMalformedRequest,
    // What the router refuses before any hook runs (a malformed %-encoding in the path) is answered here: it gets
    // its request id and access line from the same hooks, then a problem, as everything else does.
    frameworkErrors: (e: Error, req: FastifyRequest, reply: FastifyReply) => {
      const hooks = onRequest();
      const next = (i: number): void =>
        i < hooks.length ? hooks[i](req, reply, () => next(i + 1)) : answerWithProblem(reply, e);
      next(0);
    },
    // No Nest middleware, so no @fastify/middie on every request: the request id, access log and metrics are hooks.
    skipMiddie: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 16_384 },
  });
}

/** Requests Node refuses before any handler runs (oversized headers, bad framing) still get an RFC 9457 problem. */
function answerMalformedRequest(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const body = JSON.stringify({
    type: `urn:tollgate:problem:${tooLarge ? 'headers_too_large' : 'bad_request'}`,
    title: tooLarge ? 'Request Header Fields Too Large' : 'Bad Request',
    status,
    detail: tooLarge ? 'The request line and headers exceed 16 KiB' : 'The request is not valid HTTP',
    code: tooLarge ? 'headers_too_large' : 'validation_failed',
  });
  socket.end(
    `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Request ids, access log, metrics, body parsing (limits, YAML policies, Slack's signed bytes) and the OpenAPI
 * document. Fastify sends no `X-Powered-By` and computes no ETag (API answers are never cached; the web inbox's
 * assets set their own). Returns the request hooks, which also run for what the router refuses (httpAdapter).
 */
export function configureHttp(app: NestFastifyApplication, logger: PinoLoggerInstance): OnRequestHook[] {
  const fastify = app.getHttpAdapter().getInstance();
  // First, so every request gets its id and its line, including those a body parser refuses.
  const hooks: OnRequestHook[] = [requestIds, accessLog(logger), httpMetrics(app.get(TollgateMetrics))];
  for (const hook of hooks) fastify.addHook('onRequest', hook);
  useBodyParsers(fastify, {
    limit: BODY_LIMIT,
    textTypes: YAML_TYPES,
    rawBodyRoutes: [SLACK_INTERACTIONS_PATH, ACTION_ROUTE],
  });
  setupOpenApi(app);
  return hooks;
}

async function loadPolicyFile(app: INestApplication, path: string): Promise<void> {
  let document: unknown;
  try {
    document = readPolicyFile(path);
  } catch (e) {
    throw new ConfigError(`TOLLGATE_POLICY_FILE ${path} cannot be read: ${(e as Error).message}`);
  }
  let loaded: { policy: { version: number }; changed: boolean };
  try {
    loaded = await applyPolicyDocument(app.get(CommandBus), document);
  } catch (e) {
    if (e instanceof DomainError && e.kind === 'invalid')
      throw new ConfigError(`TOLLGATE_POLICY_FILE ${path} is not a valid policy: ${e.message}`);
    throw e;
  }
  const { policy, changed } = loaded;
  new Logger('Policy').log(
    changed ? `Loaded ${path} as policy version ${policy.version}` : `${path} matches policy version ${policy.version}`,
  );
}

/** Tests pass Nest's level lists (or false, for silence); the server its configured level. */
function levelOf(levels: LogLevel[] | false | undefined, configured: LogLevelName): LogLevelName {
  if (levels === undefined) return configured;
  if (levels === false || levels.length === 0) return 'silent';
  const order: Array<[LogLevel, LogLevelName]> = [
    ['verbose', 'trace'],
    ['debug', 'debug'],
    ['log', 'info'],
    ['warn', 'warn'],
    ['error', 'error'],
    ['fatal', 'fatal'],
  ];
  return order.find(([nest]) => levels.includes(nest))?.[1] ?? 'info';
}
