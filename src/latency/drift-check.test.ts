import { describe, expect, it } from 'vitest';
import { calibrateTimeout } from '../policy/calibrate.js';
import { assessDrift, planRecalibration } from './drift-check.js';
import type { HealthySelection } from './healthy.js';
import { LatencyHistogram } from './histogram.js';

function selection(p99Ms: number, count = 1000, degraded = false): HealthySelection {
  const histogram = new LatencyHistogram();
  histogram.recordMany(p99Ms / 2, count - Math.ceil(count / 50));
  histogram.recordMany(p99Ms, Math.ceil(count / 50));
  const excluded: HealthySelection['excluded'] = degraded
    ? [
        {
          startMs: 0,
          endMs: 1,
          count: 50,
          errors: 10,
          errorRate: 0.2,
          p50Ms: 1,
          p99Ms: 1,
          reason: 'error-rate',
          detail: '',
        },
      ]
    : [];
  return { histogram, included: [], excluded };
}

const base = { slack: 1.4, tolerance: 0.2, minSamples: 100 };

describe('assessDrift', () => {
  it.each([
    [140, 100, 'ok', undefined],
    [113, 100, 'ok', undefined], // 113 ≥ 140 × 0.8 = 112
    [111, 100, 'drift', 'timeout-too-tight'],
    [168, 100, 'ok', undefined], // 168 ≤ 140 × 1.2
    [169, 100, 'drift', 'timeout-too-generous'],
  ] as const)('configured %d ms against a p99 of %d ms is %s', (configuredMs, p99Ms, status, direction) => {
    const a = assessDrift({ ...base, configuredMs, selection: selection(p99Ms) });
    expect(a.status).toBe(status);
    if (a.status !== 'insufficient') {
      expect(a.direction).toBe(direction);
      expect(a.recommendedMs).toBe(140);
      expect(a.ratio).toBeCloseTo(configuredMs / a.measuredP99Ms, 9);
    }
  });

  it('does not judge fewer samples than minSamples', () => {
    expect(assessDrift({ ...base, configuredMs: 10, selection: selection(100, 99) })).toEqual({
      status: 'insufficient',
      samples: 99,
    });
  });

  it('calls a window degraded for error-rate or p99-outlier exclusions, not for thin slices', () => {
    expect(assessDrift({ ...base, configuredMs: 140, selection: selection(100, 1000, true) })).toMatchObject({
      degraded: true,
    });
    const thin = selection(100);
    thin.excluded.push({ ...selection(1, 1, true).excluded[0]!, reason: 'too-few-samples' });
    expect(assessDrift({ ...base, configuredMs: 140, selection: thin })).toMatchObject({ degraded: false });
  });
});

describe('planRecalibration', () => {
  const plan = (over: Partial<Parameters<typeof planRecalibration>[0]>) =>
    planRecalibration({
      current: { connectMs: 140, readMs: 140, attempts: 2, warning: null },
      measuredP99Ms: 200,
      degraded: false,
      slack: 1.4,
      maxStepRatio: 1.25,
      userDeadlineMs: 1500,
      requestedAttempts: 2,
      overheadPerAttemptMs: 30,
      calibrate: calibrateTimeout,
      ...over,
    });

  it('raises by at most maxStepRatio towards p99 × slack', () => {
    expect(plan({})).toMatchObject({
      change: true,
      targetMs: 280,
      bounded: true,
      next: { readMs: 175, attempts: 2 },
    });
  });

  it('reaches the target when it is within one step', () => {
    expect(plan({ measuredP99Ms: 110 })).toMatchObject({
      change: true,
      bounded: false,
      next: { readMs: 154 },
    });
  });

  it('lowers by at most maxStepRatio, even from a degraded window', () => {
    const p = plan({
      current: { connectMs: 400, readMs: 500, attempts: 2, warning: null },
      measuredP99Ms: 100,
      degraded: true,
    });
    expect(p).toMatchObject({ change: true, bounded: true, next: { readMs: 400 } });
  });

  it('refuses to raise from a degraded window', () => {
    expect(plan({ degraded: true })).toMatchObject({ change: false, reason: 'degraded-window' });
  });

  it('caps a raise where one attempt fills the user deadline, and reduces attempts', () => {
    const p = plan({ userDeadlineMs: 190 });
    expect(p).toMatchObject({ change: true, cappedByDeadline: true, next: { readMs: 160, attempts: 1 } });
  });

  it('does not raise when the current timeout already fills the deadline', () => {
    expect(plan({ userDeadlineMs: 170 })).toMatchObject({ change: false, reason: 'deadline-cap' });
  });

  it('recomputes attempts from those originally requested', () => {
    const p = plan({
      current: { connectMs: 140, readMs: 300, attempts: 1, warning: null },
      measuredP99Ms: 180,
      userDeadlineMs: 600,
      requestedAttempts: 3,
    });
    expect(p).toMatchObject({
      change: true,
      next: { readMs: 252, attempts: 2, warning: { code: 'ATTEMPTS_REDUCED' } },
    });
  });
});
