import { describe, expect, it } from 'vitest';
import { ejectionMs, inPanic, isFailureOutlier, maxEjected } from './outlier-rules.js';

describe('outlier rules', () => {
  it('lengthens each ejection by the base time, up to the cap', () => {
    expect([1, 2, 3, 40].map((n) => ejectionMs(n, 10_000, 35_000))).toEqual([10_000, 20_000, 30_000, 35_000]);
  });

  it('allows half of the fleet out, at least one from two instances, none of a single one', () => {
    expect([0, 1, 2, 3, 4, 5, 10, 100].map((n) => maxEjected(n, 0.5))).toEqual([0, 0, 1, 1, 2, 2, 5, 50]);
    expect(maxEjected(10, 0.1)).toBe(1);
  });

  it('panics below the threshold share of instances up', () => {
    expect(inPanic(1, 2, 0.5)).toBe(false);
    expect(inPanic(1, 3, 0.5)).toBe(true);
    expect(inPanic(0, 1, 0.5)).toBe(true);
    expect(inPanic(0, 3, 0)).toBe(false);
  });

  it('calls an instance an outlier only when it fails clearly more than its peers', () => {
    // 40 % failures, peers healthy: an outlier.
    expect(isFailureOutlier(8, 20, 0, 40, 0.3, 2)).toBe(true);
    // Below the absolute ratio.
    expect(isFailureOutlier(5, 20, 0, 40, 0.3, 2)).toBe(false);
    // Everybody fails 40 %: no outlier.
    expect(isFailureOutlier(8, 20, 16, 40, 0.3, 2)).toBe(false);
    // A chance high window against low-failing peers is not enough (z-test).
    expect(isFailureOutlier(13, 20, 10, 40, 0.3, 2)).toBe(false);
    // No outcome of the peers: nothing to compare with.
    expect(isFailureOutlier(20, 20, 0, 0, 0.3, 2)).toBe(false);
  });
});
