import { describe, expect, it } from 'vitest';
import { formatUtilizationSweep, SWEEP_UTILIZATIONS, sweepUtilization } from './utilization-sweep.js';

describe('the utilisation sweep', () => {
  // A shorter run than the scenario's default, same dependency and trigger shape.
  const sweep = sweepUtilization({ durationMs: 60_000, triggerStartMs: 20_000, triggerDurationMs: 10_000 });

  it('runs naive with and without its retries at every utilisation from 30 % to 90 %', () => {
    expect(sweep.points.map((p) => p.utilization)).toEqual([...SWEEP_UTILIZATIONS]);
    for (const p of sweep.points) expect(p.rps).toBeCloseTo(p.utilization * sweep.capacityRps, 9);
    expect(sweep.capacityRps).toBe(1250);
  });

  it('finds that the retries add success with capacity to spare and remove it past some utilisation', () => {
    const low = sweep.points[0]!;
    const high = sweep.points[sweep.points.length - 1]!;
    expect(low.gain).toBeGreaterThan(0);
    expect(high.gain).toBeLessThan(0);
    expect(high.withRetries.load).toBeGreaterThan(1.5);
    expect(sweep.retriesRemoveSuccessFrom).not.toBeNull();
    expect(sweep.retriesLastAddSuccessAt).not.toBeNull();
    expect(sweep.retriesLastAddSuccessAt!).toBeLessThan(sweep.retriesRemoveSuccessFrom!);
    const text = formatUtilizationSweep(sweep);
    expect(text).toContain(`remove it from ${Math.round(sweep.retriesRemoveSuccessFrom! * 100)} %`);
  });

  it('refuses an offered load: the sweep sets it', () => {
    expect(() => sweepUtilization({ rps: 100 })).toThrow(/rps/);
  });
});
