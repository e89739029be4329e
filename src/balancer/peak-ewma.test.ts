import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextPeakEwma, peakEwmaAt } from './peak-ewma.js';

const TAU = 10_000;

describe('peak-EWMA', () => {
  it('jumps to a slower sample at once', () => {
    expect(nextPeakEwma(5, 0, 150, 1, TAU)).toBe(150);
  });

  it('comes down toward faster samples over the time constant, not over the number of samples', () => {
    // A thousand fast answers within one second move it about as far as one second allows.
    let ewma = 150;
    for (let t = 1; t <= 1_000; t++) ewma = nextPeakEwma(ewma, t - 1, 5, t, TAU);
    const expected = 5 + (150 - 5) * Math.exp(-1_000 / TAU);
    expect(ewma).toBeCloseTo(expected, 6);
    // After three time constants of fast answers it is within 5 % of the gap.
    for (let t = 1_001; t <= 30_000; t += 10) ewma = nextPeakEwma(ewma, t - 10, 5, t, TAU);
    expect(ewma - 5).toBeLessThan(0.05 * 145);
  });

  it('decays toward zero while no answer comes, halving every τ ln 2', () => {
    expect(peakEwmaAt(100, 0, TAU * Math.LN2, TAU)).toBeCloseTo(50, 9);
    expect(peakEwmaAt(100, 50, 10, TAU)).toBe(100); // a clock that went back counts as no time
  });

  it('stays between the lower and the higher of the average and the sample', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.double({ min: -1e5, max: 1e6, noNaN: true }),
        (ewma, sample, dt) => {
          const next = nextPeakEwma(ewma, 0, sample, dt, TAU);
          expect(next).toBeGreaterThanOrEqual(Math.min(ewma, sample) - 1e-9);
          expect(next).toBeLessThanOrEqual(Math.max(ewma, sample) + 1e-9);
        },
      ),
    );
  });
});
