import type { BehaviourInput } from '../behaviour.js';
import type { NormalizedDrillOptions, PhaseLengths } from './drill-options.js';

/** The drill's phases, in order. */
export type PhaseName = 'warmup' | 'degrade' | 'burst' | 'tail' | 'recovery';

/** One phase on the drill's timeline (ms since the drill's traffic started). */
export interface Phase {
  name: PhaseName;
  label: string;
  startMs: number;
  endMs: number;
}

const ORDER: ReadonlyArray<[PhaseName, keyof PhaseLengths, string]> = [
  ['warmup', 'warmupMs', 'healthy warm-up'],
  ['degrade', 'degradeMs', 'full degradation'],
  ['burst', 'burstMs', 'error burst'],
  ['tail', 'tailMs', 'slow tail on every instance'],
  ['recovery', 'recoveryMs', 'recovery'],
];

/**
 * Shape of the error burst, as shares of its length: first the supplier, restarted at the end of the
 * degradation, answers normally while the leftovers of the degradation clear (`settle`); then the 503
 * share ramps up (`ramp`); then it holds at its height (the plateau, where amplification is measured).
 */
export const BURST_SHAPE = Object.freeze({ settle: 0.1, ramp: 0.25 });

/** Lays the phases end to end. */
export function planPhases(lengths: PhaseLengths): Phase[] {
  let at = 0;
  return ORDER.map(([name, key, label]) => {
    const phase = { name, label, startMs: at, endMs: at + lengths[key] };
    at = phase.endMs;
    return phase;
  });
}

/** The phase `atMs` falls in (the last one past the end). */
export function phaseAt(phases: readonly Phase[], atMs: number): Phase {
  return phases.find((p) => atMs < p.endMs) ?? phases[phases.length - 1]!;
}

/** Start of the burst's ramp (after the settle), in ms since the start. */
export function burstRampStartMs(burst: Phase): number {
  return burst.startMs + Math.round((burst.endMs - burst.startMs) * BURST_SHAPE.settle);
}

/** Start of the burst's plateau (after the ramp), in ms since the start. */
export function burstPlateauStartMs(burst: Phase): number {
  return burst.startMs + Math.round((burst.endMs - burst.startMs) * (BURST_SHAPE.settle + BURST_SHAPE.ramp));
}

/**
 * What supplier instance `instance` does at `progress` (0–1) through `phase`.
 * Healthy: log-normal with the article's p99 (180 ms). Degradation: answers at the naive timeout,
 * the article's load-test double. Burst: a 503 share ramping up to `burstShare`. Tail: every
 * instance is slow on `tailShare` of its requests, at random (a GC pause, a cold cache).
 */
export function supplierBehaviour(
  phase: PhaseName,
  instance: number,
  progress: number,
  options: NormalizedDrillOptions,
): BehaviourInput {
  const healthy = {
    type: 'lognormal' as const,
    medianMs: options.healthyMedianMs,
    p99Ms: options.healthyP99Ms,
  };
  switch (phase) {
    case 'degrade':
      return { answerAtMs: options.naiveTimeoutMs };
    case 'burst': {
      const ramp = Math.min(1, Math.max(0, (progress - BURST_SHAPE.settle) / BURST_SHAPE.ramp));
      // Steps of 1/8 of the target keep the number of behaviour switches small.
      const share = Math.round(ramp * 8) / 8;
      return { latency: healthy, statuses: [{ status: 503, share: options.burstShare * share }] };
    }
    case 'tail':
      // Every instance pauses now and then (a GC, a noisy neighbour): no instance is slower than
      // another, so balancing cannot route around it — the tail that hedging is for.
      return {
        latency: {
          type: 'mixture',
          base: healthy,
          tail: { type: 'fixed', ms: options.tailMs },
          tailShare: options.tailShare,
        },
      };
    default:
      return { latency: healthy };
  }
}
