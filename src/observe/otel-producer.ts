import type { Attributes, HrTime } from '@opentelemetry/api';
import type { DurationBuckets } from '../latency/duration-buckets.js';
import { DURATION_BUCKETS_SECONDS, METRICS, type MetricDefinition } from '../wire/metric-names.js';
import { VERSION } from './otel-tracing.js';

/** `DataPointType.HISTOGRAM` of `@opentelemetry/sdk-metrics`. */
const HISTOGRAM_POINT = 0;
/** `AggregationTemporality.CUMULATIVE` of `@opentelemetry/sdk-metrics`. */
const CUMULATIVE = 1;
/** `ValueType.DOUBLE` of `@opentelemetry/api`. */
const DOUBLE = 1;

/** A histogram data point as `@opentelemetry/sdk-metrics` exports it. */
export interface DurationDataPoint {
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  readonly attributes: Attributes;
  readonly value: {
    buckets: { boundaries: number[]; counts: number[] };
    sum: number;
    count: number;
    min: number;
    max: number;
  };
}

/** A histogram metric as `@opentelemetry/sdk-metrics` exports it (cumulative). */
export interface DurationMetricData {
  readonly descriptor: { name: string; description: string; unit: string; valueType: typeof DOUBLE };
  readonly aggregationTemporality: typeof CUMULATIVE;
  readonly dataPointType: typeof HISTOGRAM_POINT;
  readonly dataPoints: DurationDataPoint[];
}

/**
 * What {@link createDurationProducer} returns: a `MetricProducer` of `@opentelemetry/sdk-metrics`,
 * to pass in a reader's `metricProducers`, and then to `instrument(…, { durations })`.
 */
export interface DurationProducer {
  /** Called by the reader at each collection: the duration histograms of every attached dependency. */
  collect(options?: { timeoutMillis?: number }): Promise<{
    resourceMetrics: {
      /** Ignored by the reader, which keeps its SDK's resource. */
      // biome-ignore lint/suspicious/noExplicitAny: the SDK's Resource type, which the reader replaces.
      resource: any;
      scopeMetrics: Array<{ scope: { name: string; version?: string }; metrics: DurationMetricData[] }>;
    };
    errors: unknown[];
  }>;
}

/** One dependency's duration histograms as the producer reads them. */
export interface DurationSource {
  request: { buckets: DurationBuckets; attributes: readonly Attributes[] };
  attempt: { buckets: DurationBuckets; attributes: readonly Attributes[] };
}

interface Registered {
  source: DurationSource;
  startTime: HrTime;
  /** Smallest and largest sample per series since the source was attached (request, then attempt). */
  min: [Float64Array, Float64Array];
  max: [Float64Array, Float64Array];
}

/** The producer's side that `instrument()` talks to. @internal */
export interface DurationRegistry {
  attach(source: DurationSource): () => void;
}

const registries = new WeakMap<DurationProducer, DurationRegistry>();

/**
 * The registry behind a producer made by {@link createDurationProducer}, or `undefined`.
 * @internal
 */
export function durationRegistry(producer: unknown): DurationRegistry | undefined {
  return typeof producer === 'object' && producer !== null
    ? registries.get(producer as DurationProducer)
    : undefined;
}

function hrTime(epochMs: number): HrTime {
  const seconds = Math.floor(epochMs / 1000);
  const nanos = Math.min(999_999_999, Math.round((epochMs - seconds * 1000) * 1e6));
  return [seconds, nanos];
}

function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * A producer of prazo's duration histograms (`prazo.client.request.duration`,
 * `prazo.client.attempt.duration`) for OpenTelemetry SDK readers, built at collection straight from
 * prazo's own buckets: no `Histogram.record()` per sample at all. Without it, `instrument()` hands each
 * sample recorded since the last collection to the SDK's histograms (one `record()` each, ~0.7 µs
 * with the SDK); with it, a collection costs the same whatever the traffic.
 *
 * The histograms are cumulative (count, sum, min and max since the dependency was attached), with the
 * bucket boundaries of `DURATION_BUCKETS_SECONDS` and the same names, units and attributes as the
 * instruments `instrument()` creates otherwise. The reader's `metricProducers` option is marked
 * experimental by the SDK (`@opentelemetry/sdk-metrics` 1.25 and later).
 *
 * @example
 * const durations = createDurationProducer();
 * const reader = new PeriodicExportingMetricReader({ exporter, metricProducers: [durations] });
 * const provider = new MeterProvider({ readers: [reader] });
 * instrument(payments, { meterProvider: provider, durations });
 */
export function createDurationProducer(
  options: { scope?: { name: string; version?: string } } = {},
): DurationProducer {
  const scope = options.scope ?? { name: 'prazo', version: VERSION };
  const registered = new Set<Registered>();

  const points = (def: MetricDefinition, which: 0 | 1, endTime: HrTime): DurationMetricData => {
    const dataPoints: DurationDataPoint[] = [];
    for (const r of registered) {
      const { buckets, attributes } = which === 0 ? r.source.request : r.source.attempt;
      const min = r.min[which];
      const max = r.max[which];
      for (let series = 0; series < buckets.series; series++) {
        if (buckets.intervalMin[series]! < min[series]!) min[series] = buckets.intervalMin[series]!;
        if (buckets.intervalMax[series]! > max[series]!) max[series] = buckets.intervalMax[series]!;
        buckets.resetInterval(series);
        const from = series * buckets.width;
        const counts = Array.from(buckets.counts.subarray(from, from + buckets.width));
        let count = 0;
        for (const n of counts) count += n;
        if (count === 0) continue;
        dataPoints.push({
          startTime: r.startTime,
          endTime,
          attributes: attributes[series]!,
          value: {
            buckets: { boundaries: [...DURATION_BUCKETS_SECONDS], counts },
            sum: buckets.sum(series),
            count,
            min: min[series]!,
            max: max[series]!,
          },
        });
      }
    }
    return {
      descriptor: { name: def.otel, description: def.help, unit: def.unit, valueType: DOUBLE },
      aggregationTemporality: CUMULATIVE,
      dataPointType: HISTOGRAM_POINT,
      dataPoints,
    };
  };

  const producer: DurationProducer = {
    async collect() {
      const endTime = hrTime(nowMs());
      const metrics = [
        points(METRICS.requestDuration, 0, endTime),
        points(METRICS.attemptDuration, 1, endTime),
      ].filter((m) => m.dataPoints.length > 0);
      return {
        resourceMetrics: {
          resource: undefined,
          scopeMetrics: metrics.length > 0 ? [{ scope, metrics }] : [],
        },
        errors: [],
      };
    },
  };
  const extremes = (b: DurationBuckets): [Float64Array, Float64Array] => [
    new Float64Array(b.series).fill(Number.POSITIVE_INFINITY),
    new Float64Array(b.series).fill(Number.NEGATIVE_INFINITY),
  ];
  registries.set(producer, {
    attach(source) {
      const [requestMin, requestMax] = extremes(source.request.buckets);
      const [attemptMin, attemptMax] = extremes(source.attempt.buckets);
      const entry: Registered = {
        source,
        startTime: hrTime(nowMs()),
        min: [requestMin, attemptMin],
        max: [requestMax, attemptMax],
      };
      registered.add(entry);
      return () => registered.delete(entry);
    },
  });
  return producer;
}
