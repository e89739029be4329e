import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../testing/fake-clock.js';
import { selectHealthy } from './healthy.js';
import { LatencyHistogram } from './histogram.js';
import { createSlicedWindow } from './sliced-window.js';

function slice(startMs: number, latencies: number[], errors = 0) {
  const histogram = new LatencyHistogram();
  for (const l of latencies) histogram.record(l);
  return { startMs, endMs: startMs + 10_000, count: latencies.length, errors, histogram };
}

const steady = (ms: number, n = 100) => Array.from({ length: n }, (_, i) => ms * (0.5 + i / n));

describe('time-sliced window', () => {
  it('rotates slices with the clock and forgets those older than the window', () => {
    const clock = createFakeClock(0);
    const window = createSlicedWindow({ slices: 3, sliceMs: 1000, clock });
    window.record(10);
    clock.advance(1000);
    window.record(20);
    window.record(undefined, true);
    expect(window.slices().map((s) => [s.startMs, s.count, s.errors])).toEqual([
      [0, 1, 0],
      [1000, 2, 1],
    ]);
    clock.advance(2500);
    window.record(30);
    // At t = 3500 the window holds slices 1000–3999: the first slice (0–999) has left it.
    expect(window.slices().map((s) => s.startMs)).toEqual([1000, 3000]);
  });

  it('keeps exactly the last `slices` slices after a long gap', () => {
    const clock = createFakeClock(0);
    const window = createSlicedWindow({ slices: 6, sliceMs: 10_000, clock });
    for (let t = 0; t < 120_000; t += 1000) {
      clock.advanceTo(t);
      window.record(5);
    }
    const slices = window.slices();
    expect(slices).toHaveLength(6);
    expect(slices[0]!.startMs).toBe(60_000);
    expect(slices.every((s) => s.count === 10)).toBe(true);
    clock.advance(1_000_000);
    expect(window.slices()).toEqual([]);
  });

  it('calibrates on the healthy slices and names a slow one', () => {
    const clock = createFakeClock(0);
    const window = createSlicedWindow({ clock });
    for (let s = 0; s < 6; s++) {
      clock.advanceTo(s * 10_000);
      for (const l of steady(s === 4 ? 2000 : 100)) window.record(l);
    }
    const { histogram, included, excluded } = window.healthy();
    expect(included).toHaveLength(5);
    expect(excluded).toEqual([expect.objectContaining({ startMs: 40_000, reason: 'p99-outlier' })]);
    expect(histogram.percentile(99)).toBeLessThan(160);
  });
});

describe('healthy-slice selection', () => {
  it('excludes a slice whose error rate is above the threshold', () => {
    const result = selectHealthy([slice(0, steady(100)), slice(10_000, steady(100), 10)]);
    expect(result.excluded.map((e) => e.reason)).toEqual(['error-rate']);
    expect(result.excluded[0]!.detail).toContain('10.0 %');
  });

  it('excludes slices with too few samples to judge', () => {
    const result = selectHealthy([slice(0, steady(100)), slice(10_000, [5000])]);
    expect(result.excluded).toEqual([expect.objectContaining({ reason: 'too-few-samples', count: 1 })]);
  });

  it('prefers the faster slice when only two can be compared', () => {
    const result = selectHealthy([slice(0, steady(900)), slice(10_000, steady(100))]);
    expect(result.included.map((s) => s.startMs)).toEqual([10_000]);
    expect(result.excluded.map((s) => s.reason)).toEqual(['p99-outlier']);
  });

  it('judges slices against a calibrated p99 when it is below their median: an incident alone is not healthy', () => {
    // Only slow slices left (the healthy ones aged out or failed): without a reference they are
    // each other's median, and the incident's p99 would pass for the dependency's.
    const slow = [slice(0, steady(900)), slice(10_000, steady(800))];
    expect(selectHealthy(slow).included).toHaveLength(2);
    const anchored = selectHealthy(slow, undefined, 200);
    expect(anchored.included).toEqual([]);
    expect(anchored.excluded.map((s) => s.reason)).toEqual(['p99-outlier', 'p99-outlier']);
    expect(anchored.excluded[0]!.detail).toMatch(/2 × the calibrated p99 \(200 ms\)/);
    expect(anchored.anchoredTo).toBe(200);
    expect(selectHealthy(slow).anchoredTo).toBeUndefined();
    // Within the factor of the reference, a slice slower than calibrated still counts (a drift).
    expect(selectHealthy([slice(0, steady(250))], undefined, 200).included).toHaveLength(1);
    // A dependency faster than calibrated is judged by its own median, as without a reference.
    const fast = [slice(0, steady(50)), slice(10_000, steady(50)), slice(20_000, steady(150))];
    expect(selectHealthy(fast, undefined, 200).excluded.map((s) => s.startMs)).toEqual([20_000]);
  });

  it('returns an empty histogram when nothing is healthy', () => {
    const result = selectHealthy([slice(0, [1, 2, 3])]);
    expect(result.histogram.count).toBe(0);
    expect(result.included).toEqual([]);
  });

  it('rejects a rule that cannot work, naming the option', () => {
    expect(() => selectHealthy([], { p99Factor: 0.5 })).toThrow(/p99Factor/);
    expect(() => createSlicedWindow({ slices: 0 })).toThrow(/slices/);
    expect(() => createSlicedWindow({ health: { maxErrorRate: 2 } })).toThrow(/health\.maxErrorRate/);
  });
});
