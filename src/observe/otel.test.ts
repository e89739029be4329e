import type { Attributes } from '@opentelemetry/api';
import { type DataPoint, type Histogram, MeterProvider, type MetricData } from '@opentelemetry/sdk-metrics';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CollectingReader } from '../../test/support/collecting-reader.js';
import { createEventSourceDouble } from '../../test/support/event-source-double.js';
import { createAdmission } from '../admission/admission.js';
import { Deadline } from '../deadline/deadline.js';
import { InvalidOptionError } from '../errors.js';
import type { DriftEvent } from '../latency/drift-check.js';
import { createFakeClock } from '../testing/fake-clock.js';
import { createTestDependency } from '../testing/test-dependency.js';
import { METRICS, SERVER_METRICS } from '../wire/metric-names.js';
import { instrument, instrumentAdmission } from './otel.js';

function setup() {
  const reader = new CollectingReader();
  const provider = new MeterProvider({ readers: [reader] });
  return { reader, provider };
}

function point<T>(data: MetricData[], name: string, attrs: Attributes): DataPoint<T> | undefined {
  const metric = data.find((m) => m.descriptor.name === name);
  return (metric?.dataPoints as DataPoint<T>[] | undefined)?.find((p) =>
    Object.entries(attrs).every(([k, v]) => p.attributes[k] === v),
  );
}

describe('prazo/otel instrument()', () => {
  it('reports requests, attempts, timeouts, hedges, refusals and fast-fails as counters', async () => {
    const { reader, provider } = setup();
    const dep = createEventSourceDouble('payments');
    instrument(dep, { meterProvider: provider });
    dep.request({ durationMs: 40 });
    dep.emit('hedge', { requestId: 2, afterMs: 100 });
    dep.request({
      outcome: 'failure',
      durationMs: 600,
      attempts: [
        { kind: 'original', durationMs: 252, timeout: 'read' },
        { kind: 'hedge', durationMs: 252, timeout: 'connect', won: true },
      ],
    });
    dep.emit('budget-exhausted', { requestId: 3, purpose: 'retry' });
    dep.emit('fast-fail', { requestId: 4, remainingMs: 10, requiredMs: 200, beforeAttempt: true });
    const data = await reader.metrics();
    const d = { 'prazo.dependency': 'payments' };
    expect(point(data, 'prazo.client.requests', { ...d, 'prazo.outcome': 'success' })?.value).toBe(1);
    expect(point(data, 'prazo.client.requests', { ...d, 'prazo.outcome': 'failure' })?.value).toBe(1);
    expect(point(data, 'prazo.client.attempts', { ...d, 'prazo.attempt.kind': 'original' })?.value).toBe(2);
    expect(point(data, 'prazo.client.attempts', { ...d, 'prazo.attempt.kind': 'hedge' })?.value).toBe(1);
    expect(point(data, 'prazo.client.timeouts', { ...d, 'prazo.timeout.phase': 'read' })?.value).toBe(1);
    expect(point(data, 'prazo.client.timeouts', { ...d, 'prazo.timeout.phase': 'connect' })?.value).toBe(1);
    expect(point(data, 'prazo.client.hedge.sent', d)?.value).toBe(1);
    expect(point(data, 'prazo.client.hedge.won', d)?.value).toBe(1);
    expect(
      point(data, 'prazo.client.retry_budget.exhaustions', { ...d, 'prazo.budget.purpose': 'retry' })?.value,
    ).toBe(1);
    expect(point(data, 'prazo.client.deadline.fast_fails', d)?.value).toBe(1);
    expect(point(data, 'prazo.client.requests.refused', d)?.value).toBe(1);
  });

  it('records durations in seconds on histograms with the 1 ms–30 s buckets', async () => {
    const { reader, provider } = setup();
    const dep = createEventSourceDouble('payments');
    instrument(dep, { meterProvider: provider });
    dep.request({ durationMs: 40, attempts: [{ kind: 'original', durationMs: 35 }] });
    const data = await reader.metrics();
    const metric = data.find((m) => m.descriptor.name === 'prazo.client.request.duration');
    expect(metric?.descriptor.unit).toBe('s');
    const p = point<Histogram>(data, 'prazo.client.request.duration', { 'prazo.outcome': 'success' });
    expect(p?.value.sum).toBeCloseTo(0.04, 6);
    expect(p?.value.buckets.boundaries).toEqual([...METRICS_BUCKETS]);
    const attempt = point<Histogram>(data, 'prazo.client.attempt.duration', {
      'prazo.attempt.kind': 'original',
    });
    expect(attempt?.value.count).toBe(1);
  });

  it('hands the SDK exactly the counts, sum, min and max that recording every call would have', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.integer({ min: 0, max: 40_000 }), { maxLength: 30 }), {
          minLength: 1,
          maxLength: 4,
        }),
        async (batches) => {
          const { reader, provider } = setup();
          const dep = createEventSourceDouble('payments');
          instrument(dep, { meterProvider: provider });
          const directReader = new CollectingReader();
          const reference = new MeterProvider({ readers: [directReader] });
          const histogram = reference.getMeter('reference').createHistogram('reference', {
            advice: { explicitBucketBoundaries: [...METRICS_BUCKETS] },
          });
          for (const batch of batches) {
            for (const ms of batch) {
              dep.request({ durationMs: ms });
              histogram.record(ms / 1000, { 'prazo.outcome': 'success' });
            }
            const got = point<Histogram>(await reader.metrics(), 'prazo.client.request.duration', {
              'prazo.outcome': 'success',
            })?.value;
            const want = point<Histogram>(await directReader.metrics(), 'reference', {})?.value;
            expect(got?.count ?? 0).toBe(want?.count ?? 0);
            if (want === undefined) continue;
            expect(got?.buckets.counts).toEqual(want.buckets.counts);
            expect(got?.sum).toBeCloseTo(want.sum ?? 0, 6);
            expect(got?.min).toBe(want.min);
            expect(got?.max).toBe(want.max);
          }
          await Promise.all([provider.shutdown(), reference.shutdown()]);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('observes the retry ratio, configured timeouts, healthy latency and timeout ÷ p99 as gauges', async () => {
    const clock = createFakeClock(1_000_000);
    const { reader, provider } = setup();
    const dep = createEventSourceDouble('payments', { clock, policy: { connectMs: 100, readMs: 252 } });
    instrument(dep, { meterProvider: provider });
    dep.setBudget({ originals: 100, extras: 8, ratio: 0.08 });
    let data = await reader.metrics();
    const d = { 'prazo.dependency': 'payments' };
    expect(point(data, 'prazo.client.retry_ratio', d)?.value).toBe(0.08);
    expect(point(data, 'prazo.client.timeout', { ...d, 'prazo.timeout.phase': 'read' })?.value).toBe(0.252);
    expect(point(data, 'prazo.client.timeout', { ...d, 'prazo.timeout.phase': 'connect' })?.value).toBe(0.1);
    expect(point(data, 'prazo.client.healthy_latency', d)).toBeUndefined();
    for (let i = 1; i <= 100; i++) dep.window().record(i * 2);
    data = await reader.metrics();
    const p99 = point<number>(data, 'prazo.client.healthy_latency', {
      'prazo.latency.quantile': '0.99',
    })?.value;
    expect(p99).toBeCloseTo(0.198, 2);
    expect(point<number>(data, 'prazo.client.timeout_p99_ratio', d)?.value).toBeCloseTo(252 / 198, 2);
  });

  it('counts drift events by direction and stops observing after detach()', async () => {
    const { reader, provider } = setup();
    const dep = createEventSourceDouble('payments');
    let onDrift: ((e: DriftEvent) => void) | undefined;
    const monitor = {
      on: (event: string, l: (e: never) => void) => {
        if (event === 'drift') onDrift = l as (e: DriftEvent) => void;
      },
      off: (event: string) => {
        if (event === 'drift') onDrift = undefined;
      },
    };
    const handle = instrument(dep, { meterProvider: provider, driftMonitor: monitor });
    onDrift?.({ dependency: 'payments', direction: 'timeout-too-generous' } as DriftEvent);
    let data = await reader.metrics();
    expect(
      point(data, 'prazo.client.drift.events', { 'prazo.drift.direction': 'timeout-too-generous' })?.value,
    ).toBe(1);
    handle.detach();
    expect(onDrift).toBeUndefined();
    expect(dep.listenerCount()).toBe(0);
    dep.setBudget({ originals: 10, extras: 5, ratio: 0.5 });
    data = await reader.metrics();
    expect(point(data, 'prazo.client.retry_ratio', {})?.value).not.toBe(0.5);
  });

  it('uses only the OpenTelemetry names of the catalogue', async () => {
    const { reader, provider } = setup();
    instrument(createEventSourceDouble('payments'), { meterProvider: provider });
    const names = (await reader.metrics()).map((m) => m.descriptor.name);
    const catalogue = new Set<string>(Object.values(METRICS).map((m) => m.otel));
    for (const name of names) expect(catalogue.has(name)).toBe(true);
  });

  it('reports failed resolutions of the origins and the instances in force by state', async () => {
    const { reader, provider } = setup();
    let answer: () => string[] = () => ['http://10.0.0.1:8080', 'http://10.0.0.2:8080'];
    const { clock, dep } = createTestDependency({ origins: () => answer(), originsRefreshMs: 1_000 });
    instrument(dep, { meterProvider: provider });
    answer = () => [];
    clock.advance(1_000);
    const attrs = { 'prazo.dependency': 'inventory' };
    const data = await reader.metrics();
    expect(point<number>(data, METRICS.membershipRefreshFailures.otel, attrs)?.value).toBe(1);
    expect(
      point<number>(data, METRICS.instances.otel, { ...attrs, 'prazo.instance.state': 'up' })?.value,
    ).toBe(2);
    await dep.close();
  });
});

const METRICS_BUCKETS = [
  0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30,
];

describe('prazo/otel instrumentAdmission()', () => {
  it('observes admissions, refusals, queue figures and sojourn times at collection', async () => {
    const reader = new CollectingReader();
    const provider = new MeterProvider({ readers: [reader] });
    const clock = createFakeClock(1_700_000_000_000);
    const admission = createAdmission({ clock, maxInFlight: 1, maxQueue: 1 });
    const handle = instrumentAdmission(admission, { meterProvider: provider });
    const tickets: Array<{ release(finished: boolean): void }> = [];
    for (let i = 0; i < 3; i++)
      admission.offer(
        'GET /x',
        Deadline.after(1000, clock),
        'default',
        (t) => tickets.push(t),
        () => {},
      );
    clock.advance(3);
    tickets[0]!.release(true);
    const data = await reader.metrics();
    const m = SERVER_METRICS;
    expect(
      point(data, m.admitted.otel, { 'http.route': 'GET /x', 'prazo.criticality': 'default' })?.value,
    ).toBe(2);
    expect(point(data, m.refused.otel, { 'http.route': 'GET /x', 'prazo.reason': 'queue-full' })?.value).toBe(
      1,
    );
    expect(point(data, m.inFlight.otel, {})?.value).toBe(1);
    expect(point(data, m.queueLength.otel, {})?.value).toBe(0);
    expect(point(data, m.queueOverloaded.otel, {})?.value).toBe(0);
    const sojourn = point<Histogram>(data, m.queueSojourn.otel, {})?.value;
    expect(sojourn?.count).toBe(1);
    expect(sojourn?.sum).toBeCloseTo(0.003, 6);
    handle.detach();
    handle.detach();
    expect(() => instrumentAdmission({} as never, { meterProvider: provider })).toThrow(InvalidOptionError);
    await provider.shutdown();
  });
});
