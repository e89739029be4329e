import { DURATION_BUCKETS_SECONDS } from '../wire/metric-names.js';

/**
 * Fixed-memory duration histograms for a few series (one per label value: outcome, attempt kind),
 * laid out as the exported buckets ({@link DURATION_BUCKETS_SECONDS}, upper bounds inclusive, plus
 * +Inf). Recording is a bucket search over 21 bounds and four typed-array writes — no allocation,
 * no hashing of labels — so the request path never touches prom-client or the OpenTelemetry SDK;
 * the adapters turn these counts into their own histograms when the metrics are read.
 *
 * Everything is cumulative since creation except `intervalMin`/`intervalMax`, which the reader
 * resets with {@link DurationBuckets.resetInterval} (OpenTelemetry keeps min and max per interval).
 */
export class DurationBuckets {
  /** Upper bounds, in seconds (shared, frozen). */
  readonly bounds: readonly number[] = DURATION_BUCKETS_SECONDS;
  /** Slots per series: one per bound and one for +Inf. */
  readonly width = DURATION_BUCKETS_SECONDS.length + 1;
  /** Samples per bucket (not cumulative), `series × width`. */
  readonly counts: Float64Array;
  /** Sum of the samples per bucket, in seconds, `series × width`. */
  readonly sums: Float64Array;
  /** Smallest and largest sample per series since the last {@link DurationBuckets.resetInterval}. */
  readonly intervalMin: Float64Array;
  readonly intervalMax: Float64Array;

  /** Number of series. */
  readonly series: number;

  constructor(series: number) {
    this.series = series;
    this.counts = new Float64Array(series * this.width);
    this.sums = new Float64Array(series * this.width);
    this.intervalMin = new Float64Array(series).fill(Number.POSITIVE_INFINITY);
    this.intervalMax = new Float64Array(series).fill(Number.NEGATIVE_INFINITY);
  }

  /** Adds one sample of `seconds` to `series`. */
  record(series: number, seconds: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]!) i++;
    const slot = series * this.width + i;
    this.counts[slot]!++;
    this.sums[slot]! += seconds;
    if (seconds < this.intervalMin[series]!) this.intervalMin[series] = seconds;
    if (seconds > this.intervalMax[series]!) this.intervalMax[series] = seconds;
  }

  /** Samples of `series` in total. */
  count(series: number): number {
    let n = 0;
    for (let i = series * this.width, end = i + this.width; i < end; i++) n += this.counts[i]!;
    return n;
  }

  /** Sum of the samples of `series`, in seconds. */
  sum(series: number): number {
    let s = 0;
    for (let i = series * this.width, end = i + this.width; i < end; i++) s += this.sums[i]!;
    return s;
  }

  /** Starts a new min/max interval for `series`. */
  resetInterval(series: number): void {
    this.intervalMin[series] = Number.POSITIVE_INFINITY;
    this.intervalMax[series] = Number.NEGATIVE_INFINITY;
  }
}
