import type { Attributes, Histogram } from '@opentelemetry/api';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DurationBuckets } from '../latency/duration-buckets.js';
import { createReplay, replay } from './otel-replay.js';

/** A histogram double that keeps what it was handed (the SDK's aggregation is tested elsewhere). */
function recorder(): Histogram & { values: number[] } {
  const values: number[] = [];
  return {
    values,
    record(value: number, _attributes?: Attributes) {
      values.push(value);
    },
  };
}

describe('replay()', () => {
  it('never hands the histogram a value below the interval min or above its max', () => {
    // Three samples of 3 ms: min and max are recorded as themselves, the third as what is left of
    // the sum — 0.009 − 0.003 − 0.003 is 0.002999999999999999 in floating point, below the min.
    const buckets = new DurationBuckets(1);
    for (let i = 0; i < 3; i++) buckets.record(0, 0.003);
    const histogram = recorder();
    replay(createReplay(buckets, histogram, [{}]));
    expect(histogram.values).toHaveLength(3);
    expect(Math.min(...histogram.values)).toBe(0.003);
    expect(Math.max(...histogram.values)).toBe(0.003);
  });

  it('hands over every sample, with the interval min and max exactly and the sum to rounding', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 40_000 }), { minLength: 1, maxLength: 30 }), (ms) => {
        const buckets = new DurationBuckets(1);
        for (const m of ms) buckets.record(0, m / 1000);
        const histogram = recorder();
        replay(createReplay(buckets, histogram, [{}]));
        const seconds = ms.map((m) => m / 1000);
        expect(histogram.values).toHaveLength(ms.length);
        expect(Math.min(...histogram.values)).toBe(Math.min(...seconds));
        expect(Math.max(...histogram.values)).toBe(Math.max(...seconds));
        const sum = histogram.values.reduce((a, b) => a + b, 0);
        expect(sum).toBeCloseTo(
          seconds.reduce((a, b) => a + b, 0),
          6,
        );
      }),
    );
  });
});
