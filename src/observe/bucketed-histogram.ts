import {
  Histogram,
  type MetricObjectWithValues,
  type MetricType,
  type MetricValueWithName,
} from 'prom-client';
import type { DurationBuckets } from '../latency/duration-buckets.js';

type Labels = Record<string, string>;

/** One labelled series of a {@link BucketedHistogram}: series `series` of `buckets`. */
export interface BucketSeries {
  labels: Labels;
  buckets: DurationBuckets;
  series: number;
}

type HistogramValues = MetricObjectWithValues<MetricValueWithName<string>>;
// prom-client's types declare MetricType as an enum its JavaScript does not export: the string is the value.
const HISTOGRAM_TYPE = 'histogram' as unknown as MetricType;

/**
 * A prom-client histogram whose values live in prazo's {@link DurationBuckets}: nothing is observed
 * on the request path, the exposition is built from the bucket counts when the registry is read.
 * It stays a `Histogram` (same type line, same `aggregator` for cluster aggregation), so the
 * registry, `getSingleMetric()` and the text and JSON formats treat it like any other.
 */
export class BucketedHistogram extends Histogram<string> {
  readonly #name: string;
  readonly #help: string;
  readonly #read: () => BucketSeries[];

  constructor(
    configuration: ConstructorParameters<typeof Histogram<string>>[0] & { name: string; help: string },
    read: () => BucketSeries[],
  ) {
    super(configuration);
    this.#name = configuration.name;
    this.#help = configuration.help;
    this.#read = read;
  }

  override async get(): Promise<HistogramValues> {
    const name = this.#name;
    const values: MetricValueWithName<string>[] = [];
    for (const { labels, buckets, series } of this.#read()) {
      let cumulative = 0;
      const base = series * buckets.width;
      buckets.bounds.forEach((le, i) => {
        cumulative += buckets.counts[base + i]!;
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${name}_bucket` });
      });
      const count = cumulative + buckets.counts[base + buckets.bounds.length]!;
      values.push({ labels: { le: '+Inf', ...labels }, value: count, metricName: `${name}_bucket` });
      values.push({ labels, value: buckets.sum(series), metricName: `${name}_sum` });
      values.push({ labels, value: count, metricName: `${name}_count` });
    }
    return {
      name,
      help: this.#help,
      type: HISTOGRAM_TYPE,
      values,
      aggregator: 'sum',
      collect: () => {},
    };
  }

  // The registry prefers this to get() for the text format; both speak the public value shape.
  async getForPromString(): Promise<HistogramValues> {
    return this.get();
  }
}
