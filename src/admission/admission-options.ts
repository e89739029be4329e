import { type Clock, systemClock } from '../clock.js';
import { InvalidOptionError } from '../errors.js';

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
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('admission', 'an object', options);
  const d = ADMISSION_DEFAULTS;
  const number = (
    name: keyof AdmissionOptions,
    fallback: number,
    ok: (v: number) => boolean,
    expected: string,
  ) => {
    const value = options[name] ?? fallback;
    if (typeof value !== 'number' || Number.isNaN(value) || !ok(value))
      throw new InvalidOptionError(name, expected, value);
    return value;
  };
  const integer = (min: number) => (v: number) => Number.isInteger(v) && v >= min;
  const serviceTimePercentile = number(
    'serviceTimePercentile',
    d.serviceTimePercentile,
    (v) => v > 0 && v <= 100,
    'a number in (0, 100]',
  );
  const minSamples = number('minSamples', d.minSamples, integer(1), 'an integer ≥ 1');
  const windowMs = number('windowMs', d.windowMs, (v) => Number.isFinite(v) && v >= 3, 'a finite number ≥ 3');
  const refreshMs = number(
    'refreshMs',
    d.refreshMs,
    (v) => Number.isFinite(v) && v >= 0,
    'a finite number ≥ 0',
  );
  const maxRoutes = number(
    'maxRoutes',
    d.maxRoutes,
    (v) => integer(1)(v) && v <= 10_000,
    'an integer from 1 to 10000',
  );
  const maxInFlight = number(
    'maxInFlight',
    d.maxInFlight,
    (v) => v === Number.POSITIVE_INFINITY || integer(1)(v),
    'an integer ≥ 1, or Infinity for no limit',
  );
  const limited = maxInFlight !== Number.POSITIVE_INFINITY;
  const maxQueue = number(
    'maxQueue',
    limited ? maxInFlight * d.queuePerSlot : 0,
    (v) => integer(0)(v) && v <= 1_000_000,
    'an integer from 0 to 1000000',
  );
  if (!limited && options.maxQueue !== undefined && options.maxQueue > 0)
    throw new InvalidOptionError(
      'maxQueue',
      '0 or unset when maxInFlight is Infinity (no limit, no queue)',
      options.maxQueue,
    );
  const share = number(
    'sheddableQueueShare',
    d.sheddableQueueShare,
    (v) => v >= 0 && v <= 1,
    'a number from 0 to 1',
  );
  const codelTargetMs = number(
    'codelTargetMs',
    d.codelTargetMs,
    (v) => Number.isFinite(v) && v > 0,
    'a finite number > 0',
  );
  const codelIntervalMs = number(
    'codelIntervalMs',
    d.codelIntervalMs,
    (v) => Number.isFinite(v) && v > codelTargetMs,
    'a finite number above codelTargetMs',
  );
  const retryAfterSeconds = number(
    'retryAfterSeconds',
    d.retryAfterSeconds,
    (v) => integer(1)(v) && v <= 3600,
    'an integer from 1 to 3600',
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
