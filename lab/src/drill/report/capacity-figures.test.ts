import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dominates, type PhaseTradeOff, recoveryMs, successNoise } from './capacity-figures.js';

const phase = (success: number, load: number, checkouts?: number): PhaseTradeOff => ({
  success,
  load,
  dominatedBy: [],
  ...(checkouts === undefined ? {} : { checkouts }),
});

describe('which column dominates another in a phase', () => {
  it('takes more success at less load, each beyond its margin', () => {
    expect(dominates(phase(1, 0.99, 400), phase(0.9, 1.07, 400))).toBe(true);
    // Less load but less success, or the same success: a trade-off, or equal.
    expect(dominates(phase(0.9, 0.99, 400), phase(1, 1.07, 400))).toBe(false);
    expect(dominates(phase(1, 0.99, 400), phase(1, 1.07, 400))).toBe(false);
    // More success, the same load (within 0.01 request per checkout).
    expect(dominates(phase(1, 1.065, 400), phase(0.9, 1.07, 400))).toBe(false);
  });

  it('does not call a difference within the noise of the phase’s checkouts more success', () => {
    // One checkout of 250: 99.6 % against 100 %.
    expect(successNoise(phase(1, 0.992, 250), phase(0.996, 1.016, 250))).toBeGreaterThan(0.004);
    expect(dominates(phase(1, 0.992, 250), phase(0.996, 1.016, 250))).toBe(false);
    // The same two figures over many more checkouts are a difference.
    expect(dominates(phase(1, 0.992, 250_000), phase(0.996, 1.016, 250_000))).toBe(true);
    // Without counts (a report written before they were kept) only the fixed margin applies.
    expect(dominates(phase(1, 0.992), phase(0.996, 1.016))).toBe(true);
  });

  it('never says two columns dominate each other, nor a column itself', () => {
    const arb = fc.record({
      success: fc.double({ min: 0, max: 1, noNaN: true }),
      load: fc.double({ min: 0, max: 5, noNaN: true }),
      checkouts: fc.integer({ min: 1, max: 10_000 }),
    });
    fc.assert(
      fc.property(arb, arb, (a, b) => {
        const x = phase(a.success, a.load, a.checkouts);
        const y = phase(b.success, b.load, b.checkouts);
        return !(dominates(x, y) && dominates(y, x)) && !dominates(x, x);
      }),
    );
  });
});

describe('the time to recover', () => {
  it('is the first instant from which success holds for the whole span', () => {
    const slice = (sent: number, failed: number) => ({ sent, failed });
    const buckets = [
      slice(10, 10),
      slice(10, 5),
      slice(10, 0),
      slice(10, 0),
      slice(10, 0),
      slice(10, 0),
      slice(10, 0),
    ];
    expect(recoveryMs(buckets, 500, 0, 3_500)).toBe(1_000);
    expect(recoveryMs(buckets.slice(0, 5), 500, 0, 2_500)).toBeNull();
  });
});
