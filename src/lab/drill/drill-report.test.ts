import { describe, expect, it } from 'vitest';
import { windowRatio } from './drill-recorder.js';
import { acceptanceChecks, type ConfigFigures } from './drill-report.js';

const figures = (over: Partial<ConfigFigures>): ConfigFigures =>
  ({
    independentSuccessDuringDegradation: 1,
    burstAmplification: 1,
    afterDeadline: 0,
    tail: {
      hedgedP99Ms: 100,
      unhedgedP99Ms: 300,
      edgeHedgedP99Ms: 90,
      edgeUnhedgedP99Ms: 280,
      hedgedExtraAttemptShare: 0.05,
      hedgeShare: 0.04,
      supplierHedges: 5,
    },
    ...over,
  }) as ConfigFigures;

describe('the drill report', () => {
  it('computes the retry ratio from what the supplier received', () => {
    expect(windowRatio([{ originals: 100, retries: 5, hedges: 5 }])).toBeCloseTo(0.1);
    expect(windowRatio([{ originals: 0, retries: 3, hedges: 0 }])).toBeNull();
  });

  it('passes every acceptance check when naive falls over and prazo holds', () => {
    const checks = acceptanceChecks({
      naive: figures({
        independentSuccessDuringDegradation: 0.2,
        burstAmplification: 2.8,
        afterDeadline: 300,
      }),
      prazo: figures({ independentSuccessDuringDegradation: 1, burstAmplification: 1.08 }),
    });
    expect(checks.filter((c) => !c.pass)).toEqual([]);
  });

  it('fails the checks that the figures contradict, with the figure in the detail', () => {
    const checks = acceptanceChecks({
      naive: figures({ independentSuccessDuringDegradation: 0.99, burstAmplification: 1.2 }),
      prazo: figures({
        independentSuccessDuringDegradation: 0.98,
        burstAmplification: 1.3,
        afterDeadline: 2,
      }),
    });
    const failed = checks.filter((c) => !c.pass).map((c) => c.detail);
    expect(failed).toContain('prazo 98 %');
    expect(failed).toContain('prazo 1.3×');
    expect(failed).toContain('prazo 2');
  });
});
