import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  MeterProvider,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CollectingReader } from '../../test/support/collecting-reader.js';
import { createEventSourceDouble } from '../../test/support/event-source-double.js';
import { isPrazoError } from '../errors.js';
import { DURATION_BUCKETS_SECONDS } from '../wire/metric-names.js';
import { createDurationProducer, instrument } from './otel.js';

function histogram(data: MetricData[], name: string, key: string, value: string): Histogram | undefined {
  const metric = data.filter((m) => m.descriptor.name === name);
  expect(metric.length).toBeLessThanOrEqual(1);
  return (metric[0]?.dataPoints as DataPoint<Histogram>[] | undefined)?.find(
    (p) => p.attributes[key] === value,
  )?.value;
}

const KINDS = ['original', 'retry', 'hedge'] as const;

describe('prazo/otel createDurationProducer()', () => {
  it('exports the same duration histograms as the record() path, built from prazo buckets at collection', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.array(
            fc.record({
              ms: fc.integer({ min: 0, max: 40_000 }),
              failed: fc.boolean(),
              attempts: fc.array(
                fc.record({ kind: fc.constantFrom(...KINDS), ms: fc.integer({ min: 0, max: 40_000 }) }),
                { maxLength: 3 },
              ),
            }),
            { maxLength: 25 },
          ),
          { minLength: 1, maxLength: 4 },
        ),
        async (batches) => {
          const dep = createEventSourceDouble('payments');
          const recordReader = new CollectingReader();
          const recorded = new MeterProvider({ readers: [recordReader] });
          instrument(dep, { meterProvider: recorded });
          const durations = createDurationProducer();
          const producerReader = new CollectingReader({ metricProducers: [durations] });
          const produced = new MeterProvider({ readers: [producerReader] });
          const handle = instrument(dep, { meterProvider: produced, durations });
          for (const batch of batches) {
            for (const call of batch)
              dep.request({
                durationMs: call.ms,
                outcome: call.failed ? 'failure' : 'success',
                attempts: call.attempts.map((a) => ({ kind: a.kind, durationMs: a.ms })),
              });
            const want = await recordReader.metrics();
            const got = await producerReader.metrics();
            const series: Array<[string, string, string]> = [
              ...['success', 'failure'].map((v): [string, string, string] => [
                'prazo.client.request.duration',
                'prazo.outcome',
                v,
              ]),
              ...KINDS.map((v): [string, string, string] => [
                'prazo.client.attempt.duration',
                'prazo.attempt.kind',
                v,
              ]),
            ];
            for (const [name, key, value] of series) {
              const w = histogram(want, name, key, value);
              const g = histogram(got, name, key, value);
              expect(g?.count ?? 0).toBe(w?.count ?? 0);
              if (w === undefined) continue;
              expect(g?.buckets.boundaries).toEqual(w.buckets.boundaries);
              expect(g?.buckets.counts).toEqual(w.buckets.counts);
              expect(g?.sum).toBeCloseTo(w.sum ?? 0, 6);
              expect(g?.min).toBe(w.min);
              expect(g?.max).toBe(w.max);
            }
          }
          handle.detach();
          await Promise.all([recorded.shutdown(), produced.shutdown()]);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('names, units and attributes the histograms like the instruments, cumulative since attached', async () => {
    const dep = createEventSourceDouble('payments');
    const durations = createDurationProducer();
    const reader = new CollectingReader({ metricProducers: [durations] });
    const provider = new MeterProvider({ readers: [reader] });
    const handle = instrument(dep, { meterProvider: provider, durations });
    dep.request({ durationMs: 40, attempts: [{ kind: 'original', durationMs: 35 }] });
    const first = await reader.metrics();
    const metric = first.find((m) => m.descriptor.name === 'prazo.client.request.duration');
    expect(metric?.descriptor.unit).toBe('s');
    expect(metric?.aggregationTemporality).toBe(AggregationTemporality.CUMULATIVE);
    const p = (metric?.dataPoints ?? [])[0] as DataPoint<Histogram>;
    expect(p.attributes).toEqual({ 'prazo.dependency': 'payments', 'prazo.outcome': 'success' });
    expect(p.value.buckets.boundaries).toEqual([...DURATION_BUCKETS_SECONDS]);
    expect(p.value.sum).toBeCloseTo(0.04, 6);
    dep.request({ durationMs: 2, attempts: [{ kind: 'original', durationMs: 1 }] });
    const second = histogram(
      await reader.metrics(),
      'prazo.client.request.duration',
      'prazo.outcome',
      'success',
    );
    expect(second).toMatchObject({ count: 2, min: 0.002, max: 0.04 });
    const attempt = histogram(
      await reader.metrics(),
      'prazo.client.attempt.duration',
      'prazo.attempt.kind',
      'original',
    );
    expect(attempt).toMatchObject({ count: 2, min: 0.001, max: 0.035 });
    // No duration instruments of the SDK's own: the producer is the only source of the histograms.
    const names = (await reader.metrics()).map((m) => m.descriptor.name);
    expect(names.filter((n) => n === 'prazo.client.request.duration')).toHaveLength(1);
    handle.detach();
    expect((await reader.metrics()).map((m) => m.descriptor.name)).not.toContain(
      'prazo.client.request.duration',
    );
    await provider.shutdown();
  });

  it('gives several readers of one producer the same cumulative figures', async () => {
    const dep = createEventSourceDouble('payments');
    const durations = createDurationProducer();
    const a = new CollectingReader({ metricProducers: [durations] });
    const b = new CollectingReader({ metricProducers: [durations] });
    const provider = new MeterProvider({ readers: [a, b] });
    instrument(dep, { meterProvider: provider, durations });
    const read = async (r: CollectingReader) =>
      histogram(await r.metrics(), 'prazo.client.request.duration', 'prazo.outcome', 'success');
    dep.request({ durationMs: 7 });
    expect(await read(a)).toMatchObject({ count: 1, min: 0.007, max: 0.007 });
    dep.request({ durationMs: 900 });
    expect(await read(a)).toMatchObject({ count: 2, min: 0.007, max: 0.9 });
    expect(await read(b)).toMatchObject({ count: 2, min: 0.007, max: 0.9 });
    await provider.shutdown();
  });

  it('refuses a durations option that no producer made', () => {
    const dep = createEventSourceDouble('payments');
    const provider = new MeterProvider();
    for (const bad of [{}, { collect: async () => ({}) }, 42, null])
      expect(() => instrument(dep, { meterProvider: provider, durations: bad as never })).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION' }),
      );
    try {
      instrument(dep, { meterProvider: provider, durations: {} as never });
    } catch (error) {
      expect(isPrazoError(error, 'INVALID_OPTION')).toBe(true);
      expect((error as Error).message).toMatch(/createDurationProducer/);
    }
  });
});
