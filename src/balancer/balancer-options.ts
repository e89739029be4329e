import { InvalidOptionError } from '../errors.js';
import { integerIn, nonNegativeMs, numberIn, positiveMs } from '../option-checks.js';
import type { InstanceTransition } from './instance-transition.js';
import { OUTCOME_RING_MAX } from './outcome-ring.js';

/**
 * Options of the instance balancer: how latency is averaged, when an instance is ejected, how it
 * comes back. Every duration is in ms.
 *
 * @see docs/instances.md for the algorithm and why each default is what it is.
 */
export interface BalancerOptions {
  /**
   * Time constant of the peak-EWMA of latency, ms: a slow answer is remembered for about this long
   * (the estimate of an instance that gets no answers halves every `decayMs × ln 2`).
   * @default 10_000
   */
  decayMs?: number;
  /**
   * Gateway failures in a row (connect failure, read timeout, 502/503/504) that eject an instance.
   * @default 5
   */
  consecutiveFailures?: number;
  /** Last outcomes per instance the failure-ratio rule looks at (2 … 32). @default 20 */
  failureWindowRequests?: number;
  /**
   * Outcomes older than this are forgotten by the failure-ratio rule (an instance called once a
   * minute does not carry failures from twenty minutes ago), ms.
   * @default 30_000
   */
  failureWindowMs?: number;
  /**
   * Share of failures (gateway failures and 500s) among the last `failureWindowRequests` outcomes
   * that ejects an instance (0 … 1], when it also fails `failureRatioOverPeers` times more than its
   * peers.
   * @default 0.3
   */
  failureRatio?: number;
  /**
   * How many times the failure ratio of the other instances, taken together, an instance's own
   * must reach to be ejected by the ratio rule (≥ 1): a dependency failing everywhere has no
   * outlier, and ejecting would only shift its load.
   * @default 2
   */
  failureRatioOverPeers?: number;
  /** Ejection time of the first ejection, ms; the n-th lasts n times as long. @default 10_000 */
  baseEjectionMs?: number;
  /**
   * Longest ejection, ms. An instance that stays in for this long after returning starts again
   * from `baseEjectionMs`.
   * @default 300_000
   */
  maxEjectionMs?: number;
  /**
   * Largest share of the instances ejected at once (0 … 1]; with two or more instances one may
   * always be ejected, whatever the share.
   * @default 0.5
   */
  maxEjectionFraction?: number;
  /**
   * Panic threshold: when fewer than this share of the instances are up, ejection is ignored and
   * load is spread over every instance that accepts connections [0 … 1].
   * @default 0.5
   */
  panicThreshold?: number;
  /** How long a returning or added instance takes to reach its full share, ms (0: no ramp). @default 10_000 */
  slowStartMs?: number;
  /** Share an instance starts its slow start with (0 … 1]. @default 0.1 */
  slowStartMinShare?: number;
  /**
   * How long an instance whose connect failed is passed over by first attempts and retries (while
   * another accepts connections), ms.
   * @default 1_000
   */
  connectDownMs?: number;
  /** Length of the window the "share of recent calls" of `snapshot()` counts over, ms. @default 10_000 */
  shareWindowMs?: number;
  /** Uniform source in [0, 1) for the two random choices and tie-breaks. @default Math.random */
  random?: () => number;
  /**
   * Called on every change of state of an instance (ejected, probing, returned, down, added,
   * removed, drained), after the balancer's state is consistent; not for the starting instances.
   * It must not call back into the balancer's picks, `finished()` or membership methods (read
   * `snapshot()` later, or queue the work). A listener that throws does not disturb the balancer:
   * the error is rethrown in a microtask (like an uncaught exception).
   * @default undefined
   */
  onTransition?: ((transition: InstanceTransition) => void) | undefined;
}

/** Defaults of {@link BalancerOptions}. */
export const BALANCER_DEFAULTS = Object.freeze({
  decayMs: 10_000,
  consecutiveFailures: 5,
  failureWindowRequests: 20,
  failureWindowMs: 30_000,
  failureRatio: 0.3,
  failureRatioOverPeers: 2,
  baseEjectionMs: 10_000,
  maxEjectionMs: 300_000,
  maxEjectionFraction: 0.5,
  panicThreshold: 0.5,
  slowStartMs: 10_000,
  slowStartMinShare: 0.1,
  connectDownMs: 1_000,
  shareWindowMs: 10_000,
});

/** {@link BalancerOptions} after validation, every default applied. */
export type NormalizedBalancerOptions = { -readonly [K in keyof typeof BALANCER_DEFAULTS]: number } & {
  random: () => number;
  onTransition: ((transition: InstanceTransition) => void) | undefined;
};

/**
 * Validates `options` and applies {@link BALANCER_DEFAULTS}. Messages name the option as
 * `balancer.<name>`.
 * @throws {InvalidOptionError} naming the first unusable option.
 */
export function normalizeBalancerOptions(options: BalancerOptions = {}): NormalizedBalancerOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('balancer', 'an object', options);
  const d = BALANCER_DEFAULTS;
  const o = options;
  const baseEjectionMs = positiveMs('balancer.baseEjectionMs', o.baseEjectionMs ?? d.baseEjectionMs);
  const maxEjectionMs = positiveMs('balancer.maxEjectionMs', o.maxEjectionMs ?? d.maxEjectionMs);
  if (maxEjectionMs < baseEjectionMs)
    throw new InvalidOptionError(
      'balancer.maxEjectionMs',
      `at least baseEjectionMs (${baseEjectionMs})`,
      maxEjectionMs,
    );
  const random = o.random ?? Math.random;
  if (typeof random !== 'function') throw new InvalidOptionError('balancer.random', 'a function', random);
  const onTransition = o.onTransition;
  if (onTransition !== undefined && typeof onTransition !== 'function')
    throw new InvalidOptionError('balancer.onTransition', 'a function', onTransition);
  return {
    decayMs: positiveMs('balancer.decayMs', o.decayMs ?? d.decayMs),
    consecutiveFailures: integerIn(
      'balancer.consecutiveFailures',
      o.consecutiveFailures ?? d.consecutiveFailures,
      1,
      1000,
    ),
    failureWindowRequests: integerIn(
      'balancer.failureWindowRequests',
      o.failureWindowRequests ?? d.failureWindowRequests,
      2,
      OUTCOME_RING_MAX,
    ),
    failureWindowMs: positiveMs('balancer.failureWindowMs', o.failureWindowMs ?? d.failureWindowMs),
    failureRatio: share('balancer.failureRatio', o.failureRatio ?? d.failureRatio),
    failureRatioOverPeers: numberIn(
      'balancer.failureRatioOverPeers',
      o.failureRatioOverPeers ?? d.failureRatioOverPeers,
      { min: 1 },
      'a finite number ≥ 1',
    ),
    baseEjectionMs,
    maxEjectionMs,
    maxEjectionFraction: share(
      'balancer.maxEjectionFraction',
      o.maxEjectionFraction ?? d.maxEjectionFraction,
    ),
    panicThreshold: numberIn(
      'balancer.panicThreshold',
      o.panicThreshold ?? d.panicThreshold,
      { min: 0, max: 1 },
      'a number from 0 to 1',
    ),
    slowStartMs: nonNegativeMs('balancer.slowStartMs', o.slowStartMs ?? d.slowStartMs),
    slowStartMinShare: share('balancer.slowStartMinShare', o.slowStartMinShare ?? d.slowStartMinShare),
    connectDownMs: nonNegativeMs('balancer.connectDownMs', o.connectDownMs ?? d.connectDownMs),
    shareWindowMs: positiveMs('balancer.shareWindowMs', o.shareWindowMs ?? d.shareWindowMs),
    random,
    onTransition,
  };
}

/** A share that may not be 0: a number > 0 and ≤ 1. */
function share(name: string, value: unknown): number {
  return numberIn(name, value, { above: 0, max: 1 }, 'a number > 0 and ≤ 1');
}
