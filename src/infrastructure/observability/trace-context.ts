import {
  Attributes,
  Context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { AsyncResource } from 'node:async_hooks';

/**
 * The light half of tracing: only @opentelemetry/api, whose calls cost next to nothing while no SDK is
 * registered (tracing off). The SDK itself is started by tracing.ts, and only when the OTEL_* env asks.
 */

/** Where the HTTP instrumentation leaves a request's server span, for the access log line written at its end. */
export const SERVER_SPAN = Symbol.for('tollgate.serverSpan');

export interface TraceFields {
  trace_id?: string;
  span_id?: string;
}

const tracer = trace.getTracer('tollgate');

export function traceFieldsOf(span: Span | undefined): TraceFields {
  const c = span?.spanContext();
  return c && isSpanContextValid(c) ? { trace_id: c.traceId, span_id: c.spanId } : {};
}

/** The active span's ids, for every log line (a pino mixin). */
export function activeTraceFields(): TraceFields {
  return traceFieldsOf(trace.getActiveSpan());
}

/**
 * Runs `fn` in a span of its own (a child of the active one, if any), ended when `fn` settles; a throw marks
 * the span failed and is rethrown. `fn` may mark a failure it handles itself with `failSpan`.
 */
export function inSpan<T>(
  name: string,
  attributes: Record<string, string | number | boolean>,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (e) {
      failSpan(span, e);
      throw e;
    } finally {
      span.end();
    }
  });
}

/**
 * The server span of a call that no instrumentation sees (gRPC), a child of the caller's W3C `traceparent`
 * (and `tracestate`) when it sent one. Run the call's work in the returned context so that its queries are the
 * span's children; the caller ends the span.
 */
export function startServerSpan(
  name: string,
  attributes: Attributes,
  carrier: Record<string, string | undefined>,
): { span: Span; context: Context } {
  const parent = propagation.extract(ROOT_CONTEXT, carrier);
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

export function failSpan(span: Span, e: unknown): void {
  span.recordException(e instanceof Error ? e : String(e));
  span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
}

/**
 * Background work (outbox passes, webhook sends, event-feed reads) is often kicked from inside a request. Run
 * through this, made when its owner is built (outside any request), it leaves that request's context behind:
 * its spans start their own traces, and its logs do not carry the request's id. The request that committed
 * would otherwise "own" a pass that serves every commit of the moment.
 */
export function detachedScope(name: string): <T>(fn: () => T) => T {
  const scope = new AsyncResource(name);
  return (fn) => scope.runInAsyncScope(fn);
}
