import { type Clock, systemClock, type Timer } from '../clock.js';
import { InvalidOptionError, type PrometheusError } from '../errors.js';
import { checkFleetDrift, type FleetDriftReport } from '../fleet/fleet-drift.js';
import { type LabelMatcher, parseLabelMatchers } from '../fleet/label-matchers.js';
import {
  createPrometheusApi,
  type PrometheusApi,
  type PrometheusApiOptions,
} from '../fleet/prometheus-api.js';
import {
  assessDrift,
  type CalibrateFn,
  type DriftAssessment,
  type DriftDirection,
  type DriftEvent,
  type DriftSkippedEvent,
  type DriftSkipReason,
  planRecalibration,
  type RecalibratedEvent,
} from '../latency/drift-check.js';
import { integerIn, nonNegative, numberIn, positiveMs } from '../option-checks.js';
import { CALIBRATION_DEFAULTS, calibrateTimeout } from '../policy/calibrate.js';
import type { InstrumentableDependency, PolicyUpdate, RecalibratableDependency } from './source.js';

/** What the drift monitor does when it finds drift. */
export type DriftMode = 'alert' | 'auto';

/** Options of {@link createDriftMonitor}. */
export interface DriftMonitorOptions {
  /**
   * The dependencies to watch. Iterated again at every check, so a `Set` you add to is followed.
   * In `'auto'` mode each must have `setPolicy()`.
   */
  dependencies: Iterable<InstrumentableDependency>;
  /** Time between two checks, ms. @default 60_000 */
  intervalMs?: number;
  /**
   * `'alert'` only emits `drift`; `'auto'` also recalibrates the read timeout from the healthy window.
   * @default 'alert'
   */
  mode?: DriftMode;
  /** Factor from healthy p99 to read timeout, as in `calibrateTimeout`. @default 1.4 */
  slack?: number;
  /**
   * Relative distance from healthy p99 × slack that still counts as calibrated (0.2 = ±20 %).
   * @default 0.2
   */
  tolerance?: number;
  /** Largest factor by which one check may raise (or divide) the read timeout in `'auto'` mode. @default 1.25 */
  maxStepRatio?: number;
  /** Fewest healthy samples a check needs; below it the dependency is skipped. @default 100 */
  minSamples?: number;
  /**
   * The user deadline, ms, that attempts must fit into in `'auto'` mode: one number for all dependencies
   * or one per dependency name. Falls back to the dependency's `policy().userDeadlineMs`.
   */
  userDeadlineMs?: number | Readonly<Record<string, number>>;
  /** Time reserved per attempt when fitting attempts into the deadline, ms. @default 30 */
  overheadPerAttemptMs?: number;
  /** Source of time and timers. @default systemClock */
  clock?: Clock;
  /**
   * Also compare every process's read timeout with the fleet's healthy p99, read from Prometheus
   * (`checkFleetNow()`, and at every check once started): `fleet-drift` names each process that drifted.
   * @default none
   */
  fleet?: FleetDriftMonitorOptions;
}

/** The fleet part of a drift monitor: where Prometheus is and how to tell processes apart. */
export interface FleetDriftMonitorOptions {
  /** The Prometheus server: an API client, or the options of one (`{ url }`). */
  prometheus: PrometheusApi | PrometheusApiOptions;
  /** Extra matchers for every series read (`job="checkout"`). @default none */
  match?: string | readonly LabelMatcher[];
  /** Labels that tell processes apart. @default ['instance', 'job'] */
  by?: readonly string[];
  /** How far back the fleet's healthy p99 is read, ms. @default 600_000 */
  rangeMs?: number;
  /** One health-rule slice per step, ms. @default 30_000 */
  stepMs?: number;
}

/** Payload of the drift monitor's `fleet-drift` event: one process whose timeout drifted from the fleet's p99. */
export interface FleetDriftEvent {
  dependency: string;
  /** The labels of the process (`instance`, `job`). */
  process: Record<string, string>;
  /** The process's read timeout, ms. */
  configuredMs: number;
  /** The fleet's healthy p99, ms. */
  fleetP99Ms: number;
  recommendedMs: number;
  direction: DriftDirection;
  /** `configuredMs / fleetP99Ms`. */
  ratio: number;
  atMs: number;
}

/** Payload of the drift monitor's `fleet-error` event: Prometheus could not be read for a dependency. */
export interface FleetDriftErrorEvent {
  dependency: string;
  error: PrometheusError;
  atMs: number;
}

/** Defaults of {@link DriftMonitorOptions}. */
export const DRIFT_MONITOR_DEFAULTS = Object.freeze({
  intervalMs: 60_000,
  mode: 'alert' as DriftMode,
  slack: CALIBRATION_DEFAULTS.slack,
  tolerance: 0.2,
  maxStepRatio: 1.25,
  minSamples: 100,
  overheadPerAttemptMs: CALIBRATION_DEFAULTS.overheadPerAttemptMs,
});

/** Events of a {@link DriftMonitor}, by name. */
export interface DriftMonitorEventMap {
  /** A check found the read timeout outside the tolerance around healthy p99 × slack. */
  drift: DriftEvent;
  /** `'auto'` mode replaced a dependency's policy. */
  recalibrated: RecalibratedEvent;
  /** A check could not judge, or `'auto'` mode declined to act (with the reason). */
  skipped: DriftSkippedEvent;
  /** A fleet check found a process whose read timeout is outside the tolerance around the fleet's p99 × slack. */
  'fleet-drift': FleetDriftEvent;
  /** A fleet check could not read Prometheus for a dependency. */
  'fleet-error': FleetDriftErrorEvent;
}

/** What one check found for one dependency. */
export interface DriftCheckResult {
  dependency: string;
  assessment: DriftAssessment;
  /** The policy change made in `'auto'` mode, if any. */
  recalibrated?: RecalibratedEvent;
  /** Why nothing was judged or changed, if so. */
  skipped?: DriftSkipReason;
}

/** A running comparison of configured read timeouts with healthy p99s. */
export interface DriftMonitor {
  /** Starts checking every `intervalMs` (first check one interval from now). The timer is unref'd. Idempotent. */
  start(): void;
  /** Stops and releases the timer. Idempotent. */
  stop(): void;
  /** Checks every dependency now, emits the events, and returns what it found. */
  checkNow(): DriftCheckResult[];
  /**
   * With `fleet`: compares every process's read timeout with the fleet's healthy p99 now, emits
   * `fleet-drift` per drifted process (`fleet-error` for a dependency Prometheus could not answer for)
   * and returns what it found. A Prometheus failure never rejects it; without `fleet` it resolves to `[]`.
   */
  checkFleetNow(): Promise<FleetDriftReport[]>;
  /** Subscribes to an event; returns a function that unsubscribes. */
  on<E extends keyof DriftMonitorEventMap>(
    event: E,
    listener: (payload: DriftMonitorEventMap[E]) => void,
  ): () => void;
  /** Removes a listener. */
  off<E extends keyof DriftMonitorEventMap>(
    event: E,
    listener: (payload: DriftMonitorEventMap[E]) => void,
  ): void;
  /** True between `start()` and `stop()`. */
  readonly running: boolean;
}

type Normalized = Required<Omit<DriftMonitorOptions, 'userDeadlineMs' | 'dependencies' | 'fleet'>> &
  Pick<DriftMonitorOptions, 'userDeadlineMs' | 'dependencies' | 'fleet'>;

/**
 * Validates {@link DriftMonitorOptions} and fills in the defaults.
 * @throws {InvalidOptionError} naming the first invalid option.
 */
export function normalizeDriftMonitorOptions(options: DriftMonitorOptions): Normalized {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', 'an object with `dependencies`', options);
  const o = { ...DRIFT_MONITOR_DEFAULTS, clock: systemClock, ...definedOnly(options) } as Normalized;
  if (
    o.dependencies === undefined ||
    typeof (o.dependencies as Partial<Iterable<unknown>>)[Symbol.iterator] !== 'function'
  )
    throw new InvalidOptionError('dependencies', 'an iterable of dependencies', o.dependencies);
  numberIn('intervalMs', o.intervalMs, { min: 1, max: 2_147_483_647 }, 'a number of ms from 1 to 2147483647');
  if (o.mode !== 'alert' && o.mode !== 'auto')
    throw new InvalidOptionError('mode', "'alert' or 'auto'", o.mode);
  numberIn('slack', o.slack, { above: 1, max: 3 }, 'a number > 1 and ≤ 3 (advice: 1.3–1.5)');
  numberIn('tolerance', o.tolerance, { min: 0, below: 1 }, 'a number ≥ 0 and < 1 (0.2 = ±20 %)');
  numberIn('maxStepRatio', o.maxStepRatio, { above: 1 }, 'a finite number > 1');
  integerIn('minSamples', o.minSamples, 1, Number.POSITIVE_INFINITY, 'an integer ≥ 1');
  nonNegative('overheadPerAttemptMs', o.overheadPerAttemptMs);
  const deadline = o.userDeadlineMs;
  if (typeof deadline === 'number') positiveMs('userDeadlineMs', deadline);
  else if (typeof deadline === 'object' && deadline !== null)
    for (const [name, ms] of Object.entries(deadline)) positiveMs(`userDeadlineMs.${name}`, ms);
  else if (deadline !== undefined)
    throw new InvalidOptionError(
      'userDeadlineMs',
      'a number of ms or an object of them by dependency',
      deadline,
    );
  if (typeof o.clock?.setTimeout !== 'function') throw new InvalidOptionError('clock', 'a Clock', o.clock);
  if (
    o.fleet !== undefined &&
    (typeof o.fleet !== 'object' || o.fleet === null || o.fleet.prometheus === undefined)
  )
    throw new InvalidOptionError('fleet', 'an object with `prometheus`', o.fleet);
  // Matchers parsed once here: a typo fails at setup, not at every check.
  if (typeof o.fleet?.match === 'string')
    o.fleet = { ...o.fleet, match: parseLabelMatchers(o.fleet.match, 'fleet.match') };
  return o;
}

/**
 * Creates a drift monitor: every `intervalMs` it compares each dependency's configured read timeout
 * with the p99 of its healthy slices × `slack`, and emits `drift` when they are further apart than
 * `tolerance`.
 *
 * In `'auto'` mode it also recalibrates, with guardrails: only from healthy slices and with at least
 * `minSamples` of them; at most `maxStepRatio` per check; a window with degraded slices may lower the
 * timeout but never raise it; a raise stops where one attempt fills the user deadline; attempts and the
 * warning are recomputed by `calibrateTimeout` from the attempts originally requested. Once drift is
 * found it keeps stepping, one step per check, until the timeout reaches the recommendation (±1 %).
 * The connect timeout is kept, except that it never exceeds the new read timeout. Every change emits
 * `recalibrated`.
 *
 * @throws {InvalidOptionError} for an invalid option; in `'auto'` mode, for a dependency without
 *   `setPolicy()` or without a known user deadline.
 * @example
 * const monitor = createDriftMonitor({ dependencies: [payments], mode: 'auto', userDeadlineMs: 1500 });
 * monitor.on('drift', (e) => log.warn(e, 'timeout drifted from the healthy p99'));
 * monitor.start();
 * // on shutdown
 * monitor.stop();
 * @see The article, "Verification" (a): the configured timeout falls below the real p99 with no code
 *   change, so the comparison must run continuously.
 */
export function createDriftMonitor(options: DriftMonitorOptions): DriftMonitor {
  const o = normalizeDriftMonitorOptions(options);
  const calibrate: CalibrateFn = calibrateTimeout;
  const listeners: { [E in keyof DriftMonitorEventMap]: Set<(payload: DriftMonitorEventMap[E]) => void> } = {
    drift: new Set(),
    recalibrated: new Set(),
    skipped: new Set(),
    'fleet-drift': new Set(),
    'fleet-error': new Set(),
  };
  const emit = <E extends keyof DriftMonitorEventMap>(event: E, payload: DriftMonitorEventMap[E]): void => {
    for (const listener of [...listeners[event]]) listener(payload);
  };
  /** Attempts each dependency asked for before any calibration reduced them. */
  const requestedAttempts = new Map<string, number>();
  /** Dependencies 'auto' mode is stepping towards their recommendation. */
  const chasing = new Set<string>();

  const deadlineOf = (d: InstrumentableDependency): number | undefined => {
    const configured = o.userDeadlineMs;
    if (typeof configured === 'number') return configured;
    return configured?.[d.name] ?? d.policy().userDeadlineMs;
  };

  if (o.mode === 'auto') {
    let i = 0;
    for (const d of o.dependencies) {
      if (typeof (d as Partial<RecalibratableDependency>).setPolicy !== 'function')
        throw new InvalidOptionError(
          `dependencies[${i}].setPolicy`,
          "a function ('auto' mode replaces the policy)",
          undefined,
        );
      if (deadlineOf(d) === undefined)
        throw new InvalidOptionError(
          `userDeadlineMs.${d.name}`,
          "a number of ms ('auto' mode fits attempts into it)",
          undefined,
        );
      i++;
    }
  }

  const checkOne = (d: InstrumentableDependency, atMs: number): DriftCheckResult => {
    const policy = d.policy();
    if (!requestedAttempts.has(d.name))
      requestedAttempts.set(d.name, policy.warning?.requestedAttempts ?? policy.attempts);
    const assessment = assessDrift({
      configuredMs: policy.readMs,
      selection: d.window().healthy(),
      slack: o.slack,
      tolerance: o.tolerance,
      minSamples: o.minSamples,
    });
    const skip = (reason: DriftSkipReason, detail: string): DriftCheckResult => {
      emit('skipped', { dependency: d.name, reason, detail, atMs });
      return { dependency: d.name, assessment, skipped: reason };
    };
    if (assessment.status === 'insufficient') {
      return skip('too-few-samples', `${assessment.samples} healthy samples, fewer than ${o.minSamples}`);
    }
    if (assessment.direction) {
      emit('drift', {
        dependency: d.name,
        configuredMs: policy.readMs,
        measuredP99Ms: assessment.measuredP99Ms,
        recommendedMs: assessment.recommendedMs,
        direction: assessment.direction,
        ratio: assessment.ratio,
        atMs,
      });
      if (o.mode === 'auto') chasing.add(d.name);
    }
    if (o.mode !== 'auto' || !chasing.has(d.name)) return { dependency: d.name, assessment };
    if (Math.abs(policy.readMs - assessment.recommendedMs) <= Math.max(1, assessment.recommendedMs * 0.01)) {
      chasing.delete(d.name);
      return { dependency: d.name, assessment };
    }
    const userDeadlineMs = deadlineOf(d);
    if (userDeadlineMs === undefined)
      return skip('no-user-deadline', `no user deadline is known for ${d.name}`);
    const plan = planRecalibration({
      current: policy,
      measuredP99Ms: assessment.measuredP99Ms,
      degraded: assessment.degraded,
      slack: o.slack,
      maxStepRatio: o.maxStepRatio,
      userDeadlineMs,
      requestedAttempts: requestedAttempts.get(d.name) ?? policy.attempts,
      overheadPerAttemptMs: o.overheadPerAttemptMs,
      calibrate,
    });
    if (!plan.change) {
      if (plan.reason === 'deadline-cap') chasing.delete(d.name);
      return skip(plan.reason, plan.detail);
    }
    const previous: PolicyUpdate = {
      connectMs: policy.connectMs,
      readMs: policy.readMs,
      attempts: policy.attempts,
      warning: policy.warning,
    };
    const next: PolicyUpdate = { ...plan.next, connectMs: Math.min(policy.connectMs, plan.next.readMs) };
    if (next.readMs === previous.readMs && next.attempts === previous.attempts) {
      chasing.delete(d.name);
      return { dependency: d.name, assessment };
    }
    (d as RecalibratableDependency).setPolicy(next);
    const event: RecalibratedEvent = {
      dependency: d.name,
      previous,
      next,
      measuredP99Ms: assessment.measuredP99Ms,
      targetMs: plan.targetMs,
      bounded: plan.bounded,
      cappedByDeadline: plan.cappedByDeadline,
      atMs,
    };
    if (!plan.bounded || plan.cappedByDeadline) chasing.delete(d.name);
    emit('recalibrated', event);
    return { dependency: d.name, assessment, recalibrated: event };
  };

  const fleetApi = o.fleet === undefined ? undefined : toApi(o.fleet.prometheus);
  let fleetCheck: Promise<FleetDriftReport[]> | undefined;
  let fleetAbort: AbortController | undefined;
  const checkFleet = async (f: FleetDriftMonitorOptions, api: PrometheusApi): Promise<FleetDriftReport[]> => {
    const atMs = o.clock.now();
    fleetAbort = new AbortController();
    const reports: FleetDriftReport[] = [];
    for (const d of [...o.dependencies]) {
      try {
        const report = await checkFleetDrift(api, {
          dependency: d.name,
          ...(f.match === undefined ? {} : { match: f.match }),
          ...(f.by === undefined ? {} : { by: f.by }),
          ...(f.rangeMs === undefined ? {} : { rangeMs: f.rangeMs }),
          ...(f.stepMs === undefined ? {} : { stepMs: f.stepMs }),
          slack: o.slack,
          tolerance: o.tolerance,
          minSamples: o.minSamples,
          nowMs: atMs,
          signal: fleetAbort.signal,
        });
        reports.push(report);
        for (const p of report.drifted) {
          if (p.assessment.status === 'insufficient' || p.direction === undefined) continue;
          emit('fleet-drift', {
            dependency: d.name,
            process: p.process,
            configuredMs: p.readMs,
            fleetP99Ms: p.assessment.measuredP99Ms,
            recommendedMs: p.assessment.recommendedMs,
            direction: p.direction,
            ratio: p.assessment.ratio,
            atMs,
          });
        }
      } catch (error) {
        if (
          typeof error !== 'object' ||
          error === null ||
          !String((error as PrometheusError).code).startsWith('PROMETHEUS_')
        )
          throw error;
        emit('fleet-error', { dependency: d.name, error: error as PrometheusError, atMs });
      }
    }
    return reports;
  };

  let timer: Timer | undefined;
  const tick = (): void => {
    // Re-arm first: a throwing listener must not stop the monitoring.
    timer = o.clock.setTimeout(tick, o.intervalMs);
    timer.unref();
    if (fleetApi !== undefined && fleetCheck === undefined) void monitor.checkFleetNow().catch(() => {});
    monitor.checkNow();
  };

  const monitor: DriftMonitor = {
    start() {
      if (timer) return;
      timer = o.clock.setTimeout(tick, o.intervalMs);
      timer.unref();
    },
    stop() {
      fleetAbort?.abort();
      if (!timer) return;
      o.clock.clearTimeout(timer);
      timer = undefined;
    },
    checkFleetNow() {
      if (o.fleet === undefined || fleetApi === undefined) return Promise.resolve([]);
      if (fleetCheck === undefined) {
        fleetCheck = checkFleet(o.fleet, fleetApi).finally(() => {
          fleetCheck = undefined;
          fleetAbort = undefined;
        });
      }
      return fleetCheck;
    },
    checkNow() {
      const atMs = o.clock.now();
      return [...o.dependencies].map((d) => checkOne(d, atMs));
    },
    on(event, listener) {
      listeners[event].add(listener);
      return () => {
        listeners[event].delete(listener);
      };
    },
    off(event, listener) {
      listeners[event].delete(listener);
    },
    get running() {
      return timer !== undefined;
    },
  };
  return monitor;
}

function toApi(prometheus: PrometheusApi | PrometheusApiOptions): PrometheusApi {
  return typeof (prometheus as Partial<PrometheusApi>).queryRange === 'function'
    ? (prometheus as PrometheusApi)
    : createPrometheusApi(prometheus as PrometheusApiOptions);
}

function definedOnly<T extends object>(value: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}
