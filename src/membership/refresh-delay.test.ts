import { describe, expect, it } from 'vitest';
import { FAILURE_RETRY_BASE_MS, failureRetryMs, ttlRefreshMs } from './refresh-delay.js';

describe('ttlRefreshMs', () => {
  it('honours a TTL between the floor and the ceiling', () => {
    expect(ttlRefreshMs(5, 1_000, 30_000)).toBe(5_000);
  });

  it('holds a zero or tiny TTL at the floor, a long one at the ceiling', () => {
    expect(ttlRefreshMs(0, 1_000, 30_000)).toBe(1_000);
    expect(ttlRefreshMs(86_400, 1_000, 30_000)).toBe(30_000);
  });

  it('takes the ceiling when the answer has no TTL', () => {
    expect(ttlRefreshMs(undefined, 1_000, 30_000)).toBe(30_000);
    expect(ttlRefreshMs(Number.NaN, 1_000, 30_000)).toBe(30_000);
  });
});

describe('failureRetryMs', () => {
  it('doubles with each failure in a row, from half a second, up to the usual refresh', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => failureRetryMs(n, 10_000))).toEqual([
      500, 1_000, 2_000, 4_000, 8_000, 10_000, 10_000,
    ]);
    expect(failureRetryMs(1, 10_000)).toBe(FAILURE_RETRY_BASE_MS);
  });

  it('never waits longer than the refresh, however short, nor overflows after many failures', () => {
    expect(failureRetryMs(1, 200)).toBe(200);
    expect(failureRetryMs(10_000, 30_000)).toBe(30_000);
  });
});
