import type { DependencyEventName, DependencyEvents } from '../engine/events.js';
import { InvalidOptionError } from '../errors.js';
import type { PolicyUpdate } from '../latency/drift-check.js';
import type { HealthySelection, SliceStats } from '../latency/healthy.js';

export type { PolicyUpdate, PolicyWarning } from '../latency/drift-check.js';

/**
 * What the observability adapters need from a dependency: its name, its events, and read access to its
 * retry budget, policy and live latency window. `Dependency` (from `dependency()`) satisfies it; so does
 * any object that emits the same events, which keeps the adapters independent of the client's internals.
 */
export interface InstrumentableDependency {
  /** Low-cardinality name of the dependency: the value of the `dependency` label. */
  readonly name: string;
  /** Subscribes to one of the dependency's events (the client's events, see `engine/events.ts`). */
  on<E extends DependencyEventName>(event: E, listener: (payload: DependencyEventMap[E]) => void): unknown;
  /** Removes a listener added with {@link InstrumentableDependency.on}. */
  off<E extends DependencyEventName>(event: E, listener: (payload: DependencyEventMap[E]) => void): unknown;
  /** Retry budget over its sliding window: originals, extra attempts, and extras / originals. */
  budget(): BudgetSnapshot;
  /** The policy in force (timeouts in ms, attempts, the calibration warning, the latency it came from). */
  policy(): PolicySnapshot;
  /** The live time-sliced latency window (`createSlicedWindow`). */
  window(): LatencyWindowView;
  /** The state of each instance (`dependency.instances()`); without it no per-instance metric. */
  instances?(): readonly InstanceView[];
  /** The overload protections (`dependency.overload()`); without it no concurrency or throttle gauge. */
  overload?(): OverloadView;
}

/** The overload protections as the metrics read them (a subset of `dependency.overload()`). */
export interface OverloadView {
  concurrency: { limit: number; inFlight: number; queued: number } | null;
  throttle: { probability: number } | null;
}

/** One instance as the per-instance metrics read it (a subset of the balancer's snapshot). */
export interface InstanceView {
  origin: string;
  state: 'up' | 'down' | 'ejected' | 'probing' | 'draining';
  /** Peak-EWMA latency, ms; undefined before any answer. */
  ewmaMs: number | undefined;
  inFlight: number;
  /** Share of the recent attempts (0 … 1). */
  share: number;
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
  /** Calls refused before any attempt in the window (not originals), when the budget counts them. */
  refused?: number;
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

/** Every event a dependency emits, by name: the client's own event types (type-only import). */
export type DependencyEventMap = DependencyEvents;
export type { DependencyEventName };

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
