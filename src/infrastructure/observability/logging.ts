import type { LoggerService } from '@nestjs/common';
import { Logger as NestPinoLogger, PinoLogger } from 'nestjs-pino';
import { hostname } from 'node:os';
import pino, { DestinationStream, Logger, LoggerOptions } from 'pino';
import type { LogFormat, LogLevelName } from '../config/config';
import { RequestContext, RequestContexts } from '../context/request-context';
import { activeTraceFields } from './trace-context';

export interface LogSettings {
  level: LogLevelName;
  /** Unset: pretty on a terminal, JSON otherwise. */
  format?: LogFormat;
  instanceId?: string;
  /** Where lines go (tests capture them); default stdout. */
  destination?: DestinationStream;
}

/**
 * Never written, whatever logs them: credentials in headers (bearer tokens, cookies, Slack's signature),
 * secrets in objects that end up in a log (webhook and Slack secrets, tokens), and the bound parameters of a
 * failed query (a webhook's secret is one). URLs are logged without their query string, so `?access_token=`
 * and the like never reach a line either.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-slack-signature"]',
  'req.headers["webhook-signature"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.Authorization',
  'headers.cookie',
  'headers["set-cookie"]',
  'headers["x-slack-signature"]',
  'headers["webhook-signature"]',
  '*.headers.authorization',
  '*.headers.Authorization',
  '*.headers.cookie',
  'err.config.headers.Authorization',
  'err.parameters',
  'err.driverError.parameters',
  'secret',
  '*.secret',
  'token',
  '*.token',
  'access_token',
  '*.access_token',
  'botToken',
  '*.botToken',
  'signingSecret',
  '*.signingSecret',
  'password',
  '*.password',
  // The data key (config) and a call's sealed secret arguments (its row), should either ever reach a log line.
  'dataKey',
  '*.dataKey',
  'sealedArguments',
  '*.sealedArguments',
];

export function resolveLogFormat(
  format: LogFormat | undefined,
  stdout: { isTTY?: boolean } = process.stdout,
): LogFormat {
  return format ?? (stdout.isTTY ? 'pretty' : 'json');
}

/**
 * The one pino logger of a server. JSON: one object per line with an ISO `time`, the `level` by name, and the
 * active span's `trace_id`/`span_id` when tracing is on. Pretty: one coloured line per entry, for people.
 */
export function createLogger(s: LogSettings): Logger {
  const format = resolveLogFormat(s.format);
  const options: LoggerOptions = {
    level: s.level,
    base: { pid: process.pid, hostname: hostname(), ...(s.instanceId ? { instance: s.instanceId } : {}) },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    mixin: activeTraceFields,
    serializers: { err: pino.stdSerializers.err },
  };
  if (format === 'json') {
    options.timestamp = pino.stdTimeFunctions.isoTime;
    options.formatters = { level: (label) => ({ level: label }) };
  }
  return pino(
    options,
    s.destination ?? (format === 'pretty' ? prettyStream() : pino.destination({ dest: 1, sync: true })),
  );
}

/** Synchronous, so the lines of a failing start or a stop are all out before the process exits. */
function prettyStream(): DestinationStream {
  // Loaded only when used: JSON servers never need it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { build } = require('pino-pretty') as typeof import('pino-pretty');
  return build({
    colorize: !!process.stdout.isTTY,
    sync: true,
    translateTime: 'SYS:HH:MM:ss.l',
    // The access line's message already says method, route, status and duration.
    ignore: 'pid,hostname,instance,context,method,route,path,status,duration_ms',
    messageFormat: '{if context}[{context}] {end}{msg}',
    singleLine: true,
  });
}

/**
 * nestjs-pino's logger for one server: inside a request (or a gRPC call), a child whose lines carry the request's
 * `req_id`; outside, this server's own. Each server keeps its own: tests start several in one process.
 */
class ServerPinoLogger extends PinoLogger {
  /** The logger of each request that logged something, made on its first line: most requests log nothing. */
  private readonly requests = new WeakMap<RequestContext, Logger>();

  constructor(private readonly own: Logger) {
    super({ pinoHttp: { logger: own }, useExisting: true });
  }

  override get logger(): Logger {
    const ctx = RequestContexts.current();
    if (!ctx) return this.own;
    let child = this.requests.get(ctx);
    if (!child) this.requests.set(ctx, (child = this.own.child({ req_id: ctx.correlationId })));
    return child;
  }
}

/** The Nest logger of a server, writing through nestjs-pino to `logger`. */
export function nestLogger(logger: Logger): LoggerService {
  return new NestLogBridge(new NestPinoLogger(new ServerPinoLogger(logger), {}));
}

/** Nest's start-up chatter (a line per module and per route): kept for `debug`, not shown at `info`. */
const STARTUP_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
]);

/**
 * What Nest logs, through nestjs-pino's logger, minus the noise: route mapping and module loading go to
 * `debug`, and Nest's own report of a failed `listen` is dropped (start-up explains it on one line instead).
 */
class NestLogBridge implements LoggerService {
  constructor(private readonly inner: LoggerService) {}

  log(message: unknown, ...rest: unknown[]): void {
    if (STARTUP_CONTEXTS.has(rest[rest.length - 1] as string)) this.inner.debug?.(message, ...rest);
    else this.inner.log(message, ...rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    if (rest[rest.length - 1] === 'NestApplication' && /listen E[A-Z]+/.test(String(message))) return;
    this.inner.error(message, ...rest);
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.inner.warn(message, ...rest);
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.inner.debug?.(message, ...rest);
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.inner.verbose?.(message, ...rest);
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    (this.inner.fatal ?? this.inner.error).call(this.inner, message, ...rest);
  }
}
