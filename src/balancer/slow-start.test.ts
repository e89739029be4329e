import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { slowStartShare } from './slow-start.js';

describe('slowStartShare', () => {
  it('ramps linearly from the minimum share to 1 over the slow-start time', () => {
    expect(slowStartShare(-5, 10_000, 0.1)).toBe(0.1);
    expect(slowStartShare(0, 10_000, 0.1)).toBe(0.1);
    expect(slowStartShare(5_000, 10_000, 0.1)).toBeCloseTo(0.55, 12);
    expect(slowStartShare(10_000, 10_000, 0.1)).toBe(1);
    expect(slowStartShare(1, 0, 0.1)).toBe(1);
  });

  it('never decreases with time and stays within [minimum, 1]', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e6, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: 1e5, noNaN: true }),
        fc.double({ min: 1, max: 1e6, noNaN: true }),
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        (t, dt, window, min) => {
          const a = slowStartShare(t, window, min);
          const b = slowStartShare(t + dt, window, min);
          expect(b).toBeGreaterThanOrEqual(a - 1e-12);
          expect(a).toBeGreaterThanOrEqual(min - 1e-12);
          expect(a).toBeLessThanOrEqual(1);
        },
      ),
    );
  });
});
