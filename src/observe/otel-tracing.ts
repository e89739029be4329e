import {
  type Attributes,
  type Context,
  context,
  type Link,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  type TextMapSetter,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import type {
  AttemptEndEvent,
  AttemptHeadersEvent,
  BudgetExhaustedEvent,
  FastFailEvent,
  HedgeEvent,
  RequestEndEvent,
  RequestStartEvent,
  RetryEvent,
} from '../engine/events.js';
import { type InstrumentableDependency, type InstrumentTarget, toDependencies } from './source.js';

declare const __PRAZO_VERSION__: string | undefined;
/** prazo's version, the instrumentation scope version of its tracer and meter. */
export const VERSION = typeof __PRAZO_VERSION__ === 'string' ? __PRAZO_VERSION__ : '0.0.0-dev';

/** Options of {@link instrumentTracing}. */
export interface OtelTracingOptions {
  /** Tracer the spans are started on. @default tracerProvider.getTracer('prazo', version) */
  tracer?: Tracer;
  /** Provider of the default tracer. @default the global provider (`trace.getTracerProvider()`) */
  tracerProvider?: TracerProvider;
  /**
   * Propagator that writes the trace context (W3C `traceparent`, `tracestate`, baggage …) into every
   * attempt's headers. @default the global propagator (`propagation`, as configured by the SDK)
   */
  propagator?: TextMapPropagator;
}

/** Handle returned by {@link instrumentTracing}. */
export interface TracingInstrumentation {
  /** Stops tracing; the spans of calls in flight end at once. Idempotent. */
  detach(): void;
}

/**
 * Traces every call of one dependency, several, or a client's dependencies with OpenTelemetry: one
 * span per call (`INTERNAL`, named `<METHOD> <dependency>`, child of the context active when the call
 * began) and one `CLIENT` span per attempt under it, following the HTTP client semantic conventions
 * (`http.request.method`, `server.address`, `server.port`, `url.full`, `http.response.status_code`,
 * `error.type`, `http.request.resend_count`) plus `prazo.attempt.kind` (original, retry, hedge). A
 * hedge copy is a sibling of the copy it backs up, linked to it. Retries, hedges, budget refusals
 * and deadline fast-fails are events on the call span; the call span carries the deadline it began
 * with. The trace context of each attempt span is injected into that attempt's headers through the
 * propagator, so the server sees the attempt as its parent.
 *
 * @throws {InvalidOptionError} when `target` is not a dependency, a list of them or a client.
 * @example
 * import { trace } from '@opentelemetry/api';
 * import { instrumentTracing } from 'prazo/otel';
 * const tracing = instrumentTracing(payments, { tracer: trace.getTracer('checkout') });
 * tracing.detach();
 * @see https://opentelemetry.io/docs/specs/semconv/http/http-spans/ (HTTP client spans)
 */
export function instrumentTracing(
  target: InstrumentTarget,
  options: OtelTracingOptions = {},
): TracingInstrumentation {
  const dependencies = toDependencies(target);
  const tracer =
    options.tracer ?? (options.tracerProvider ?? trace.getTracerProvider()).getTracer('prazo', VERSION);
  const propagator = options.propagator;
  const inject =
    propagator === undefined
      ? (ctx: Context, carrier: string[]) => propagation.inject(ctx, carrier, HEADER_PAIRS)
      : (ctx: Context, carrier: string[]) => propagator.inject(ctx, carrier, HEADER_PAIRS);
  const detachers = dependencies.map((d) => traceDependency(d, tracer, inject));
  let detached = false;
  return {
    detach() {
      if (detached) return;
      detached = true;
      for (const stop of detachers) stop();
    },
  };
}

/** Writes into an attempt's flat name/value header list. */
const HEADER_PAIRS: TextMapSetter<string[]> = {
  set(carrier, key, value) {
    carrier.push(key, value);
  },
};

/** What the tracer keeps of one call in flight. */
interface CallTrace {
  span: Span;
  context: Context;
  /** The attempt span a hedge copy backs up (the latest original or retry). */
  primary: Span | undefined;
  attempts: Map<number, Span>;
}

const KNOWN_METHODS = new Set([
  'CONNECT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'POST',
  'PUT',
  'TRACE',
]);

/**
 * `error.type` as the HTTP semantic conventions define it for a client: the status code when it is
 * 400 or above, else the error's `code`, else `_OTHER` for a failure without one.
 */
function errorTypeOf(
  outcome: string,
  status: number | undefined,
  code: string | undefined,
): string | undefined {
  if (status !== undefined && status >= 400) return String(status);
  if (outcome === 'success') return undefined;
  return code ?? '_OTHER';
}

function traceDependency(
  dependency: InstrumentableDependency,
  tracer: Tracer,
  inject: (ctx: Context, carrier: string[]) => void,
): () => void {
  const name = dependency.name;
  const calls = new Map<number, CallTrace>();
  const servers = new Map<string, Attributes>();

  const serverOf = (origin: string): Attributes => {
    let attrs = servers.get(origin);
    if (attrs === undefined) {
      const url = new URL(origin);
      const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
      attrs = { 'server.address': url.hostname, 'server.port': port };
      servers.set(origin, attrs);
    }
    return attrs;
  };

  const onRequestStart = (e: RequestStartEvent): void => {
    const parent = context.active();
    const method = KNOWN_METHODS.has(e.method) ? e.method : '_OTHER';
    const span = tracer.startSpan(
      `${method === '_OTHER' ? 'HTTP' : method} ${name}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          'prazo.dependency': name,
          'http.request.method': method,
          'prazo.idempotent': e.idempotent,
          'prazo.deadline.remaining_ms': e.remainingMs,
        },
      },
      parent,
    );
    calls.set(e.requestId, {
      span,
      context: trace.setSpan(parent, span),
      primary: undefined,
      attempts: new Map(),
    });
  };

  const onAttemptHeaders = (e: AttemptHeadersEvent): void => {
    const call = calls.get(e.requestId);
    if (call === undefined) return;
    const method = KNOWN_METHODS.has(e.method) ? e.method : '_OTHER';
    const attributes: Attributes = {
      'http.request.method': method,
      ...serverOf(e.instance),
      'url.full': e.instance + e.path,
      'prazo.dependency': name,
      'prazo.attempt.kind': e.kind,
      'prazo.attempt.number': e.attempt,
    };
    if (method === '_OTHER') attributes['http.request.method_original'] = e.method;
    if (e.attempt > 1) attributes['http.request.resend_count'] = e.attempt - 1;
    const links: Link[] | undefined =
      e.kind === 'hedge' && call.primary !== undefined
        ? [{ context: call.primary.spanContext(), attributes: { 'prazo.link': 'hedge-of' } }]
        : undefined;
    const span = tracer.startSpan(
      method === '_OTHER' ? 'HTTP' : method,
      links === undefined
        ? { kind: SpanKind.CLIENT, attributes }
        : { kind: SpanKind.CLIENT, attributes, links },
      call.context,
    );
    if (e.kind !== 'hedge') call.primary = span;
    call.attempts.set(e.attempt, span);
    inject(trace.setSpan(call.context, span), e.headers);
  };

  const onAttemptEnd = (e: AttemptEndEvent): void => {
    const call = calls.get(e.requestId);
    const span = call?.attempts.get(e.attempt);
    if (call === undefined || span === undefined) return;
    call.attempts.delete(e.attempt);
    if (e.status !== undefined) span.setAttribute('http.response.status_code', e.status);
    span.setAttribute('prazo.attempt.outcome', e.outcome);
    span.setAttribute('prazo.attempt.won', e.won);
    if (e.timeout !== undefined) span.setAttribute('prazo.timeout.phase', e.timeout);
    if (e.leftMs !== undefined) span.setAttribute('prazo.deadline.left_ms', e.leftMs);
    if (e.connectMs !== undefined) span.setAttribute('prazo.attempt.connect_ms', e.connectMs);
    const errorType = errorTypeOf(e.outcome, e.status, e.errorCode);
    if (errorType !== undefined) {
      span.setAttribute('error.type', errorType);
      // A copy prazo abandoned (the other copy answered, the caller cancelled) is no failure of the server.
      if (e.outcome !== 'aborted') span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  };

  const event =
    <E extends { requestId: number }>(eventName: string, attributes: (e: E) => Attributes) =>
    (e: E): void => {
      calls.get(e.requestId)?.span.addEvent(eventName, attributes(e));
    };
  const onRetry = event('prazo.retry', (e: RetryEvent) => ({
    'prazo.retry.after_attempt': e.attempt,
    'prazo.retry.delay_ms': e.delayMs,
    'prazo.retry.reason': e.reason,
    'prazo.retry.another_instance': e.anotherInstance,
  }));
  const onHedge = event('prazo.hedge', (e: HedgeEvent) => ({ 'prazo.hedge.after_ms': e.afterMs }));
  const onBudgetExhausted = event('prazo.retry_budget.exhausted', (e: BudgetExhaustedEvent) => ({
    'prazo.budget.purpose': e.purpose,
  }));
  const onFastFail = event('prazo.deadline.fast_fail', (e: FastFailEvent) => ({
    'prazo.deadline.remaining_ms': e.remainingMs,
    'prazo.deadline.required_ms': e.requiredMs,
    'prazo.deadline.before_attempt': e.beforeAttempt,
  }));

  const onRequestEnd = (e: RequestEndEvent): void => {
    const call = calls.get(e.requestId);
    if (call === undefined) return;
    calls.delete(e.requestId);
    // An attempt the call outlived (never expected: every attempt ends first) must not leak.
    for (const span of call.attempts.values()) span.end();
    const span = call.span;
    span.setAttribute('prazo.attempts', e.attempts);
    if (e.status !== undefined) span.setAttribute('http.response.status_code', e.status);
    const ledger = e.ledger;
    if (ledger !== undefined) {
      // Read only by a trace exporter that is on: the ledger costs nothing otherwise.
      span.setAttribute('prazo.deadline.budget_ms', ledger.budgetMs);
      span.setAttribute('prazo.deadline.elapsed_ms', ledger.elapsedMs);
      span.setAttribute('prazo.deadline.here_ms', ledger.hereMs);
      if (ledger.queuedMs > 0) span.setAttribute('prazo.deadline.queued_ms', ledger.queuedMs);
      span.setAttribute('prazo.deadline.ledger', ledger.summary());
    }
    const errorType = errorTypeOf(e.outcome, e.status, e.code);
    if (errorType !== undefined) {
      span.setAttribute('error.type', errorType);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  };

  dependency.on('request-start', onRequestStart);
  dependency.on('attempt-headers', onAttemptHeaders);
  dependency.on('attempt-end', onAttemptEnd);
  dependency.on('retry', onRetry);
  dependency.on('hedge', onHedge);
  dependency.on('budget-exhausted', onBudgetExhausted);
  dependency.on('fast-fail', onFastFail);
  dependency.on('request-end', onRequestEnd);
  return () => {
    dependency.off('request-start', onRequestStart);
    dependency.off('attempt-headers', onAttemptHeaders);
    dependency.off('attempt-end', onAttemptEnd);
    dependency.off('retry', onRetry);
    dependency.off('hedge', onHedge);
    dependency.off('budget-exhausted', onBudgetExhausted);
    dependency.off('fast-fail', onFastFail);
    dependency.off('request-end', onRequestEnd);
    // Nothing will end the spans of calls in flight any more: end them now rather than lose them.
    for (const call of calls.values()) {
      for (const span of call.attempts.values()) span.end();
      call.span.end();
    }
    calls.clear();
  };
}
