import { InvalidOptionError } from '../errors.js';
import type { HealthySelection, SliceStats } from '../latency/healthy.js';

/**
 * What the observability adapters need from a dependency: its name, its events, and read access to its
 * retry budget, policy and live latency window. `Dependency` (from `dependency()`) satisfies it; so does
 * any object that emits the same events, which keeps the adapters independent of the client's internals.
 */
export interface InstrumentableDependency {
  /** Low-cardinality name of the dependency: the value of the `dependency` label. */
  readonly name: string;
  /** Subscribes to one of the dependency's events. */
  on<E extends DependencyEventName>(event: E, listener: (payload: DependencyEventMap[E]) => void): unknown;
  /** Removes a listener added with {@link InstrumentableDependency.on}. */
  off<E extends DependencyEventName>(event: E, listener: (payload: DependencyEventMap[E]) => void): unknown;
  /** Retry budget over its sliding window: originals, extra attempts, and extras / originals. */
  budget(): BudgetSnapshot;
  /** The policy in force (timeouts in ms, attempts, the calibration warning, the latency it came from). */
  policy(): PolicySnapshot;
  /** The live time-sliced latency window (`createSlicedWindow`). */
  window(): LatencyWindowView;
}

/** A dependency whose policy the drift monitor may replace in `'auto'` mode. */
export interface RecalibratableDependency extends InstrumentableDependency {
  /** Swaps in a new calibrated policy; requests that start afterwards use it. */
  setPolicy(policy: PolicyUpdate): unknown;
}

/** The retry budget's state over its window. */
export interface BudgetSnapshot {
  /** Original (first) attempts counted in the window. */
  originals: number;
  /** Extra attempts (retries and hedges) spent in the window. */
  extras: number;
  /** `extras / originals` (0 with no originals). */
  ratio: number;
}

/** The calibrated part of a policy, as produced by `calibrateTimeout`. Durations in ms. */
export interface PolicyUpdate {
  connectMs: number;
  readMs: number;
  attempts: number;
  warning: PolicyWarning | null;
}

/** A calibration warning (`ATTEMPTS_REDUCED`, `DEADLINE_BELOW_ONE_ATTEMPT`). */
export interface PolicyWarning {
  code: string;
  message: string;
  /** Attempts the caller asked for, when the calibration recorded it. */
  requestedAttempts?: number | undefined;
}

/** The policy a dependency reports. Durations in ms. */
export interface PolicySnapshot extends PolicyUpdate {
  /** Latency p95 the hedge timer uses. */
  p95Ms?: number | undefined;
  /** Latency p99 the policy was calibrated from. */
  p99Ms?: number | undefined;
  /** The user deadline the attempts were fitted into, when the dependency knows it. */
  userDeadlineMs?: number | undefined;
  /** Where each figure came from (configuration, live window …). */
  sources?: unknown;
}

/** Read access to a time-sliced latency window. */
export interface LatencyWindowView {
  /** The merged histogram of the healthy slices and the excluded slices with their reason. */
  healthy(): HealthySelection;
  /** The slices still in the window, oldest first. */
  slices(): SliceStats[];
}

/** Kind of an attempt: the first one, a retry after a failure, or a hedge sent while the first waits. */
export type AttemptKind = 'original' | 'retry' | 'hedge';
/** Phase whose timeout fired. */
export type TimeoutPhase = 'connect' | 'read';
/** What the retry budget was asked to pay for. */
export type BudgetPurpose = 'retry' | 'hedge';

/** Payload of `'request-start'`: a logical request begins. */
export interface RequestStartEvent {
  dependency: string;
  requestId: number | string;
  method: string;
  idempotent: boolean;
  /** Time left on the deadline when the request started, ms. */
  remainingMs: number;
}

/** Payload of `'attempt-start'`. */
export interface AttemptStartEvent {
  dependency: string;
  requestId: number | string;
  /** 1-based attempt number within the request. */
  attempt: number;
  kind: AttemptKind;
  /** Origin of the instance tried. Never used as a metric label. */
  instance: string;
}

/** Payload of `'attempt-end'`. */
export interface AttemptEndEvent {
  dependency: string;
  requestId: number | string;
  attempt: number;
  kind: AttemptKind;
  instance: string;
  /** Duration of the attempt, ms. */
  durationMs: number;
  outcome: 'success' | 'failure' | 'aborted';
  status?: number;
  phase?: 'connect' | 'read' | 'response';
  /** Set when the attempt ended because a prazo timeout fired. */
  timeout?: TimeoutPhase;
  errorCode?: string;
  /** True for the attempt whose answer was returned. */
  won: boolean;
}

/** Payload of `'retry'`. */
export interface RetryEvent {
  dependency: string;
  requestId: number | string;
  attempt: number;
  delayMs: number;
  reason: string;
  anotherInstance: boolean;
}

/** Payload of `'hedge'`: a hedged copy is sent. */
export interface HedgeEvent {
  dependency: string;
  requestId: number | string;
  /** How long the first attempt had been waiting, ms. */
  afterMs: number;
}

/** Payload of `'budget-exhausted'`: an extra attempt was refused by the retry budget. */
export interface BudgetExhaustedEvent {
  dependency: string;
  requestId: number | string;
  purpose: BudgetPurpose;
}

/** Payload of `'fast-fail'`: the remaining deadline could not hold the p99, the dependency was not called. */
export interface FastFailEvent {
  dependency: string;
  requestId: number | string;
  remainingMs: number;
  requiredMs: number;
}

/** Payload of `'request-end'`. */
export interface RequestEndEvent {
  dependency: string;
  requestId: number | string;
  outcome: 'success' | 'failure';
  status?: number;
  /** prazo error code of a failure. */
  code?: string;
  /** Duration of the logical request (all attempts), ms. */
  durationMs: number;
  attempts: number;
}

/** Payload of `'policy'`: the dependency's policy changed. */
export interface PolicyEvent {
  dependency: string;
  policy: PolicySnapshot;
}

/** Every event a dependency emits, by name. */
export interface DependencyEventMap {
  'request-start': RequestStartEvent;
  'attempt-start': AttemptStartEvent;
  'attempt-end': AttemptEndEvent;
  retry: RetryEvent;
  hedge: HedgeEvent;
  'budget-exhausted': BudgetExhaustedEvent;
  'fast-fail': FastFailEvent;
  'request-end': RequestEndEvent;
  policy: PolicyEvent;
}

/** Name of a dependency event. */
export type DependencyEventName = keyof DependencyEventMap;

/**
 * What `instrument()` accepts: one dependency, several, or a client that lists its dependencies with
 * `dependencies()`.
 */
export type InstrumentTarget =
  | InstrumentableDependency
  | Iterable<InstrumentableDependency>
  | { dependencies(): Iterable<InstrumentableDependency> };

/**
 * Flattens an {@link InstrumentTarget} into its dependencies.
 * @throws {InvalidOptionError} when `target` is none of the accepted shapes or a dependency has no name.
 */
export function toDependencies(target: InstrumentTarget, option = 'target'): InstrumentableDependency[] {
  if (isDependency(target)) return [target];
  let list: unknown[] | undefined;
  if (typeof target === 'object' && target !== null) {
    if ('dependencies' in target && typeof target.dependencies === 'function')
      list = [...target.dependencies()];
    else if (Symbol.iterator in target) list = [...(target as Iterable<unknown>)];
  }
  if (list === undefined) {
    throw new InvalidOptionError(option, 'a dependency, an iterable of dependencies or a client', target);
  }
  list.forEach((item, i) => {
    if (!isDependency(item)) throw new InvalidOptionError(`${option}[${i}]`, 'a dependency', item);
  });
  return list as InstrumentableDependency[];
}

function isDependency(value: unknown): value is InstrumentableDependency {
  if (typeof value !== 'object' || value === null) return false;
  const d = value as Partial<Record<keyof InstrumentableDependency, unknown>>;
  return (
    typeof d.name === 'string' &&
    d.name.length > 0 &&
    typeof d.on === 'function' &&
    typeof d.off === 'function' &&
    typeof d.budget === 'function' &&
    typeof d.policy === 'function' &&
    typeof d.window === 'function'
  );
}
