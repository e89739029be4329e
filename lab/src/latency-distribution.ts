import { lognormalMs, type Random } from './random.js';

/** Always the same delay. Unit: milliseconds. */
export interface FixedLatency {
  readonly type: 'fixed';
  /** Delay in milliseconds. */
  readonly ms: number;
}

/**
 * Log-normal delay described by two percentiles a reader can check on a histogram: the median and
 * the 99th percentile. Unit: milliseconds.
 */
export interface LognormalLatency {
  readonly type: 'lognormal';
  /** Median delay in milliseconds (> 0). */
  readonly medianMs: number;
  /** 99th percentile in milliseconds (≥ `medianMs`). */
  readonly p99Ms: number;
}

/**
 * A long-tailed mixture: each draw comes from `tail` with probability `tailShare`, otherwise from
 * `base` — the shape of "one instance pauses for GC on 5 % of requests".
 */
export interface MixtureLatency {
  readonly type: 'mixture';
  readonly base: LatencyDistribution;
  readonly tail: LatencyDistribution;
  /** Share of draws taken from `tail`, in [0, 1]. */
  readonly tailShare: number;
}

/** How long the double waits (from the request's arrival) before it answers. */
export type LatencyDistribution = FixedLatency | LognormalLatency | MixtureLatency;

/** Largest delay the double will ever schedule: 1 hour (Node timers overflow past 2^31 − 1 ms). */
export const MAX_DELAY_MS = 3_600_000;

/**
 * Draws one delay in milliseconds from `distribution`, clamped to [0, {@link MAX_DELAY_MS}].
 *
 * @example
 * sampleLatencyMs({ type: 'fixed', ms: 250 }, random); // 250
 */
export function sampleLatencyMs(distribution: LatencyDistribution, random: Random): number {
  let ms: number;
  switch (distribution.type) {
    case 'fixed':
      ms = distribution.ms;
      break;
    case 'lognormal':
      ms = lognormalMs(random, distribution.medianMs, distribution.p99Ms);
      break;
    case 'mixture':
      ms = sampleLatencyMs(random() < distribution.tailShare ? distribution.tail : distribution.base, random);
      break;
  }
  return Number.isFinite(ms) ? Math.min(MAX_DELAY_MS, Math.max(0, ms)) : MAX_DELAY_MS;
}
