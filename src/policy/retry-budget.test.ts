import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../errors.js';
import { createFakeClock } from '../testing/fake-clock.js';
import { createRetryBudget, RETRY_BUDGET_DEFAULTS } from './retry-budget.js';

describe('createRetryBudget — the article’s cases', () => {
  it('authorises at most 100 extras for 1000 failing originals 5 ms apart, ratio ≤ 0.1', () => {
    const clock = createFakeClock(0);
    const budget = createRetryBudget({ windowMs: 10_000, maxRatio: 0.1, minPerSecond: 3, clock });
    let authorised = 0;
    for (let i = 0; i < 1000; i += 1) {
      clock.advance(5);
      budget.recordOriginal();
      if (budget.tryConsume()) authorised += 1;
    }
    expect(authorised).toBeLessThanOrEqual(100);
    expect(budget.state().ratio).toBeLessThanOrEqual(0.1);
    // The exact figures of a sliding window: the 30 of the floor first, then one per 10 originals.
    expect(authorised).toBe(100);
    expect(budget.state()).toEqual({ originals: 1000, extras: 100, ratio: 0.1, refused: 0 });
  });

  it('still authorises an extra with only two originals in the window (the floor)', () => {
    const clock = createFakeClock(0);
    const budget = createRetryBudget({ windowMs: 10_000, maxRatio: 0.1, minPerSecond: 3, clock });
    clock.advance(100);
    budget.recordOriginal();
    clock.advance(100);
    budget.recordOriginal();
    expect(budget.tryConsume()).toBe(true);
  });
});

describe('createRetryBudget', () => {
  it('uses the article’s defaults', () => {
    expect(RETRY_BUDGET_DEFAULTS).toEqual({
      windowMs: 10_000,
      maxRatio: 0.1,
      minPerSecond: 3,
      bucketCount: 100,
    });
    expect(Object.isFrozen(RETRY_BUDGET_DEFAULTS)).toBe(true);
    const budget = createRetryBudget({ clock: createFakeClock(1_700_000_000_000) });
    let granted = 0;
    while (budget.tryConsume()) granted += 1;
    expect(granted).toBe(30); // floor: 3/s × 10 s
  });

  it('spends the slot when it authorises, so two callers never share one', () => {
    const budget = createRetryBudget({ minPerSecond: 0.1, windowMs: 10_000, clock: createFakeClock(0) });
    expect(budget.tryConsume()).toBe(true);
    expect(budget.tryConsume()).toBe(false);
    expect(budget.state()).toEqual({ originals: 0, extras: 1, ratio: 0, refused: 0 });
  });

  it('forgets originals and extras once they leave the window', () => {
    const clock = createFakeClock(0);
    const budget = createRetryBudget({ windowMs: 1000, maxRatio: 0.5, minPerSecond: 0, clock });
    for (let i = 0; i < 10; i += 1) budget.recordOriginal();
    for (let i = 0; i < 5; i += 1) expect(budget.tryConsume()).toBe(true);
    expect(budget.tryConsume()).toBe(false);
    clock.advance(999);
    expect(budget.state()).toEqual({ originals: 10, extras: 5, ratio: 0.5, refused: 0 });
    clock.advance(1);
    expect(budget.state()).toEqual({ originals: 0, extras: 0, ratio: 0, refused: 0 });
    expect(budget.tryConsume()).toBe(false);
  });

  it('moves one slot at a time: an event leaves at most windowMs / bucketCount early', () => {
    const clock = createFakeClock(0);
    const budget = createRetryBudget({ windowMs: 1000, bucketCount: 10, clock });
    clock.advance(150); // slot [100, 200)
    budget.recordOriginal();
    clock.advance(949); // now 1099: the slot of the event is still in the window
    expect(budget.state().originals).toBe(1);
    clock.advance(1); // now 1100: slot [100, 200) expires, 50 ms before an exact window would drop it
    expect(budget.state().originals).toBe(0);
  });

  it('clears everything after an idle period longer than the window', () => {
    const clock = createFakeClock(5_000);
    const budget = createRetryBudget({ windowMs: 1000, clock });
    budget.recordOriginal();
    budget.tryConsume();
    clock.advance(1_000_000);
    expect(budget.state()).toEqual({ originals: 0, extras: 0, ratio: 0, refused: 0 });
  });

  it('holds time still when the clock steps backwards', () => {
    let now = 10_000;
    const budget = createRetryBudget({ windowMs: 1000, clock: { ...createFakeClock(), now: () => now } });
    budget.recordOriginal();
    now = 2_000; // NTP step back by 8 s
    budget.recordOriginal();
    expect(budget.state().originals).toBe(2);
    now = 10_999;
    expect(budget.state().originals).toBe(2);
    now = 11_000;
    expect(budget.state().originals).toBe(0);
  });

  it('rejects each invalid option by name', () => {
    const cases: Array<[string, object]> = [
      ['windowMs', { windowMs: 0 }],
      ['windowMs', { windowMs: Number.NaN }],
      ['windowMs', { windowMs: Number.POSITIVE_INFINITY }],
      ['maxRatio', { maxRatio: -0.1 }],
      ['maxRatio', { maxRatio: '0.1' }],
      ['minPerSecond', { minPerSecond: -1 }],
      ['bucketCount', { bucketCount: 0 }],
      ['bucketCount', { bucketCount: 2.5 }],
      ['bucketCount', { bucketCount: 1_000_000 }],
      ['clock', { clock: {} }],
    ];
    for (const [option, options] of cases) {
      let thrown: unknown;
      try {
        createRetryBudget(options);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, option).toBeInstanceOf(InvalidOptionError);
      expect((thrown as InvalidOptionError).option).toBe(option);
      expect((thrown as Error).message).toContain(`\`${option}\``);
    }
  });
});

/**
 * The exact sliding window of the article: every timestamp kept, an event counted while
 * `t > now − L`. Comparisons are made on integers scaled by bucketCount so that no rounding can
 * blur a slot edge.
 */
function exactCount(times: readonly number[], now: number, lengthTimesN: number, n: number): number {
  let count = 0;
  for (const t of times) if (t <= now && t * n > now * n - lengthTimesN) count += 1;
  return count;
}

describe('createRetryBudget — refused calls', () => {
  it('keeps calls refused before any attempt out of the originals: they neither raise the ceiling nor dilute the ratio', () => {
    const clock = createFakeClock(0);
    const budget = createRetryBudget({ windowMs: 10_000, maxRatio: 0.1, minPerSecond: 0.1, clock });
    for (let i = 0; i < 2000; i += 1) budget.recordRefused?.();
    budget.recordOriginal();
    budget.recordOriginal();
    let granted = 0;
    while (budget.tryConsume()) granted += 1;
    expect(granted).toBe(1); // the floor (0.1/s × 10 s), not 10 % of 2002
    expect(budget.state()).toEqual({ originals: 2, extras: 1, ratio: 0.5, refused: 2000 });
    clock.advance(10_000);
    expect(budget.state().refused).toBe(0);
  });
});

describe('createRetryBudget against an exact sliding window (property)', () => {
  it('stays between the exact windows of windowMs − w and windowMs, and decides within that bound', () => {
    const op = fc.record({
      dtMs: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 3000 })),
      action: fc.constantFrom('original', 'original', 'consume', 'state'),
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2000 }),
        fc.integer({ min: 1, max: 40 }),
        fc.double({ min: 0, max: 2, noNaN: true }),
        fc.constantFrom(0, 0.5, 1, 3),
        fc.integer({ min: 0, max: 2_000_000_000_000 }),
        fc.array(op, { maxLength: 300 }),
        (windowMs, bucketCount, maxRatio, minPerSecond, startMs, ops) => {
          const clock = createFakeClock(startMs);
          const budget = createRetryBudget({ windowMs, bucketCount, maxRatio, minPerSecond, clock });
          const floor = (minPerSecond * windowMs) / 1000;
          const n = bucketCount;
          const full = windowMs * n; // windowMs, scaled by n
          const short = windowMs * n - windowMs; // windowMs − w, scaled by n
          const originals: number[] = [];
          const extras: number[] = [];
          for (const { dtMs, action } of ops) {
            clock.advance(dtMs);
            const now = clock.now();
            if (action === 'original') {
              budget.recordOriginal();
              originals.push(now);
            } else if (action === 'consume') {
              const granted = budget.tryConsume();
              const cap = (o: number) => Math.max(floor, o * maxRatio);
              if (granted) {
                // Authorised ⇒ the exact extras of the last windowMs − w were below the ceiling.
                expect(exactCount(extras, now, short, n)).toBeLessThan(
                  cap(exactCount(originals, now, full, n)),
                );
                extras.push(now);
              } else {
                // Refused ⇒ the exact extras of the last windowMs had reached the ceiling.
                expect(exactCount(extras, now, full, n)).toBeGreaterThanOrEqual(
                  cap(exactCount(originals, now, short, n)),
                );
              }
            }
            const state = budget.state();
            expect(state.originals).toBeGreaterThanOrEqual(exactCount(originals, now, short, n));
            expect(state.originals).toBeLessThanOrEqual(exactCount(originals, now, full, n));
            expect(state.extras).toBeGreaterThanOrEqual(exactCount(extras, now, short, n));
            expect(state.extras).toBeLessThanOrEqual(exactCount(extras, now, full, n));
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('matches the exact window exactly when events sit on slot starts', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 200 }),
        (bucketCount, steps) => {
          const w = 10;
          const windowMs = w * bucketCount;
          const clock = createFakeClock(0);
          const budget = createRetryBudget({ windowMs, bucketCount, clock });
          const times: number[] = [];
          for (const step of steps) {
            clock.advance(step * w);
            budget.recordOriginal();
            times.push(clock.now());
            const now = clock.now();
            expect(budget.state().originals).toBe(times.filter((t) => t > now - windowMs).length);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
