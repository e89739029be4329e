import type { BehaviourInput } from '../behaviour.js';
import { Z_P99 } from '../random.js';
import type { NormalizedDrillOptions, PhaseLengths } from './drill-options.js';

/** The drill's phases, in order. */
export type PhaseName = 'warmup' | 'trigger' | 'fleet' | 'degrade' | 'burst' | 'tail' | 'recovery';

/** One phase on the drill's timeline (ms since the drill's traffic started). */
export interface Phase {
  name: PhaseName;
  label: string;
  startMs: number;
  endMs: number;
}

const ORDER: ReadonlyArray<[PhaseName, keyof PhaseLengths, string]> = [
  ['warmup', 'warmupMs', 'healthy warm-up'],
  ['tail', 'tailMs', 'slow tail on every instance'],
  ['trigger', 'triggerMs', 'trigger and recovery'],
  ['fleet', 'fleetMs', 'one instance sick, one slow'],
  ['degrade', 'degradeMs', 'full degradation'],
  ['burst', 'burstMs', 'error burst'],
  ['recovery', 'recoveryMs', 'recovery'],
];

/**
 * How many supplier instances each configuration gets: three, for the fleet phase's sick, slow and
 * healthy one (hedging, too, needs another instance).
 */
export const SUPPLIER_INSTANCES = 3;

/**
 * The supplier instances' roles in the fleet phase, by index: the sick one answers 503, the slow one
 * answers later than the others, the rest are healthy.
 */
export const FLEET_ROLES = Object.freeze({ sick: 0, slow: 1 });

/** What instance `instance` is in the fleet phase (for labels: `#0 sick`, `#1 slow`, `#2 healthy`). */
export function fleetRole(instance: number): 'sick' | 'slow' | 'healthy' {
  return instance === FLEET_ROLES.sick ? 'sick' : instance === FLEET_ROLES.slow ? 'slow' : 'healthy';
}

/** How the report names each supplier instance: `#0 sick (503)`, `#1 slow (+150 ms)`, `#2 healthy`. */
export function fleetInstanceLabels(
  options: Pick<NormalizedDrillOptions, 'fleetSlowExtraMs'>,
  instances = SUPPLIER_INSTANCES,
): string[] {
  return Array.from({ length: instances }, (_, i) => {
    const role = fleetRole(i);
    const what =
      role === 'sick' ? 'sick (503)' : role === 'slow' ? `slow (+${options.fleetSlowExtraMs} ms)` : role;
    return `#${i} ${what}`;
  });
}

/**
 * Shape of the error burst, as shares of its length: first the supplier, restarted at the end of the
 * degradation, answers normally while the leftovers of the degradation clear (`settle`); then the 503
 * share ramps up (`ramp`); then it holds at its height (the plateau, where amplification is measured).
 */
export const BURST_SHAPE = Object.freeze({ settle: 0.1, ramp: 0.25 });

/**
 * Share of the warm-up after which prazo is calibrated. The calibrated client then runs on the
 * healthy supplier for the rest of the warm-up, so that the next phase meets a client that has been
 * running — its balancer has seen every instance answer, its retry budget has originals in its window
 * — as a client in production has, instead of one created at the instant an instance falls sick.
 */
export const CALIBRATE_AT = 0.8;

/** When prazo is calibrated, in ms since the start (see {@link CALIBRATE_AT}). */
export function calibrationAtMs(warmup: Phase): number {
  return warmup.startMs + Math.round((warmup.endMs - warmup.startMs) * CALIBRATE_AT);
}

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

/**
 * Whether a user request sent at `sentAtMs` counts in the figures of the phase it was sent in: its
 * whole deadline (`deadlineMs`) must fall inside that phase. A request sent in a phase's last
 * `deadlineMs` meets the next phase's supplier before it ends (a request sent 0.5 s before the
 * degradation waits on a supplier that hangs for 30 s), so it tells about neither phase and counts
 * only in the whole run. The last phase, which nothing follows, counts to its end; so does the
 * first half of a phase shorter than twice the deadline.
 */
export function countsInPhase(phases: readonly Phase[], sentAtMs: number, deadlineMs: number): boolean {
  const phase = phaseAt(phases, sentAtMs);
  if (phase === phases[phases.length - 1]) return true;
  const settledEnd = Math.max(phase.endMs - deadlineMs, (phase.startMs + phase.endMs) / 2);
  return sentAtMs < settledEnd;
}

/** Start of the burst's ramp (after the settle), in ms since the start. */
export function burstRampStartMs(burst: Phase): number {
  return burst.startMs + Math.round((burst.endMs - burst.startMs) * BURST_SHAPE.settle);
}

/** Start of the burst's plateau (after the ramp), in ms since the start. */
export function burstPlateauStartMs(burst: Phase): number {
  return burst.startMs + Math.round((burst.endMs - burst.startMs) * (BURST_SHAPE.settle + BURST_SHAPE.ramp));
}

/** When the trigger's capacity drop starts, in ms after the start of the trigger phase. */
export const TRIGGER_START_MS = 1_000;

/** The trigger's capacity drop on the timeline: `[startMs, endMs)` in ms since the start. */
export function triggerWindow(
  trigger: Phase,
  options: Pick<NormalizedDrillOptions, 'triggerDropMs'>,
): { startMs: number; endMs: number } {
  const startMs = trigger.startMs + TRIGGER_START_MS;
  return { startMs, endMs: Math.min(trigger.endMs, startMs + options.triggerDropMs) };
}

/** How each supplier instance serves when healthy (see {@link supplierService}). */
export interface SupplierService {
  /** Workers per instance. */
  workers: number;
  /** Service time: log-normal with this median and p99, and its mean, in ms. */
  medianMs: number;
  p99Ms: number;
  meanMs: number;
  /** Requests per second one instance serves with every worker busy: workers × 1000 / mean. */
  capacityRps: number;
  /** Healthy requests per second each instance receives: the checkouts shared by the instances. */
  offeredRps: number;
  /** offered / capacity. */
  utilization: number;
}

/**
 * The supplier's size. Each instance has `supplierWorkers` workers; its service time keeps the shape of
 * the article's healthy latency (log-normal, p99 / median = `healthyP99Ms / healthyMedianMs`, 4.5) and
 * is scaled so that the healthy checkouts, shared by the instances, keep it `utilization` busy:
 * mean service time = workers × utilization / offered rps per instance (utilisation law, U = λ S / c).
 * With the defaults: 50 checkouts/s over 3 instances = 16.7/s each, 2 workers, 60 % → a mean of 72 ms
 * (median 58 ms, p99 263 ms) and a capacity of 27.8/s per instance.
 */
export function supplierService(
  options: Pick<
    NormalizedDrillOptions,
    'rps' | 'checkoutShare' | 'utilization' | 'supplierWorkers' | 'healthyMedianMs' | 'healthyP99Ms'
  >,
  instances = SUPPLIER_INSTANCES,
): SupplierService {
  const workers = options.supplierWorkers;
  const offeredRps = (options.rps * options.checkoutShare) / instances;
  const meanMs = (workers * options.utilization * 1000) / offeredRps;
  const sigma = Math.log(options.healthyP99Ms / options.healthyMedianMs) / Z_P99;
  const medianMs = meanMs / Math.exp((sigma * sigma) / 2);
  const p99Ms = medianMs * (options.healthyP99Ms / options.healthyMedianMs);
  return {
    workers,
    medianMs,
    p99Ms,
    meanMs,
    capacityRps: (workers * 1000) / meanMs,
    offeredRps,
    utilization: options.utilization,
  };
}

/**
 * What supplier instance `instance` does at `progress` (0–1) through `phase`. The latencies are service
 * times: each instance serves with its workers and queues the rest (see {@link supplierService}), so
 * what a caller waits for grows with the load it sends.
 * Healthy: log-normal of the article's shape, sized by {@link supplierService}. Trigger: the service
 * time × `triggerFactor` during the capacity drop ({@link triggerWindow}), healthy before and after.
 * Fleet: instance 0 answers 503 (to
 * `fleetSickShare` of its requests), instance 1 answers `fleetSlowExtraMs` later (median and p99 both
 * shifted), the others stay healthy. Degradation: answers at the naive timeout, the article's
 * load-test double. Burst: a 503 share ramping up to `burstShare`. Tail: on every instance
 * `tailShare` of the requests, at random, wait `tailMs` on I/O after their service, holding no worker.
 */
export function supplierBehaviour(
  phase: PhaseName,
  instance: number,
  progress: number,
  options: NormalizedDrillOptions,
): BehaviourInput {
  const service = supplierService(options);
  const lognormal = (factor: number, extraMs = 0) => ({
    type: 'lognormal' as const,
    medianMs: round(service.medianMs * factor + extraMs),
    p99Ms: round(service.p99Ms * factor + extraMs),
  });
  const healthy = lognormal(1);
  switch (phase) {
    case 'trigger': {
      const atMs = progress * options.phases.triggerMs;
      const dropped = atMs >= TRIGGER_START_MS && atMs < TRIGGER_START_MS + options.triggerDropMs;
      return { latency: dropped ? lognormal(options.triggerFactor) : healthy };
    }
    case 'fleet': {
      const role = fleetRole(instance);
      if (role === 'sick')
        return { latency: healthy, statuses: [{ status: 503, share: options.fleetSickShare }] };
      if (role === 'slow')
        // Farther away, not busier: its answers take longer on the wire, its capacity is the same —
        // with the sick one out, the two others must carry the fleet's load between them.
        return { latency: healthy, wireDelayMs: options.fleetSlowExtraMs };
      return { latency: healthy };
    }
    case 'degrade':
      return { answerAtMs: options.naiveTimeoutMs };
    case 'burst': {
      const ramp = Math.min(1, Math.max(0, (progress - BURST_SHAPE.settle) / BURST_SHAPE.ramp));
      // Steps of 1/8 of the target keep the number of behaviour switches small.
      const share = Math.round(ramp * 8) / 8;
      return { latency: healthy, statuses: [{ status: 503, share: options.burstShare * share }] };
    }
    case 'tail':
      // On every instance a few calls wait on I/O (a cold cache's backing store, a retransmitted
      // packet) while the instance serves the others as before: no instance is slower than another,
      // so balancing cannot route around it — one call slow while the service as a whole is healthy,
      // the tail that hedging is for. The wait holds no worker: a 1 s service time on two workers
      // would stall the instance itself (docs/drill.md, the slow tail).
      return { latency: healthy, ioWait: { share: options.tailShare, ms: options.tailMs } };
    default:
      return { latency: healthy };
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
