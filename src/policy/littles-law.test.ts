import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPrazoError } from '../errors.js';
import {
  analysePool,
  maxHoldTimeMs,
  maxTolerableTimeoutMs,
  slotsNeeded,
  timeoutHeadroom,
  timeToExhaustMs,
} from './littles-law.js';

const article = { rps: 100, poolSize: 50 };

describe("Little's law for a pool", () => {
  it('lets 100 rps on a 50-connection pool hold each connection at most 500 ms', () => {
    expect(maxHoldTimeMs(article)).toBe(500);
    expect(maxTolerableTimeoutMs(article)).toBe(500);
  });

  it('needs 3000 slots when a 30 s timeout meets a fully degraded dependency at 100 rps', () => {
    expect(slotsNeeded(100, 30_000)).toBe(3000);
  });

  it('exhausts the pool about half a second into full degradation with a 30 s timeout', () => {
    expect(timeToExhaustMs(article, 30_000)).toBe(500);
  });

  it('never exhausts the pool when timed-out calls free slots faster than new ones arrive', () => {
    expect(timeToExhaustMs(article, 500)).toBe(Number.POSITIVE_INFINITY);
    expect(timeToExhaustMs(article, 252)).toBe(Number.POSITIVE_INFINITY);
  });

  it('gives the calibrated 252 ms timeout 248 ms of headroom on that pool', () => {
    const headroom = timeoutHeadroom(article, 252);
    expect(headroom).toMatchObject({ timeoutMs: 252, slotsNeeded: 25.2, headroomMs: 248 });
    expect(headroom.utilisation).toBeCloseTo(0.504, 9);
    expect(headroom.headroomFactor).toBeCloseTo(500 / 252, 9);
  });

  it('analyses a pool, a production timeout and the calibrated one together', () => {
    const analysis = analysePool({ ...article, timeoutMs: 30_000, p99Ms: 180 });
    expect(analysis).toMatchObject({ maxHoldTimeMs: 500, maxTimeoutMs: 500 });
    expect(analysis.timeout).toMatchObject({ slotsNeeded: 3000, exhaustedAfterMs: 500, headroomMs: -29_500 });
    expect(analysis.calibrated).toMatchObject({ timeoutMs: 252, p99Ms: 180, slack: 1.4, headroomMs: 248 });
    expect(analysePool(article)).toMatchObject({ timeout: null, calibrated: null });
  });

  it('names the invalid input', () => {
    for (const [run, option] of [
      [() => maxHoldTimeMs({ rps: 0, poolSize: 50 }), 'rps'],
      [() => maxHoldTimeMs({ rps: 100, poolSize: Number.NaN }), 'poolSize'],
      [() => timeToExhaustMs(article, -1), 'timeoutMs'],
      [() => slotsNeeded(100, -1), 'holdTimeMs'],
      [() => analysePool({ ...article, p99Ms: 180, slack: 0.5 }), 'slack'],
    ] as const) {
      expect(run).toThrow(expect.objectContaining({ code: 'INVALID_OPTION', option }));
    }
  });

  it('holds rps × maxHoldTime = poolSize for any pool', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.001, max: 1e6, noNaN: true }),
        fc.integer({ min: 1, max: 100_000 }),
        (rps, poolSize) => {
          const slots = slotsNeeded(rps, maxHoldTimeMs({ rps, poolSize }));
          return Math.abs(slots - poolSize) <= poolSize * 1e-9;
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('exhausts the pool exactly when the timeout exceeds the largest tolerable one', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 120_000 }),
        (rps, poolSize, timeoutMs) => {
          const exhausted = Number.isFinite(timeToExhaustMs({ rps, poolSize }, timeoutMs));
          return exhausted === rps * timeoutMs > poolSize * 1000;
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('only throws prazo errors', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), (rps, poolSize) => {
        try {
          maxHoldTimeMs({ rps, poolSize } as never);
        } catch (error) {
          return isPrazoError(error, 'INVALID_OPTION');
        }
        return true;
      }),
      { numRuns: 500 },
    );
  });
});
