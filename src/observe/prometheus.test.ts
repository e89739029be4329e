import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createEventSourceDouble } from '../../test/support/event-source-double.js';
import { metricValue as value } from '../../test/support/metric-value.js';
import { isPrazoError } from '../errors.js';
import type { DriftEvent, RecalibratedEvent } from '../latency/drift-check.js';
import { createFakeClock } from '../testing/fake-clock.js';
import { createTestDependency } from '../testing/test-dependency.js';
import { DURATION_BUCKETS_SECONDS } from '../wire/metric-names.js';
import { instrument } from './prometheus.js';

describe('prazo/prometheus instrument()', () => {
  it('counts logical requests by outcome and attempts by kind', async () => {
    const registry = new Registry();
    const dep = createEventSourceDouble('payments');
    instrument(dep, { registry });
    dep.request({ durationMs: 40 });
    dep.request({
      outcome: 'failure',
      durationMs: 600,
      attempts: [
        { kind: 'original', durationMs: 252, timeout: 'read' },
        { kind: 'retry', durationMs: 252, timeout: 'read' },
      ],
    });
    const labels = { dependency: 'payments' };
    expect(await value(registry, 'prazo_requests_total', { ...labels, outcome: 'success' })).toBe(1);
    expect(await value(registry, 'prazo_requests_total', { ...labels, outcome: 'failure' })).toBe(1);
    expect(await value(registry, 'prazo_attempts_total', { ...labels, kind: 'original' })).toBe(2);
    expect(await value(registry, 'prazo_attempts_total', { ...labels, kind: 'retry' })).toBe(1);
    expect(await value(registry, 'prazo_attempts_total', { ...labels, kind: 'hedge' })).toBe(0);
    expect(await value(registry, 'prazo_timeouts_total', { ...labels, phase: 'read' })).toBe(2);
    expect(await value(registry, 'prazo_timeouts_total', { ...labels, phase: 'connect' })).toBe(0);
  });

  it('counts hedges sent and won, budget refusals and deadline fast-fails', async () => {
    const registry = new Registry();
    const dep = createEventSourceDouble('search');
    instrument(dep, { registry });
    dep.emit('hedge', { requestId: 1, afterMs: 120 });
    dep.request({
      durationMs: 130,
      attempts: [
        { kind: 'original', durationMs: 130, outcome: 'aborted' },
        { kind: 'hedge', durationMs: 10, won: true },
      ],
    });
    dep.emit('budget-exhausted', { requestId: 2, purpose: 'retry' });
    dep.emit('budget-exhausted', { requestId: 3, purpose: 'hedge' });
    dep.emit('budget-exhausted', { requestId: 4, purpose: 'hedge' });
    dep.emit('fast-fail', { requestId: 5, remainingMs: 100, requiredMs: 250, beforeAttempt: false });
    const labels = { dependency: 'search' };
    expect(await value(registry, 'prazo_hedges_total', labels)).toBe(1);
    expect(await value(registry, 'prazo_hedges_won_total', labels)).toBe(1);
    expect(await value(registry, 'prazo_retry_budget_exhausted_total', { ...labels, purpose: 'retry' })).toBe(
      1,
    );
    expect(await value(registry, 'prazo_retry_budget_exhausted_total', { ...labels, purpose: 'hedge' })).toBe(
      2,
    );
    expect(await value(registry, 'prazo_deadline_fast_fail_total', labels)).toBe(1);
    expect(await value(registry, 'prazo_requests_refused_total', labels)).toBe(0);
  });

  it('counts calls refused before any attempt in their own counter, prazo_requests_refused_total', async () => {
    const registry = new Registry();
    const dep = createEventSourceDouble('search');
    instrument(dep, { registry });
    dep.emit('fast-fail', { requestId: 1, remainingMs: 40, requiredMs: 250, beforeAttempt: true });
    dep.emit('fast-fail', { requestId: 2, remainingMs: 40, requiredMs: 250, beforeAttempt: true });
    dep.emit('fast-fail', { requestId: 3, remainingMs: 90, requiredMs: 250, beforeAttempt: false });
    const labels = { dependency: 'search' };
    expect(await value(registry, 'prazo_requests_refused_total', labels)).toBe(2);
    expect(await value(registry, 'prazo_deadline_fast_fail_total', labels)).toBe(3);
    expect(await value(registry, 'prazo_attempts_total', { ...labels, kind: 'original' })).toBe(0);
  });

  it('observes request and attempt durations in seconds', async () => {
    const registry = new Registry();
    const dep = createEventSourceDouble('payments');
    instrument(dep, { registry });
    dep.request({ durationMs: 40, attempts: [{ kind: 'original', durationMs: 35 }] });
    const text = await registry.metrics();
    expect(text).toContain(
      'prazo_request_duration_seconds_sum{dependency="payments",outcome="success"} 0.04',
    );
    expect(text).toContain(
      'prazo_request_duration_seconds_bucket{le="0.05",dependency="payments",outcome="success"} 1',
    );
    expect(text).toContain(
      'prazo_request_duration_seconds_bucket{le="0.03",dependency="payments",outcome="success"} 0',
    );
    expect(text).toContain('prazo_attempt_duration_seconds_count{dependency="payments",kind="original"} 1');
    expect(text).toContain('prazo_attempt_duration_seconds_count{dependency="payments",kind="retry"} 0');
  });

  it('exposes the same duration histogram lines as prom-client observing every call', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 40_000 }), { maxLength: 40 }),
        async (durations) => {
          const registry = new Registry();
          const dep = createEventSourceDouble('payments');
          instrument(dep, { registry });
          const reference = new Registry();
          const histogram = new Histogram({
            name: 'prazo_request_duration_seconds',
            help: 'reference',
            labelNames: ['dependency', 'outcome'],
            buckets: [...DURATION_BUCKETS_SECONDS],
            registers: [reference],
          });
          histogram.zero({ dependency: 'payments', outcome: 'success' });
          histogram.zero({ dependency: 'payments', outcome: 'failure' });
          for (const ms of durations) {
            dep.request({ durationMs: ms });
            histogram.observe({ dependency: 'payments', outcome: 'success' }, ms / 1000);
          }
          const lines = (text: string) =>
            text
              .split('\n')
              .filter((l) => l.startsWith('prazo_request_duration_seconds'))
              .map((l) => l.replace(/ ([0-9.e+-]+)$/, (_, v: string) => ` ${Number(v).toFixed(9)}`));
          expect(lines(await registry.metrics())).toEqual(lines(await reference.metrics()));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('keeps a duration histogram across detach() and a later instrument() of the same name', async () => {
    const registry = new Registry();
    const dep = createEventSourceDouble('payments');
    const first = instrument(dep, { registry });
    dep.request({ durationMs: 40 });
    first.detach();
    dep.request({ durationMs: 40 }); // not instrumented
    instrument(dep, { registry });
    dep.request({ durationMs: 60 });
    const text = await registry.metrics();
    expect(text).toContain('prazo_request_duration_seconds_count{dependency="payments",outcome="success"} 2');
    expect(text).toMatch(
      /prazo_request_duration_seconds_sum\{dependency="payments",outcome="success"\} 0\.1\d*\n/,
    );
  });

  it('reads the retry ratio and the configured timeouts from the dependency at scrape time', async () => {
    const registry = new Registry();
    const dep = createEventSourceDouble('payments', { policy: { connectMs: 100, readMs: 252 } });
    instrument(dep, { registry });
    dep.setBudget({ originals: 200, extras: 14, ratio: 0.07 });
    expect(await value(registry, 'prazo_retry_ratio', { dependency: 'payments' })).toBe(0.07);
    dep.setBudget({ originals: 200, extras: 2, ratio: 0.01 });
    expect(await value(registry, 'prazo_retry_ratio', { dependency: 'payments' })).toBe(0.01);
    expect(await value(registry, 'prazo_timeout_seconds', { dependency: 'payments', phase: 'connect' })).toBe(
      0.1,
    );
    expect(await value(registry, 'prazo_timeout_seconds', { dependency: 'payments', phase: 'read' })).toBe(
      0.252,
    );
  });

  it('publishes the healthy p95/p99 and timeout ÷ p99 only once a slice is healthy', async () => {
    const clock = createFakeClock(1_000_000);
    const registry = new Registry();
    const dep = createEventSourceDouble('payments', { clock, policy: { readMs: 252 } });
    instrument(dep, { registry });
    expect(await value(registry, 'prazo_healthy_latency_seconds', { quantile: '0.99' })).toBeUndefined();
    expect(await value(registry, 'prazo_timeout_p99_ratio', {})).toBeUndefined();
    for (let i = 1; i <= 100; i++) dep.window().record(i * 2); // 2 … 200 ms
    const p99 = await value(registry, 'prazo_healthy_latency_seconds', {
      dependency: 'payments',
      quantile: '0.99',
    });
    expect(p99).toBeCloseTo(0.198, 2);
    expect(await value(registry, 'prazo_healthy_latency_seconds', { quantile: '0.95' })).toBeCloseTo(0.19, 2);
    expect(await value(registry, 'prazo_timeout_p99_ratio', { dependency: 'payments' })).toBeCloseTo(
      252 / 198,
      2,
    );
  });

  it('puts several dependencies on one registry, one label value each, across instrument() calls', async () => {
    const registry = new Registry();
    const a = createEventSourceDouble('payments');
    const b = createEventSourceDouble('search');
    const c = createEventSourceDouble('stock');
    instrument([a, b], { registry });
    instrument({ dependencies: () => [c] }, { registry });
    a.request({ durationMs: 10 });
    b.request({ durationMs: 10 });
    b.request({ durationMs: 10 });
    c.setBudget({ originals: 10, extras: 1, ratio: 0.1 });
    expect(
      await value(registry, 'prazo_requests_total', { dependency: 'payments', outcome: 'success' }),
    ).toBe(1);
    expect(await value(registry, 'prazo_requests_total', { dependency: 'search', outcome: 'success' })).toBe(
      2,
    );
    expect(await value(registry, 'prazo_requests_total', { dependency: 'stock', outcome: 'success' })).toBe(
      0,
    );
    expect(await value(registry, 'prazo_retry_ratio', { dependency: 'stock' })).toBe(0.1);
  });

  it('refuses to instrument the same dependency name twice on one registry', () => {
    const registry = new Registry();
    instrument(createEventSourceDouble('payments'), { registry });
    expect(() => instrument(createEventSourceDouble('payments'), { registry })).toThrow(/payments/);
  });

  it('refuses a registry that holds a foreign metric with a prazo name', () => {
    const registry = new Registry();
    new Counter({ name: 'prazo_requests_total', help: 'mine', registers: [registry] });
    let caught: unknown;
    try {
      instrument(createEventSourceDouble('payments'), { registry });
    } catch (error) {
      caught = error;
    }
    expect(isPrazoError(caught, 'INVALID_OPTION')).toBe(true);
    expect(String(caught)).toContain('prazo_requests_total');
  });

  it('uses another prefix when asked, and rejects one Prometheus would not accept', async () => {
    const registry = new Registry();
    instrument(createEventSourceDouble('payments'), { registry, prefix: 'shop_' });
    expect(await registry.metrics()).toContain(
      'shop_requests_total{dependency="payments",outcome="success"} 0',
    );
    expect(() => instrument(createEventSourceDouble('x'), { registry, prefix: 'no-dash' })).toThrow(/prefix/);
  });

  it('rejects a target that is not a dependency', () => {
    expect(() => instrument({} as never, { registry: new Registry() })).toThrow(/target/);
    expect(() => instrument([{ name: 'x' }] as never, { registry: new Registry() })).toThrow(/target\[0\]/);
  });

  it('detach() unsubscribes, keeps the counters and drops the gauges of the dependency', async () => {
    const registry = new Registry();
    const dep = createEventSourceDouble('payments');
    const metrics = instrument(dep, { registry });
    expect(dep.listenerCount()).toBeGreaterThan(0);
    dep.request({ durationMs: 10 });
    metrics.detach();
    metrics.detach();
    expect(dep.listenerCount()).toBe(0);
    dep.request({ durationMs: 10 });
    expect(
      await value(registry, 'prazo_requests_total', { dependency: 'payments', outcome: 'success' }),
    ).toBe(1);
    expect(await value(registry, 'prazo_retry_ratio', { dependency: 'payments' })).toBeUndefined();
  });

  it('counts drift-monitor events by direction and recalibrations', async () => {
    const registry = new Registry();
    const dep = createEventSourceDouble('payments');
    const listeners: Record<string, Array<(e: never) => void>> = { drift: [], recalibrated: [] };
    const monitor = {
      on: (event: string, l: (e: never) => void) => listeners[event]?.push(l),
      off: (event: string, l: (e: never) => void) => {
        listeners[event] = (listeners[event] ?? []).filter((x) => x !== l);
      },
    };
    const metrics = instrument(dep, { registry, driftMonitor: monitor });
    const drift = { dependency: 'payments', direction: 'timeout-too-tight' } as DriftEvent;
    for (const l of listeners.drift ?? []) (l as (e: DriftEvent) => void)(drift);
    for (const l of listeners.recalibrated ?? [])
      (l as (e: RecalibratedEvent) => void)({ dependency: 'payments' } as RecalibratedEvent);
    const labels = { dependency: 'payments' };
    expect(
      await value(registry, 'prazo_drift_events_total', { ...labels, direction: 'timeout-too-tight' }),
    ).toBe(1);
    expect(
      await value(registry, 'prazo_drift_events_total', { ...labels, direction: 'timeout-too-generous' }),
    ).toBe(0);
    expect(await value(registry, 'prazo_recalibrations_total', labels)).toBe(1);
    metrics.detach();
    expect(listeners.drift).toHaveLength(0);
  });

  it('counts failed resolutions of the origins and reads the instances in force by state', async () => {
    const registry = new Registry();
    let answer: () => string[] = () => ['http://10.0.0.1:8080', 'http://10.0.0.2:8080'];
    const { clock, dep } = createTestDependency({ origins: () => answer(), originsRefreshMs: 1_000 });
    instrument(dep, { registry });
    const labels = { dependency: 'inventory' };
    const up = { dependency: 'inventory', state: 'up' };
    expect(await value(registry, 'prazo_instances', up)).toBe(2);
    expect(await value(registry, 'prazo_membership_refresh_failures_total', labels)).toBe(0);
    answer = () => {
      throw new Error('SERVFAIL');
    };
    clock.advance(1_000);
    clock.advance(500);
    expect(await value(registry, 'prazo_membership_refresh_failures_total', labels)).toBe(2);
    expect(await value(registry, 'prazo_instances', up)).toBe(2);
    answer = () => ['http://10.0.0.3:8080'];
    clock.advance(1_000);
    expect(await value(registry, 'prazo_instances', up)).toBe(1);
    await dep.close();
  });
});
