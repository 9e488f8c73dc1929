import type { NodeSDKConfiguration } from '@opentelemetry/sdk-node';
import { IncomingMessage } from 'node:http';
import { packageVersion } from '../package-info';
import { SERVER_SPAN } from './trace-context';

/**
 * OpenTelemetry tracing, configured by the standard OTEL_* environment and started only when it asks for
 * traces: `OTEL_TRACES_EXPORTER` (otlp, console; `none` is off) or an OTLP endpoint. Otherwise the SDK is not
 * even loaded and tracing costs nothing. `OTEL_SDK_DISABLED=true` turns it off whatever else is set.
 *
 * Must run before `http` and `pg` are loaded by the server: the instrumentations patch them as they are
 * required. Nest is ES modules, which `require` hooks do not see, so the CommonJS modules it imports are
 * required here first and patched in place.
 *
 * Spans: every HTTP request but probes and scrapes (W3C `traceparent` honoured), named for its route by the
 * access log's hook (which sets the route the HTTP instrumentation reads; no span per Fastify hook or handler,
 * which would say little more and cost on every request), the queries made on behalf of
 * a traced operation (queries of idle background loops make no traces), outgoing HTTP (webhooks, Slack; the
 * `traceparent` header goes out with them), and the outbox's deliveries. gRPC calls get their server span from
 * the gRPC adapter itself (trace-context.ts's startServerSpan, `traceparent` metadata honoured): it knows each
 * call's method and status, which an instrumentation of grpc-js would see only from outside.
 */
export interface Tracing {
  /** Flushes spans not yet exported. */
  shutdown(): Promise<void>;
}

export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (/^(true|1)$/i.test(env.OTEL_SDK_DISABLED ?? '')) return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (exporters.length > 0) return !exporters.every((e) => e === 'none');
  return !!(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** Starts the SDK when the environment asks for traces; undefined (and nothing loaded) otherwise. */
export function startTracing(env: NodeJS.ProcessEnv = process.env): Tracing | undefined {
  if (!tracingRequested(env)) return undefined;
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const { NodeSDK, resources } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const sdk = new NodeSDK({
    // OTEL_SERVICE_NAME, when set, names the service; the option would override it.
    serviceName: env.OTEL_SERVICE_NAME ? undefined : 'tollgate',
    resource: resources
      .defaultResource()
      .merge(resources.resourceFromAttributes({ 'service.version': packageVersion() })),
    instrumentations: instrumentations(),
    // Traces only: metrics are Prometheus at /metrics, logs are JSON on stdout.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  require('pg');
  /* eslint-enable @typescript-eslint/no-require-imports */
  return { shutdown: () => sdk.shutdown() };
}

function instrumentations(): NonNullable<NodeSDKConfiguration['instrumentations']> {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { HttpInstrumentation } =
    require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { PgInstrumentation } =
    require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  /* eslint-enable @typescript-eslint/no-require-imports */
  return [
    new HttpInstrumentation({
      // Single-use action links carry their token in the path: a trace backend's readers must not be able to use it.
      ignoreIncomingRequestHook: (req) => /^\/(health\/(live|ready)|metrics)(\?|$)|^\/act\//.test(req.url ?? ''),
      // Timers' own calls (a JWKS refresh) start no trace of their own; webhook sends run in a span.
      requireParentforOutgoingSpans: true,
      requestHook: (span, req) => {
        if (req instanceof IncomingMessage) (req as IncomingMessage & { [SERVER_SPAN]?: unknown })[SERVER_SPAN] = span;
      },
    }),
    new PgInstrumentation({ requireParentSpan: true }),
  ];
}
