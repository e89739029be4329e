import { InvalidOptionError } from 'prazo';
import {
  type AmplificationOptions,
  normalizeAmplificationOptions,
  simulateAmplification,
} from './amplification.js';

/** The utilisations the sweep runs at: 30 % to 90 % of the dependency's capacity, by 10. */
export const SWEEP_UTILIZATIONS: readonly number[] = Object.freeze([0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]);

/**
 * The trigger's error share the sweep uses when none is given: a trigger that only takes capacity
 * away gives a retry nothing to win (every failure is a timeout in a queue); with a share of 500s, a
 * retry can win where the dependency has capacity to spare — and the sweep shows where that stops.
 */
export const SWEEP_TRIGGER_ERROR_RATE = 0.2;

/** Naive's figures at one utilisation, with its retries and without them. */
export interface UtilizationPoint {
  /** Offered load ÷ the dependency's capacity (before the trigger). */
  utilization: number;
  rps: number;
  /** Naive as configured (`attempts` attempts, blind): share of user requests that succeeded, and load. */
  withRetries: { success: number; load: number; recovered: boolean };
  /** The same client with one attempt. */
  withoutRetries: { success: number; load: number; recovered: boolean };
  /** withRetries.success − withoutRetries.success: what the retries added (negative: removed). */
  gain: number;
}

/** The outcome of {@link sweepUtilization}. */
export interface UtilizationSweep {
  scenario: 'utilization-sweep';
  options: AmplificationOptions;
  capacityRps: number;
  points: UtilizationPoint[];
  /**
   * The lowest utilisation of the sweep at which naive's retries removed success instead of adding
   * it (`gain` < 0); null when they never did.
   */
  retriesRemoveSuccessFrom: number | null;
  /** The highest utilisation below that one at which they still added some (`gain` > 0), or null. */
  retriesLastAddSuccessAt: number | null;
  events: number;
}

/**
 * Runs the amplification scenario's dependency (workers, log-normal service, FIFO queue, trigger) at
 * each utilisation of {@link SWEEP_UTILIZATIONS}, the naive client with its blind retries and without
 * them, on the same seed: where the dependency has capacity to spare, a retry turns a failure into a
 * success; past some utilisation, the retries' extra load outlives the trigger and removes more success
 * than they add. `rps` is set by the sweep; every other option is the scenario's.
 *
 * @throws {InvalidOptionError} naming the first invalid option (`rps` is not accepted).
 */
export function sweepUtilization(
  input: Partial<AmplificationOptions> = {},
  onProgress?: (label: string, fraction: number) => void,
): UtilizationSweep {
  if (input.rps !== undefined)
    throw new InvalidOptionError('rps', 'nothing: the sweep sets the offered load itself', input.rps);
  const base = normalizeAmplificationOptions({
    triggerErrorRate: SWEEP_TRIGGER_ERROR_RATE,
    ...input,
    strategies: ['naive'],
  });
  const capacityRps = (base.servers * 1000) / base.serviceMeanMs;
  let events = 0;
  const points = SWEEP_UTILIZATIONS.map((utilization, i) => {
    onProgress?.(`utilisation ${Math.round(utilization * 100)} %`, i / SWEEP_UTILIZATIONS.length);
    const rps = utilization * capacityRps;
    const run = (attempts: number) => {
      const result = simulateAmplification({ ...base, rps, attempts });
      events += result.events;
      const naive = result.strategies[0]!;
      return {
        success: naive.userSuccess.overall,
        load: naive.load.overall,
        recovered: naive.recovery.recovered,
      };
    };
    const withRetries = run(base.attempts);
    const withoutRetries = run(1);
    return {
      utilization,
      rps,
      withRetries,
      withoutRetries,
      gain: withRetries.success - withoutRetries.success,
    };
  });
  const removing = points.find((p) => p.gain < 0);
  const adding = points.filter(
    (p) => p.gain > 0 && (removing === undefined || p.utilization < removing.utilization),
  );
  return {
    scenario: 'utilization-sweep',
    options: base,
    capacityRps,
    points,
    retriesRemoveSuccessFrom: removing?.utilization ?? null,
    retriesLastAddSuccessAt: adding.length > 0 ? adding[adding.length - 1]!.utilization : null,
    events,
  };
}

const pct = (v: number, digits = 1) => `${(v * 100).toFixed(digits)} %`;

/** The sweep as a plain-text table, with the utilisation where the retries turn. */
export function formatUtilizationSweep(sweep: UtilizationSweep): string {
  const o = sweep.options;
  const rows = [
    [
      'utilisation',
      'rps',
      `success, ${o.attempts} attempts`,
      'success, 1 attempt',
      'retries add',
      'load',
      'recovered',
    ],
    ...sweep.points.map((p) => [
      pct(p.utilization, 0),
      String(Math.round(p.rps)),
      pct(p.withRetries.success),
      pct(p.withoutRetries.success),
      `${p.gain >= 0 ? '+' : ''}${(p.gain * 100).toFixed(1)} pt`,
      `${p.withRetries.load.toFixed(2)}×`,
      `${p.withRetries.recovered ? 'yes' : 'no'} / ${p.withoutRetries.recovered ? 'yes' : 'no'}`,
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const lines = rows.map((r) =>
    r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '),
  );
  const verdict =
    sweep.retriesRemoveSuccessFrom === null
      ? 'Naive’s retries never removed success over this sweep.'
      : `Naive’s retries stop adding success above ${sweep.retriesLastAddSuccessAt === null ? 'every utilisation of the sweep' : pct(sweep.retriesLastAddSuccessAt, 0)} utilisation and remove it from ${pct(sweep.retriesRemoveSuccessFrom, 0)}: their extra load outlives the trigger.`;
  return [
    `Utilisation sweep: ${o.servers} workers × ${o.serviceMeanMs} ms mean service (capacity ${Math.round(sweep.capacityRps)} rps), trigger at ${o.triggerStartMs / 1000} s for ${o.triggerDurationMs / 1000} s (${pct(o.triggerCapacityFactor, 0)} of the workers left, ${pct(o.triggerErrorRate, 0)} of answers 500), naive timeout ${o.fixedTimeoutMs} ms, user deadline ${o.userDeadlineMs} ms.`,
    '',
    ...lines,
    '',
    'success = user requests answered within the deadline, whole run; load = attempts ÷ user requests; recovered = with / without retries.',
    verdict,
    '',
  ].join('\n');
}
