import { type Clock, systemClock } from '../clock.js';
import { InvalidOptionError } from '../errors.js';
import { integerIn, nonNegative, numberIn, objectOption, positive } from '../option-checks.js';

/** Options of {@link createAdmission}. Every limit that can refuse healthy traffic is off by default. */
export interface AdmissionOptions {
  /**
   * Percentile (0–100) of a route's recent service times taken as its expected service time: a request
   * whose remaining deadline is below it is refused on arrival (504). The median refuses only work
   * more likely to miss its deadline than to meet it; raise it to refuse earlier.
   * @default 50
   */
  serviceTimePercentile?: number;
  /** Samples a route needs in its window before its expected service time is used; until then every request with time left is admitted. @default 20 */
  minSamples?: number;
  /** How far back a route's service times count, in ms (three slices of a third each). @default 30_000 */
  windowMs?: number;
  /** Least time between two readings of a route's percentile, in ms. @default 1_000 */
  refreshMs?: number;
  /** Routes tracked separately; further route keys share one entry, `other`. @default 100 */
  maxRoutes?: number;
  /**
   * Requests handed to their handlers at once; beyond it they wait in the CoDel queue. `Infinity`
   * turns the limit and the queue off.
   * @default Infinity
   */
  maxInFlight?: number;
  /** Longest the queue may grow. @default 4 × maxInFlight (0 without a limit) */
  maxQueue?: number;
  /** Share of `maxQueue` from which `sheddable` requests are refused instead of queued. @default 0.5 */
  sheddableQueueShare?: number;
  /** CoDel target: the sojourn time a standing queue may keep, in ms. @default 5 */
  codelTargetMs?: number;
  /** CoDel interval: how long the queue must stay above the target to count as overloaded, in ms. @default 100 */
  codelIntervalMs?: number;
  /** `Retry-After` sent with a 503, in whole seconds (≥ 1). @default 1 */
  retryAfterSeconds?: number;
  /** @default systemClock */
  clock?: Clock;
}

/** Defaults of {@link AdmissionOptions}. */
export const ADMISSION_DEFAULTS = Object.freeze({
  serviceTimePercentile: 50,
  minSamples: 20,
  windowMs: 30_000,
  refreshMs: 1_000,
  maxRoutes: 100,
  maxInFlight: Number.POSITIVE_INFINITY,
  queuePerSlot: 4,
  sheddableQueueShare: 0.5,
  codelTargetMs: 5,
  codelIntervalMs: 100,
  retryAfterSeconds: 1,
});

/** {@link AdmissionOptions} validated, with defaults applied. */
export interface NormalizedAdmissionOptions {
  serviceTimePercentile: number;
  minSamples: number;
  windowMs: number;
  refreshMs: number;
  maxRoutes: number;
  maxInFlight: number;
  maxQueue: number;
  /** Queue length from which `sheddable` requests are refused. */
  sheddableQueue: number;
  codelTargetMs: number;
  codelIntervalMs: number;
  retryAfterSeconds: number;
  clock: Clock;
}

/**
 * Validates {@link AdmissionOptions} once, at setup.
 * @throws {@link InvalidOptionError} naming the option and the expected value.
 */
export function normalizeAdmissionOptions(options: AdmissionOptions = {}): NormalizedAdmissionOptions {
  objectOption('admission', options);
  const d = ADMISSION_DEFAULTS;
  const serviceTimePercentile = numberIn(
    'serviceTimePercentile',
    options.serviceTimePercentile ?? d.serviceTimePercentile,
    { above: 0, max: 100 },
    'a number in (0, 100]',
  );
  const minSamples = integerIn(
    'minSamples',
    options.minSamples ?? d.minSamples,
    1,
    Infinity,
    'an integer ≥ 1',
  );
  const windowMs = numberIn('windowMs', options.windowMs ?? d.windowMs, { min: 3 }, 'a finite number ≥ 3');
  const refreshMs = nonNegative('refreshMs', options.refreshMs ?? d.refreshMs);
  const maxRoutes = integerIn('maxRoutes', options.maxRoutes ?? d.maxRoutes, 1, 10_000);
  const inFlight = options.maxInFlight ?? d.maxInFlight;
  const maxInFlight =
    inFlight === Number.POSITIVE_INFINITY
      ? inFlight
      : integerIn('maxInFlight', inFlight, 1, Infinity, 'an integer ≥ 1, or Infinity for no limit');
  const limited = maxInFlight !== Number.POSITIVE_INFINITY;
  const maxQueue = integerIn(
    'maxQueue',
    options.maxQueue ?? (limited ? maxInFlight * d.queuePerSlot : 0),
    0,
    1_000_000,
  );
  if (!limited && options.maxQueue !== undefined && options.maxQueue > 0)
    throw new InvalidOptionError(
      'maxQueue',
      '0 or unset when maxInFlight is Infinity (no limit, no queue)',
      options.maxQueue,
    );
  const share = numberIn(
    'sheddableQueueShare',
    options.sheddableQueueShare ?? d.sheddableQueueShare,
    { min: 0, max: 1 },
    'a number from 0 to 1',
  );
  const codelTargetMs = positive('codelTargetMs', options.codelTargetMs ?? d.codelTargetMs);
  const codelIntervalMs = numberIn(
    'codelIntervalMs',
    options.codelIntervalMs ?? d.codelIntervalMs,
    { above: codelTargetMs },
    'a finite number above codelTargetMs',
  );
  const retryAfterSeconds = integerIn(
    'retryAfterSeconds',
    options.retryAfterSeconds ?? d.retryAfterSeconds,
    1,
    3600,
  );
  const clock = options.clock ?? systemClock;
  if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function')
    throw new InvalidOptionError('clock', 'a Clock ({ now, setTimeout, clearTimeout })', clock);
  return {
    serviceTimePercentile,
    minSamples,
    windowMs,
    refreshMs,
    maxRoutes,
    maxInFlight,
    maxQueue,
    sheddableQueue: Math.ceil(maxQueue * share),
    codelTargetMs,
    codelIntervalMs,
    retryAfterSeconds,
    clock,
  };
}
