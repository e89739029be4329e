import { once } from 'node:events';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dependency } from '../src/client/dependency.js';
import { instrumentTracing } from '../src/observe/otel.js';

const propagator = new W3CTraceContextPropagator();
const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});

/** A tracer provider writing finished spans to memory: one per service. */
function service() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, provider, tracer: provider.getTracer('test') };
}

interface Seen {
  attempt: string;
  traceparent: string | undefined;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

/**
 * The downstream service: a real node:http server that extracts the propagated context with the W3C
 * propagator and starts its own server span under it. `answer` decides per attempt header.
 */
async function downstream(answer: (attempt: string, res: ServerResponse) => void) {
  const downstreamService = service();
  const seen: Seen[] = [];
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const headers: IncomingHttpHeaders = req.headers;
    const attempt = String(headers['x-prazo-attempt'] ?? '');
    seen.push({ attempt, traceparent: headers.traceparent as string | undefined });
    const parent = propagator.extract(context.active(), headers, {
      get: (carrier, key) => carrier[key] as string | undefined,
      keys: (carrier) => Object.keys(carrier),
    });
    const span = downstreamService.tracer.startSpan('GET /item', { kind: SpanKind.SERVER }, parent);
    res.on('close', () => span.end());
    answer(attempt, res);
  };
  // Two instances of the service (hedging needs another instance to send the copy to).
  const origins: string[] = [];
  for (const host of ['127.0.0.1', '127.0.0.2']) {
    const server = createServer(handler);
    servers.push(server);
    server.listen(0, host);
    await once(server, 'listening');
    origins.push(`http://${host}:${(server.address() as AddressInfo).port}`);
  }
  return { origins, seen, exporter: downstreamService.exporter };
}

/** A dependency with no retry-worthy surprises: one attempt unless the answer asks for another. */
function plainDependency(origins: string[]) {
  return dependency({ name: 'catalog', origins, latency: { p99Ms: 500 }, userDeadlineMs: 5_000 });
}

function attr(span: ReadableSpan, name: string): unknown {
  return span.attributes[name];
}

describe('prazo/otel instrumentTracing()', () => {
  it('shows one call span with three attempt spans for a call with one retry and one hedge, and the server sees the trace', async () => {
    // Attempt 1 (original) gets a 503 at once; attempt 2 (the retry) hangs; the hedge copy of the
    // retry (attempt 3), sent at the p95, answers 200 and wins. The p95 (500 ms) leaves the 503 time
    // to arrive on a loaded machine: at 100 ms, a CI run's original was hedged before its 503 came.
    const down = await downstream((attempt, res) => {
      if (attempt.startsWith('1;')) res.writeHead(503).end('busy');
      else if (attempt.startsWith('2;')) setTimeout(() => res.writeHead(200).end('late'), 3_000).unref();
      else res.writeHead(200).end('ok');
    });
    const client = service();
    const dep = dependency({
      name: 'catalog',
      origins: down.origins,
      latency: { p99Ms: 1_500, p95Ms: 500 },
      liveMinSamples: 1_000_000,
      userDeadlineMs: 10_000,
      attempts: 2,
      hedge: { at: 'p95' },
    });
    const tracing = instrumentTracing(dep, { tracer: client.tracer, propagator });
    let root: Span | undefined;
    try {
      const body = await client.tracer.startActiveSpan('checkout', async (span) => {
        root = span;
        const res = await dep.request({ path: '/item?id=7' });
        const text = await res.body.text();
        span.end();
        return text;
      });
      expect(body).toBe('ok');
    } finally {
      tracing.detach();
      await dep.close();
    }

    const spans = client.exporter.getFinishedSpans();
    const calls = spans.filter(
      (s) => attr(s, 'prazo.dependency') === 'catalog' && s.kind === SpanKind.INTERNAL,
    );
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    expect(call.name).toBe('GET catalog');
    expect(call.parentSpanContext?.spanId).toBe(root!.spanContext().spanId);
    expect(attr(call, 'prazo.attempts')).toBe(3);
    expect(attr(call, 'http.response.status_code')).toBe(200);
    expect(call.events.map((e) => e.name)).toEqual(expect.arrayContaining(['prazo.retry', 'prazo.hedge']));

    const attempts = spans
      .filter((s) => s.kind === SpanKind.CLIENT)
      .sort((a, b) => Number(attr(a, 'prazo.attempt.number')) - Number(attr(b, 'prazo.attempt.number')));
    expect(attempts).toHaveLength(3);
    for (const a of attempts) {
      expect(a.parentSpanContext?.spanId).toBe(call.spanContext().spanId);
      expect(a.spanContext().traceId).toBe(call.spanContext().traceId);
      expect(a.name).toBe('GET');
      expect(attr(a, 'http.request.method')).toBe('GET');
      const url = new URL(String(attr(a, 'url.full')));
      expect(down.origins).toContain(url.origin);
      expect(url.pathname + url.search).toBe('/item?id=7');
      expect(attr(a, 'server.address')).toBe(url.hostname);
      expect(attr(a, 'server.port')).toBe(Number(url.port));
    }
    const [original, retry, hedge] = attempts as [ReadableSpan, ReadableSpan, ReadableSpan];
    expect(attr(original, 'prazo.attempt.kind')).toBe('original');
    expect(attr(original, 'http.request.resend_count')).toBeUndefined();
    expect(attr(original, 'http.response.status_code')).toBe(503);
    expect(attr(original, 'error.type')).toBe('503');
    expect(original.status.code).toBe(SpanStatusCode.ERROR);

    expect(attr(retry, 'prazo.attempt.kind')).toBe('retry');
    expect(attr(retry, 'http.request.resend_count')).toBe(1);
    expect(attr(retry, 'http.response.status_code')).toBeUndefined();
    expect(attr(retry, 'prazo.attempt.outcome')).toBe('aborted');
    expect(attr(retry, 'error.type')).toBe('ATTEMPT_ABANDONED');
    expect(retry.status.code).toBe(SpanStatusCode.UNSET);

    expect(attr(hedge, 'prazo.attempt.kind')).toBe('hedge');
    expect(attr(hedge, 'http.request.resend_count')).toBe(2);
    expect(attr(hedge, 'http.response.status_code')).toBe(200);
    expect(attr(hedge, 'error.type')).toBeUndefined();
    expect(attr(hedge, 'prazo.attempt.won')).toBe(true);
    expect(hedge.links.map((l) => l.context.spanId)).toEqual([retry.spanContext().spanId]);

    // Every attempt carried its own span as the W3C parent, and the server joined the same trace.
    expect(down.seen).toHaveLength(3);
    const traceId = call.spanContext().traceId;
    for (const s of down.seen) {
      const [, id, parent] = s.traceparent?.split('-') ?? [];
      expect(id).toBe(traceId);
      const n = Number(s.attempt.split(';')[0]);
      expect(parent).toBe(attempts[n - 1]!.spanContext().spanId);
    }
    await expect
      .poll(() => down.exporter.getFinishedSpans().length, { timeout: 5_000 })
      .toBeGreaterThanOrEqual(2);
    for (const s of down.exporter.getFinishedSpans()) {
      expect(s.spanContext().traceId).toBe(traceId);
      expect(attempts.map((a) => a.spanContext().spanId)).toContain(s.parentSpanContext?.spanId);
    }
  }, 20_000);

  it('marks a failed call and its failed attempt with error.type and an error status', async () => {
    const down = await downstream((_attempt, res) => res.writeHead(404).end('no'));
    const client = service();
    const dep = plainDependency(down.origins);
    const tracing = instrumentTracing(dep, { tracer: client.tracer, propagator });
    try {
      const res = await dep.request({ path: '/missing' });
      await res.body.dump();
      expect(res.status).toBe(404);
    } finally {
      tracing.detach();
      await dep.close();
    }
    const [attempt] = client.exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT);
    expect(attr(attempt!, 'http.response.status_code')).toBe(404);
    expect(attr(attempt!, 'error.type')).toBe('404');
    expect(attempt!.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('adds nothing to the attempts and starts no span once detached', async () => {
    const down = await downstream((_attempt, res) => res.writeHead(200).end('ok'));
    const client = service();
    const dep = plainDependency(down.origins);
    instrumentTracing(dep, { tracer: client.tracer, propagator }).detach();
    try {
      const res = await dep.request({ path: '/' });
      await res.body.dump();
    } finally {
      await dep.close();
    }
    expect(client.exporter.getFinishedSpans()).toHaveLength(0);
    expect(down.seen[0]?.traceparent).toBeUndefined();
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});
