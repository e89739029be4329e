import { describe, expect, it } from 'vitest';
import { DURATION_BUCKETS_SECONDS } from '../wire/metric-names.js';
import { DurationBuckets } from './duration-buckets.js';

describe('DurationBuckets', () => {
  it('puts a sample equal to a bound in that bound’s bucket, as Prometheus `le` does', () => {
    const b = new DurationBuckets(1);
    b.record(0, 0.05);
    const i = DURATION_BUCKETS_SECONDS.indexOf(0.05);
    expect(b.counts[i]).toBe(1);
    expect(b.counts[i + 1]).toBe(0);
  });

  it('counts samples above the last bound in the +Inf slot', () => {
    const b = new DurationBuckets(1);
    b.record(0, 31);
    expect(b.counts[DURATION_BUCKETS_SECONDS.length]).toBe(1);
    expect(b.count(0)).toBe(1);
    expect(b.sum(0)).toBe(31);
  });

  it('keeps each series apart and tracks the interval’s min and max until reset', () => {
    const b = new DurationBuckets(2);
    b.record(1, 0.004);
    b.record(1, 0.2);
    b.record(0, 0.3);
    expect([b.count(0), b.count(1)]).toEqual([1, 2]);
    expect(b.sum(1)).toBeCloseTo(0.204, 12);
    expect([b.intervalMin[1], b.intervalMax[1]]).toEqual([0.004, 0.2]);
    b.resetInterval(1);
    expect(b.intervalMin[1]).toBe(Number.POSITIVE_INFINITY);
    expect(b.count(1)).toBe(2);
  });
});
