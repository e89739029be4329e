import { nonNegative, objectOption, positive } from '../option-checks.js';
import { CALIBRATION_DEFAULTS, readTimeoutMs } from './calibrate.js';

/**
 * Little's law applied to a pool of slots (connections, concurrency permits, threads): slots occupied
 * = arrival rate × time each request holds its slot. Pure arithmetic, no I/O.
 *
 * @see The source article, second paragraph: 100 rps on a 50-connection pool tolerates at most 500 ms
 *   per request; a 30 s timeout exhausts it within seconds of a slowdown.
 */
export interface PoolProfile {
  /** Requests per second that need a slot of this pool. */
  rps: number;
  /** Number of slots in the pool (connections, permits). */
  poolSize: number;
}

/**
 * Longest time a request may hold a slot, in milliseconds, before `rps` arrivals need more than
 * `poolSize` slots: `poolSize / rps` seconds. Under full degradation every request holds its slot for
 * the whole timeout, so this is also the largest timeout the pool tolerates.
 *
 * @throws {InvalidOptionError} when `rps` or `poolSize` is not a finite number > 0.
 * @example maxHoldTimeMs({ rps: 100, poolSize: 50 }) // 500
 */
export function maxHoldTimeMs(pool: PoolProfile): number {
  checkPool(pool);
  return (pool.poolSize / pool.rps) * 1000;
}

/**
 * Largest whole-millisecond timeout with which the pool survives a fully degraded dependency (every
 * call runs to the timeout): `floor(poolSize / rps × 1000)`.
 *
 * @throws {InvalidOptionError} when `rps` or `poolSize` is not a finite number > 0.
 * @example maxTolerableTimeoutMs({ rps: 100, poolSize: 50 }) // 500
 */
export function maxTolerableTimeoutMs(pool: PoolProfile): number {
  return Math.floor(maxHoldTimeMs(pool) + 1e-9);
}

/**
 * Slots occupied in steady state when each request holds one for `holdTimeMs`: `rps × holdTimeMs / 1000`.
 *
 * @throws {InvalidOptionError} when `rps` is not > 0 or `holdTimeMs` is negative.
 * @example slotsNeeded(100, 30_000) // 3000
 */
export function slotsNeeded(rps: number, holdTimeMs: number): number {
  positive('rps', rps);
  nonNegative('holdTimeMs', holdTimeMs);
  return (rps * holdTimeMs) / 1000;
}

/**
 * How long after a dependency degrades fully (every call now runs to `timeoutMs`) the pool is exhausted,
 * in milliseconds: no slot frees before the timeout, so `poolSize` arrivals fill it in `poolSize / rps`
 * seconds. `Infinity` when `rps × timeoutMs` stays within the pool (calls time out and free slots
 * faster than new ones arrive). Assumes the pool starts empty, so it is an upper bound.
 *
 * @throws {InvalidOptionError} when an input is not a finite number > 0.
 * @example timeToExhaustMs({ rps: 100, poolSize: 50 }, 30_000) // 500
 */
export function timeToExhaustMs(pool: PoolProfile, timeoutMs: number): number {
  checkPool(pool);
  positive('timeoutMs', timeoutMs);
  if (slotsNeeded(pool.rps, timeoutMs) <= pool.poolSize) return Number.POSITIVE_INFINITY;
  return (pool.poolSize / pool.rps) * 1000;
}

/** What a timeout does to a pool under full degradation, as computed by {@link timeoutHeadroom}. */
export interface TimeoutHeadroom {
  /** The timeout examined, in milliseconds. */
  timeoutMs: number;
  /** Slots needed when every call runs to the timeout: `rps × timeoutMs / 1000`. */
  slotsNeeded: number;
  /** `slotsNeeded / poolSize`; above 1 the pool runs out. */
  utilisation: number;
  /** Largest timeout the pool tolerates minus this timeout, in milliseconds; negative when over. */
  headroomMs: number;
  /** Largest tolerable timeout divided by this timeout; below 1 the pool runs out. */
  headroomFactor: number;
  /** Time to exhaust the pool under full degradation, in ms (`Infinity` when it never runs out). */
  exhaustedAfterMs: number;
}

/**
 * Headroom of a timeout against a pool: how many slots it needs under full degradation and how far it
 * is from the largest timeout the pool tolerates.
 *
 * @throws {InvalidOptionError} when an input is not a finite number > 0.
 * @example timeoutHeadroom({ rps: 100, poolSize: 50 }, 252).headroomMs // 248
 */
export function timeoutHeadroom(pool: PoolProfile, timeoutMs: number): TimeoutHeadroom {
  checkPool(pool);
  positive('timeoutMs', timeoutMs);
  const slots = slotsNeeded(pool.rps, timeoutMs);
  const maxMs = maxTolerableTimeoutMs(pool);
  return {
    timeoutMs,
    slotsNeeded: slots,
    utilisation: slots / pool.poolSize,
    headroomMs: maxMs - timeoutMs,
    headroomFactor: maxMs / timeoutMs,
    exhaustedAfterMs: timeToExhaustMs(pool, timeoutMs),
  };
}

/** Input of {@link analysePool}. */
export interface PoolAnalysisInput extends PoolProfile {
  /** A timeout to examine (for instance the one in production today), in milliseconds. */
  timeoutMs?: number;
  /** Healthy p99 of the dependency, in milliseconds: the calibrated timeout `ceil(p99 × slack)` is examined. */
  p99Ms?: number;
  /**
   * Slack applied to `p99Ms`.
   * @default 1.4
   */
  slack?: number;
}

/** Everything `prazo pool` prints; see {@link analysePool}. */
export interface PoolAnalysis {
  rps: number;
  poolSize: number;
  /** Longest hold time per request the pool sustains, in milliseconds. */
  maxHoldTimeMs: number;
  /** Largest whole-millisecond timeout the pool survives full degradation with. */
  maxTimeoutMs: number;
  /** The given `timeoutMs` examined, when one was given. */
  timeout: TimeoutHeadroom | null;
  /** The timeout calibrated from `p99Ms` examined, when a p99 was given. */
  calibrated: (TimeoutHeadroom & { p99Ms: number; slack: number }) | null;
}

/**
 * The whole Little's-law picture for a pool: its limit, and the headroom of a given timeout and of the
 * timeout calibrated from a p99.
 *
 * @throws {InvalidOptionError} naming the invalid input.
 * @example
 * analysePool({ rps: 100, poolSize: 50, timeoutMs: 30_000, p99Ms: 180 })
 * // maxHoldTimeMs 500; timeout.slotsNeeded 3000, exhaustedAfterMs 500; calibrated.timeoutMs 252
 */
export function analysePool(input: PoolAnalysisInput): PoolAnalysis {
  checkPool(input);
  const pool = { rps: input.rps, poolSize: input.poolSize };
  const slack = input.slack ?? CALIBRATION_DEFAULTS.slack;
  let calibrated: PoolAnalysis['calibrated'] = null;
  if (input.p99Ms !== undefined) {
    const timeoutMs = readTimeoutMs(input.p99Ms, slack);
    calibrated = { ...timeoutHeadroom(pool, timeoutMs), p99Ms: input.p99Ms, slack };
  }
  return {
    ...pool,
    maxHoldTimeMs: maxHoldTimeMs(pool),
    maxTimeoutMs: maxTolerableTimeoutMs(pool),
    timeout: input.timeoutMs === undefined ? null : timeoutHeadroom(pool, input.timeoutMs),
    calibrated,
  };
}

function checkPool(pool: PoolProfile): void {
  objectOption('pool', pool);
  positive('rps', pool.rps);
  positive('poolSize', pool.poolSize);
}
