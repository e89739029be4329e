import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { createEventSourceDouble } from '../../test/support/event-source-double.js';
import { instrumentTracing } from './otel-tracing.js';

function setup() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const dep = createEventSourceDouble('payments');
  const handle = instrumentTracing(dep, { tracer: provider.getTracer('test') });
  return { exporter, dep, handle };
}

const start = { requestId: 1, method: 'GET', idempotent: true, remainingMs: 600 };

describe('instrumentTracing()', () => {
  it('records the deadline a call began with and its budget and deadline decisions as events', () => {
    const { exporter, dep } = setup();
    dep.emit('request-start', start);
    dep.emit('retry', { requestId: 1, attempt: 1, delayMs: 20, reason: 'status-503', anotherInstance: true });
    dep.emit('budget-exhausted', { requestId: 1, purpose: 'hedge' });
    dep.emit('fast-fail', { requestId: 1, remainingMs: 90, requiredMs: 250, beforeAttempt: false });
    dep.emit('request-end', {
      requestId: 1,
      outcome: 'failure',
      code: 'DEADLINE_INSUFFICIENT',
      durationMs: 510,
      attempts: 1,
    });
    const [call] = exporter.getFinishedSpans();
    expect(call?.name).toBe('GET payments');
    expect(call?.kind).toBe(SpanKind.INTERNAL);
    expect(call?.attributes['prazo.deadline.remaining_ms']).toBe(600);
    expect(call?.attributes['error.type']).toBe('DEADLINE_INSUFFICIENT');
    expect(call?.status.code).toBe(SpanStatusCode.ERROR);
    expect(call?.events.map((e) => [e.name, e.attributes])).toEqual([
      [
        'prazo.retry',
        {
          'prazo.retry.after_attempt': 1,
          'prazo.retry.delay_ms': 20,
          'prazo.retry.reason': 'status-503',
          'prazo.retry.another_instance': true,
        },
      ],
      ['prazo.retry_budget.exhausted', { 'prazo.budget.purpose': 'hedge' }],
      [
        'prazo.deadline.fast_fail',
        {
          'prazo.deadline.remaining_ms': 90,
          'prazo.deadline.required_ms': 250,
          'prazo.deadline.before_attempt': false,
        },
      ],
    ]);
  });

  it('puts the deadline ledger on the call span and the time left on the attempt span', () => {
    const { exporter, dep } = setup();
    dep.emit('request-start', start);
    dep.emit('attempt-headers', {
      ...{ requestId: 1, attempt: 1, kind: 'original', method: 'GET' },
      ...{ instance: 'http://10.0.0.1', path: '/a', headers: [] },
    });
    dep.emit('attempt-end', {
      ...{ requestId: 1, attempt: 1, kind: 'original', instance: 'http://10.0.0.1' },
      ...{ durationMs: 40, outcome: 'success', status: 200, won: true, leftMs: 590, connectMs: 2 },
    });
    const ledger = {
      dependency: 'payments',
      budgetMs: 600,
      elapsedMs: 52,
      queuedMs: 10,
      hereMs: 12,
      entries: [],
      shares: () => [],
      summary: () => '52 ms: 12 ms here (10 ms queued), 40 ms in payments',
    };
    dep.emit('request-end', {
      requestId: 1,
      outcome: 'success',
      status: 200,
      durationMs: 52,
      attempts: 1,
      ledger,
    });
    const [attempt, call] = exporter.getFinishedSpans();
    expect(attempt?.attributes).toMatchObject({
      'prazo.deadline.left_ms': 590,
      'prazo.attempt.connect_ms': 2,
    });
    expect(call?.attributes).toMatchObject({
      'prazo.deadline.budget_ms': 600,
      'prazo.deadline.elapsed_ms': 52,
      'prazo.deadline.here_ms': 12,
      'prazo.deadline.queued_ms': 10,
      'prazo.deadline.ledger': '52 ms: 12 ms here (10 ms queued), 40 ms in payments',
    });
  });

  it('names a method outside the standard set _OTHER and keeps the original', () => {
    const { exporter, dep } = setup();
    dep.emit('request-start', { ...start, method: 'PURGE' });
    const headers: string[] = [];
    dep.emit('attempt-headers', {
      ...{ requestId: 1, attempt: 1, kind: 'original', method: 'PURGE' },
      ...{ instance: 'https://cache.internal', path: '/a', headers },
    });
    dep.emit('attempt-end', {
      ...{ requestId: 1, attempt: 1, kind: 'original', instance: 'https://cache.internal' },
      ...{ durationMs: 3, outcome: 'success', status: 200, won: true },
    });
    const [attempt] = exporter.getFinishedSpans();
    expect(attempt?.name).toBe('HTTP');
    expect(attempt?.attributes['http.request.method']).toBe('_OTHER');
    expect(attempt?.attributes['http.request.method_original']).toBe('PURGE');
    expect(attempt?.attributes['server.port']).toBe(443);
    expect(attempt?.attributes['url.full']).toBe('https://cache.internal/a');
  });

  it('ends the spans of calls in flight and stops listening on detach()', () => {
    const { exporter, dep, handle } = setup();
    dep.emit('request-start', start);
    dep.emit('attempt-headers', {
      ...{ requestId: 1, attempt: 1, kind: 'original', method: 'GET' },
      ...{ instance: 'http://127.0.0.1:8080', path: '/', headers: [] },
    });
    handle.detach();
    expect(exporter.getFinishedSpans()).toHaveLength(2);
    expect(dep.listenerCount()).toBe(0);
  });
});
