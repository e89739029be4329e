import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../errors.js';
import { BACKOFF_DEFAULTS, backoffDelayMs } from './backoff.js';

describe('backoffDelayMs', () => {
  it('doubles the ceiling with each retry, from 50 ms up to 2 s', () => {
    expect(BACKOFF_DEFAULTS).toEqual({ baseMs: 50, capMs: 2000 });
    const top = (retryIndex: number) => backoffDelayMs({ retryIndex, random: () => 0.999_999_9 });
    expect([0, 1, 2, 3, 4, 5, 6, 30, 5000].map(top)).toEqual([49, 99, 199, 399, 799, 1599, 1999, 1999, 1999]);
  });

  it('draws the whole interval (full jitter) from the injected random source', () => {
    expect(backoffDelayMs({ retryIndex: 2, random: () => 0 })).toBe(0);
    expect(backoffDelayMs({ retryIndex: 2, random: () => 0.5 })).toBe(100);
    expect(backoffDelayMs({ retryIndex: 0, baseMs: 10, capMs: 15, random: () => 0.5 })).toBe(5);
  });

  it('clamps a random source that leaves [0, 1)', () => {
    expect(backoffDelayMs({ retryIndex: 0, random: () => 1 })).toBe(49);
    expect(backoffDelayMs({ retryIndex: 0, random: () => 7 })).toBe(49);
    expect(backoffDelayMs({ retryIndex: 0, random: () => -1 })).toBe(0);
    expect(backoffDelayMs({ retryIndex: 0, random: () => Number.NaN })).toBe(0);
  });

  it('gives 0 when base or cap is 0', () => {
    expect(backoffDelayMs({ retryIndex: 2000, baseMs: 0, random: () => 0.5 })).toBe(0);
    expect(backoffDelayMs({ retryIndex: 3, capMs: 0, random: () => 0.5 })).toBe(0);
  });

  it('rejects invalid input by name', () => {
    const cases: Array<[string, Parameters<typeof backoffDelayMs>[0]]> = [
      ['retryIndex', { retryIndex: -1 }],
      ['retryIndex', { retryIndex: 1.5 }],
      ['backoff.baseMs', { retryIndex: 0, baseMs: Number.NaN }],
      ['backoff.capMs', { retryIndex: 0, capMs: -1 }],
    ];
    for (const [option, input] of cases) {
      expect(() => backoffDelayMs(input)).toThrow(InvalidOptionError);
      expect(() => backoffDelayMs(input)).toThrow(`\`${option}\``);
    }
  });

  it('stays a whole number of ms in [0, min(cap, base × 2^i)) (property)', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 2000 }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.double(),
        (retryIndex, baseMs, capMs, r) => {
          const delay = backoffDelayMs({ retryIndex, baseMs, capMs, random: () => r });
          const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(retryIndex, 1023));
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay === 0 || delay < ceiling).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
