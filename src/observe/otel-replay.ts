import type { Attributes, Histogram } from '@opentelemetry/api';
import type { DurationBuckets } from '../latency/duration-buckets.js';

/** What one duration histogram has handed to the SDK so far. */
export interface Replay {
  buckets: DurationBuckets;
  histogram: Histogram;
  attributes: readonly Attributes[];
  reportedCounts: Float64Array;
  reportedSums: Float64Array;
}

export function createReplay(
  buckets: DurationBuckets,
  histogram: Histogram,
  attributes: readonly Attributes[],
): Replay {
  return {
    buckets,
    histogram,
    attributes,
    reportedCounts: new Float64Array(buckets.counts.length),
    reportedSums: new Float64Array(buckets.sums.length),
  };
}

/**
 * Hands the durations recorded since the last call to the SDK's histogram.
 *
 * The OpenTelemetry API has no asynchronous histogram: only `Histogram.record()` feeds one. So the
 * request path records into prazo's buckets, and at collection (from the batch observable callback,
 * which the SDK runs before it reads the synchronous instruments) each bucket's new samples are
 * recorded with values chosen so that the SDK ends with exactly what per-call recording would have
 * given it: the count of every bucket, the sum, the interval's min and max. In a bucket with `n` new
 * samples summing to `S`, the min and max (when they fall in it) are recorded as themselves and the
 * others as their mean, which lies in the same bucket.
 */
export function replay(r: Replay): void {
  const { buckets, histogram, reportedCounts, reportedSums } = r;
  const { bounds, counts, sums, width } = buckets;
  for (let series = 0; series < buckets.series; series++) {
    const attributes = r.attributes[series]!;
    const min = buckets.intervalMin[series]!;
    const max = buckets.intervalMax[series]!;
    buckets.resetInterval(series);
    for (let i = 0; i < width; i++) {
      const slot = series * width + i;
      const n = counts[slot]! - reportedCounts[slot]!;
      if (n === 0) continue;
      let sum = sums[slot]! - reportedSums[slot]!;
      reportedCounts[slot] = counts[slot]!;
      reportedSums[slot] = sums[slot]!;
      const lower = i === 0 ? Number.NEGATIVE_INFINITY : bounds[i - 1]!;
      const upper = i < bounds.length ? bounds[i]! : Number.POSITIVE_INFINITY;
      let rest = n;
      if (min > lower && min <= upper) {
        histogram.record(min, attributes);
        sum -= min;
        rest--;
      }
      if (rest > 0 && max > lower && max <= upper) {
        histogram.record(max, attributes);
        sum -= max;
        rest--;
      }
      if (rest === 0) continue;
      let mean = sum / rest;
      // Rounding can nudge the mean past the interval's min or max (three samples of 3 ms leave
      // 0.009 − 0.003 − 0.003 = 0.002999999999999999 for the third), or past a bound: keep it
      // between the min and the max, and in the bucket its samples came from.
      if (mean < min) mean = min;
      else if (mean > max) mean = max;
      if (!(mean > lower)) mean = lower + (Math.abs(lower) * Number.EPSILON || Number.MIN_VALUE);
      else if (mean > upper) mean = upper;
      for (let k = 0; k < rest; k++) histogram.record(mean, attributes);
    }
  }
}
