import { InvalidOptionError } from '../../errors.js';
import { integerIn, nonNegative, numberIn, positiveMs } from '../../option-checks.js';

/**
 * Requeues: an attempt that was never written (connect refused, connect timeout, aborted while
 * waiting for a pool connection) is sent again to another instance **without using one of the
 * caller's attempts** and without spending the retry budget, since the dependency never saw it.
 * A request that may have reached the server is never requeued. Bounded three ways: per call
 * (`maxPerCall`, and never more than the other instances), per dependency by a requeue budget of its
 * own (like Finagle's: a share of the calls over a sliding window, with a floor per second), and by
 * the deadline (the time left must hold the dependency's p99).
 *
 * `false` turns requeues off: a never-written attempt is then an ordinary retry.
 *
 * @see Finagle's `RequeueFilter` and its requeue budget.
 */
export interface RequeueOptions {
  /** Requeues one call may make (never more than the number of other instances). @default 3 */
  maxPerCall?: number;
  /** Largest share of requeues over calls in the window (0.2 = one requeue per five calls). @default 0.2 */
  maxRatio?: number;
  /** Requeues per second always allowed, however few calls there are. @default 10 */
  minPerSecond?: number;
  /** Length of the requeue budget's sliding window, ms. @default 10_000 */
  windowMs?: number;
}

/** Defaults of {@link RequeueOptions}. */
export const REQUEUE_DEFAULTS = Object.freeze({
  maxPerCall: 3,
  maxRatio: 0.2,
  minPerSecond: 10,
  windowMs: 10_000,
});

/** {@link RequeueOptions} after validation. */
export type NormalizedRequeueOptions = { -readonly [K in keyof typeof REQUEUE_DEFAULTS]: number };

/**
 * Validates `options` and applies {@link REQUEUE_DEFAULTS}; `false` stays `false` (no requeues).
 * @throws {InvalidOptionError} naming the first unusable option (`requeue.maxPerCall` …).
 */
export function normalizeRequeueOptions(
  options: RequeueOptions | false | undefined,
): NormalizedRequeueOptions | false {
  if (options === false) return false;
  const o = options ?? {};
  if (typeof o !== 'object' || o === null)
    throw new InvalidOptionError('requeue', 'false or an object of requeue options', o);
  const d = REQUEUE_DEFAULTS;
  const maxPerCall = integerIn('requeue.maxPerCall', o.maxPerCall ?? d.maxPerCall, 0, 100);
  const maxRatio = numberIn(
    'requeue.maxRatio',
    o.maxRatio ?? d.maxRatio,
    { min: 0, max: 1 },
    'a number from 0 to 1',
  );
  const minPerSecond = nonNegative('requeue.minPerSecond', o.minPerSecond ?? d.minPerSecond);
  const windowMs = positiveMs('requeue.windowMs', o.windowMs ?? d.windowMs);
  return { maxPerCall, maxRatio, minPerSecond, windowMs };
}

/**
 * Whether a failed attempt may be requeued, budget aside (the caller asks the requeue budget
 * last, so that a refusal for another reason spends nothing). Pure.
 *
 * @param neverWritten - the attempt stopped before its request was written (connect phase).
 * @param requeues - requeues this call already made.
 * @param instances - instances in the fleet.
 * @param remainingMs - time left before the call's deadline.
 * @param p99Ms - the dependency's p99: what the requeued attempt needs to have a chance.
 */
export function mayRequeue(
  options: NormalizedRequeueOptions | false,
  neverWritten: boolean,
  replayable: boolean,
  requeues: number,
  instances: number,
  remainingMs: number,
  p99Ms: number,
): boolean {
  return (
    options !== false &&
    neverWritten &&
    replayable &&
    requeues < options.maxPerCall &&
    requeues < instances - 1 &&
    remainingMs >= p99Ms
  );
}
