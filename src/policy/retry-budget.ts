import { type Clock, systemClock } from '../clock.js';
import { InvalidOptionError } from '../errors.js';
import { integerIn, nonNegative, objectOption, pathName, positiveMs } from '../option-checks.js';

/**
 * Options of {@link createRetryBudget}. Every duration is in milliseconds.
 */
export interface RetryBudgetOptions {
  /**
   * Length of the sliding window over which originals and extra attempts are counted, in ms.
   * @default 10_000
   */
  windowMs?: number;
  /**
   * Largest share of extra attempts over originals in the window (0.1 = at most 10 % extra load).
   * @default 0.1
   */
  maxRatio?: number;
  /**
   * Extra attempts per second always allowed, however few originals there are, so that a
   * low-traffic route keeps its second chance. The floor is `minPerSecond × windowMs / 1000`.
   * @default 3
   */
  minPerSecond?: number;
  /**
   * Number of slots the window is cut into. The window moves one slot (`windowMs / bucketCount` ms)
   * at a time; memory is two numbers per slot whatever the request rate.
   * @default 100
   */
  bucketCount?: number;
  /** Source of time. @default systemClock */
  clock?: Clock;
}

/** What a retry budget has counted over the current window. */
export interface RetryBudgetState {
  /** Original requests recorded in the window. */
  originals: number;
  /** Extra attempts (retries and hedges) authorised in the window. */
  extras: number;
  /** `extras / originals`, or 0 when there is no original in the window. */
  ratio: number;
  /**
   * Calls refused before any attempt (the deadline could not hold the dependency's p99) in the
   * window. They never reached the dependency, so they are not originals and earn no extra attempt.
   * Absent from budgets that do not implement {@link RetryBudget.recordRefused}.
   */
  refused?: number;
}

/**
 * A retry budget shared by every request to one dependency. Retries are a scarce resource of the
 * dependency, not a right of each request.
 */
export interface RetryBudget {
  /**
   * Counts one original request (call it once per request that reaches the dependency, before its
   * first attempt). `nowMs` is the time now on the budget's own clock, for a caller that has just
   * read that clock (a budget may ignore it; without it, the budget reads its clock).
   */
  recordOriginal(nowMs?: number): void;
  /**
   * Counts one call refused before any attempt, apart from the originals: a refused call is not
   * traffic the dependency saw, and counting it as an original would inflate the budget (and dilute
   * the retry ratio) exactly when calls fail fast. Optional for budgets written by hand.
   */
  recordRefused?(): void;
  /**
   * Authorises one extra attempt (a retry or a hedge) and, when it does, spends it at once so that
   * two concurrent requests can never spend the same slot. `false` is an answer, not a failure.
   */
  tryConsume(): boolean;
  /** What the window holds now. */
  state(): RetryBudgetState;
}

/** Options of a retry budget once defaults are applied and values validated. */
export interface NormalizedRetryBudgetOptions {
  readonly windowMs: number;
  readonly maxRatio: number;
  readonly minPerSecond: number;
  readonly bucketCount: number;
  readonly clock: Clock;
}

/** Default options of {@link createRetryBudget}, as the article states them. */
export const RETRY_BUDGET_DEFAULTS: Readonly<{
  windowMs: number;
  maxRatio: number;
  minPerSecond: number;
  bucketCount: number;
}> = Object.freeze({
  windowMs: 10_000,
  maxRatio: 0.1,
  minPerSecond: 3,
  bucketCount: 100,
});

const MAX_BUCKETS = 10_000;

/**
 * Applies {@link RETRY_BUDGET_DEFAULTS} and validates every option.
 *
 * @param optionPath prefix of the option names in error messages, e.g. `'retryBudget.'`.
 * @throws {@link InvalidOptionError} naming the first invalid option.
 */
export function normalizeRetryBudgetOptions(
  options: RetryBudgetOptions = {},
  optionPath = '',
): NormalizedRetryBudgetOptions {
  objectOption(pathName(optionPath), options);
  const d = RETRY_BUDGET_DEFAULTS;
  const p = optionPath;
  const windowMs = options.windowMs ?? d.windowMs;
  const maxRatio = options.maxRatio ?? d.maxRatio;
  const minPerSecond = options.minPerSecond ?? d.minPerSecond;
  const bucketCount = options.bucketCount ?? d.bucketCount;
  const clock = options.clock ?? systemClock;
  positiveMs(`${p}windowMs`, windowMs);
  nonNegative(`${p}maxRatio`, maxRatio);
  nonNegative(`${p}minPerSecond`, minPerSecond);
  integerIn(`${p}bucketCount`, bucketCount, 1, MAX_BUCKETS, `an integer between 1 and ${MAX_BUCKETS}`);
  if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function') {
    throw new InvalidOptionError(`${optionPath}clock`, 'an object with a now() method', clock);
  }
  return { windowMs, maxRatio, minPerSecond, bucketCount, clock };
}

/**
 * Creates the retry budget of one dependency: an extra attempt is authorised only while
 * `extras < max(minPerSecond × windowMs / 1000, originals × maxRatio)` over the sliding window.
 *
 * The window is a ring of `bucketCount` slots of `w = windowMs / bucketCount` ms (100 ms by
 * default), so memory is fixed (three `Float64Array`s of `bucketCount` numbers) and every call is
 * O(1): it clears the slots that expired since the previous call (at most `bucketCount`, one per
 * elapsed slot amortised) and keeps running totals. The sketch in the article keeps one timestamp
 * per request — a million entries at 100 k rps — and prunes them in O(n).
 *
 * **Granularity.** Slot `k` holds the events of `[k·w, (k+1)·w)`; the window at time `now` is the
 * slot of `now` plus the `bucketCount − 1` before it. So the counts cover the last `L` ms with
 * `windowMs − w < L ≤ windowMs`: every count is at least the exact count over the last
 * `windowMs − w` ms and at most the exact count over the last `windowMs` ms (the window forgets
 * an event up to `w` ms early, never late). Consequences, proven by the property test against an
 * exact model: an authorisation implies the exact extras of the last `windowMs − w` ms, this one
 * included, are at most `ceil(max(floor, originals of the last windowMs × maxRatio))`; a refusal
 * implies the exact extras of the last `windowMs` ms have reached
 * `max(floor, originals of the last windowMs − w × maxRatio)`.
 *
 * A clock that steps backwards is clamped (time never runs backwards inside the budget); a clock
 * answering NaN, ±Infinity or a time before the epoch holds the last sane instant.
 *
 * @throws {@link InvalidOptionError} naming the invalid option.
 * @example
 * const budget = createRetryBudget({ windowMs: 10_000, maxRatio: 0.1 });
 * budget.recordOriginal();
 * if (failed && budget.tryConsume()) retry();
 * @see The source article, "retry como recurso compartilhado" (the budget and its floor);
 *   Google SRE book, "Handling Overload" (client-side retry budget).
 */
export function createRetryBudget(options?: RetryBudgetOptions): RetryBudget {
  const { windowMs, maxRatio, minPerSecond, bucketCount, clock } = normalizeRetryBudgetOptions(options);
  const floor = (minPerSecond * windowMs) / 1000;
  const originalsBySlot = new Float64Array(bucketCount);
  const extrasBySlot = new Float64Array(bucketCount);
  const refusedBySlot = new Float64Array(bucketCount);
  let originals = 0;
  let extras = 0;
  let refused = 0;
  let lastNow = 0;
  // Absolute index (since the epoch) of the newest slot, and its position in the ring.
  let head = Number.NaN;
  let headSlot = 0;

  /** Moves the window to `now` (the clock's time) and returns the ring position of the current slot. */
  const advance = (nowMs: number): number => {
    let now = nowMs;
    // Time inside the budget never runs backwards (a wall clock can step back under NTP), and a
    // clock answering NaN or ±Infinity (a bug upstream) holds the last sane instant.
    if (!(now >= lastNow && now <= Number.MAX_VALUE)) now = lastNow;
    lastNow = now;
    // Multiplying before dividing keeps slot edges exact for integer ms.
    const index = Math.floor((now * bucketCount) / windowMs);
    // The common case at any real rate: still in the same slot, nothing to expire.
    if (index === head) return headSlot;
    if (index - head < bucketCount) {
      let slot = headSlot;
      for (let k = head; k < index; k += 1) {
        slot = slot + 1 === bucketCount ? 0 : slot + 1;
        originals -= originalsBySlot[slot]!;
        extras -= extrasBySlot[slot]!;
        refused -= refusedBySlot[slot]!;
        originalsBySlot[slot] = 0;
        extrasBySlot[slot] = 0;
        refusedBySlot[slot] = 0;
      }
      headSlot = slot;
    } else {
      // First call, or idle for a whole window: everything has expired.
      originalsBySlot.fill(0);
      extrasBySlot.fill(0);
      refusedBySlot.fill(0);
      originals = 0;
      extras = 0;
      refused = 0;
      headSlot = 0;
    }
    head = index;
    return headSlot;
  };

  return {
    recordOriginal(nowMs = clock.now()) {
      const slot = advance(nowMs);
      originalsBySlot[slot]! += 1;
      originals += 1;
    },
    recordRefused() {
      const slot = advance(clock.now());
      refusedBySlot[slot]! += 1;
      refused += 1;
    },
    tryConsume() {
      const slot = advance(clock.now());
      const ceiling = Math.max(floor, originals * maxRatio);
      if (extras >= ceiling) return false;
      extrasBySlot[slot]! += 1;
      extras += 1;
      return true;
    },
    state() {
      advance(clock.now());
      return { originals, extras, ratio: originals > 0 ? extras / originals : 0, refused };
    },
  };
}
