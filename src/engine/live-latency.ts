import type { FleetLatencySource } from '../latency/fleet-latency-source.js';
import type { SlicedWindow } from '../latency/sliced-window.js';
import type { CalibrationWarning } from '../policy/calibrate.js';

/** Where a latency figure in force comes from: `fleet` is the fleet's figures read from Prometheus. */
export type LatencySource = 'static' | 'start' | 'live' | 'fleet';

/** Options of {@link LiveLatency}. */
export interface LiveLatencyOptions {
  /**
   * The dependency's own time-sliced window, on the dependency's clock; every attempt is recorded
   * in it at the `nowMs` of {@link LiveLatency.record}.
   */
  window: SlicedWindow;
  /** Starting p99, in ms (static from `prazo calibrate`, or the start value of `'auto'`). */
  p99Ms: number;
  /** Starting p95, in ms, if known. */
  p95Ms: number | undefined;
  /** `static` for a calibrated profile, `start` for the start value of `'auto'`. */
  source: 'static' | 'start';
  /** Healthy samples needed before the live figures replace the starting ones. */
  minSamples: number;
  /** Least time between two readings of the window, in ms. */
  refreshMs: number;
  /** Called after a refresh that changed p95 or p99. */
  onChange: () => void;
  /** The fleet's figures (`dependency({ fleetLatency })`): preferred while fresh. */
  fleet?: FleetLatencySource | undefined;
}

/**
 * The dependency's p95 and p99 in force, with their provenance. Starts from the configured values;
 * once the healthy part of the window holds `minSamples` samples, its percentiles replace them (and
 * the starting values come back if the healthy window later thins out, e.g. in a long outage).
 * With a calibrated (static) p99, the p99 in force is read from the slices healthy within the
 * health rule's factor (2) of the lower of the slices' median p99 and the calibrated one: an
 * incident — a capacity drop, a slow tail, a fleet at 90 % — does not become the p99 the pre-call
 * check and the concurrency limit go by, however few healthy slices are left beside it (the
 * calibrated p99 stays in force when none is). The p95, the hedge delay, follows the window as
 * measured. A lasting drift is the drift check's to report.
 *
 * The window is read at most once per `refreshMs` (a percentile query scans thousands of buckets:
 * cheap once a second, not per request); `record` itself is O(1).
 */
export class LiveLatency {
  /** p99 in force, in ms. */
  p99Ms: number;
  /** p95 in force, in ms (undefined until known). */
  p95Ms: number | undefined;
  p99Source: LatencySource;
  p95Source: LatencySource;
  readonly #options: LiveLatencyOptions;
  #nextRefreshAt = Number.NEGATIVE_INFINITY;

  constructor(options: LiveLatencyOptions) {
    this.#options = options;
    this.p99Ms = options.p99Ms;
    this.p95Ms = options.p95Ms;
    this.p99Source = options.source;
    this.p95Source = options.source;
  }

  /** The window this reads from. */
  get window(): SlicedWindow {
    return this.#options.window;
  }

  /**
   * Records one attempt. `latencyMs` undefined for a failure whose duration says nothing about the
   * dependency (a timeout cut by prazo).
   */
  record(latencyMs: number | undefined, error: boolean, nowMs: number): void {
    this.#options.window.record(latencyMs, error, nowMs);
    if (nowMs >= this.#nextRefreshAt) {
      if (this.#nextRefreshAt === Number.NEGATIVE_INFINITY) {
        this.#nextRefreshAt = nowMs + this.#options.refreshMs;
        return;
      }
      this.refresh(nowMs);
    }
  }

  /**
   * Reads the window if the last reading is older than `refreshMs`. The pre-call check calls it before
   * refusing a call: when every call is refused nothing is recorded, and without it a p99 measured in
   * a slow period would stay in force after its slices left the window.
   */
  refreshIfDue(nowMs: number): void {
    if (nowMs >= this.#nextRefreshAt) this.refresh(nowMs);
  }

  /** Reads the window now; returns whether p95 or p99 changed. */
  refresh(nowMs: number): boolean {
    const o = this.#options;
    this.#nextRefreshAt = nowMs + o.refreshMs;
    let p95 = o.p95Ms;
    let p99 = o.p99Ms;
    let source: LatencySource = o.source;
    // 'static' below when the anchor leaves no slice to read the p99 from.
    let p99Source: LatencySource | undefined;
    const fleet = readFleet(o.fleet, nowMs);
    if (fleet !== undefined && !fleet.stale) {
      p95 = fleet.p95Ms;
      p99 = fleet.p99Ms;
      source = 'fleet';
    } else {
      // A calibrated p99 anchors what counts as healthy for the p99 (`selectHealthy`): a window of
      // slow slices alone — an incident, with nothing healthy left beside it — does not become the
      // p99 the pre-call check and the concurrency limit go by. The p95 (the hedge delay) is read
      // from the slices as judged among themselves: a second reading only when the anchor bit.
      const judged = o.window.healthy(o.source === 'static' ? o.p99Ms : undefined);
      const { histogram } = judged.anchoredTo === undefined ? judged : o.window.healthy();
      if (histogram.count >= o.minSamples) {
        const [live95, live99] = histogram.percentiles([95, 99]);
        p95 = round(live95!);
        p99 = round(live99!);
        source = 'live';
        if (judged.histogram !== histogram) {
          if (judged.histogram.count >= o.minSamples) {
            p99 = round(judged.histogram.percentile(99));
          } else {
            p99 = o.p99Ms;
            p99Source = 'static';
          }
        }
      } else if (fleet !== undefined) {
        // Stale fleet figures still beat the starting ones: a Prometheus outage never erases them.
        p95 = fleet.p95Ms;
        p99 = fleet.p99Ms;
        source = 'fleet';
      }
    }
    p99Source ??= source;
    const changed =
      p95 !== this.p95Ms || p99 !== this.p99Ms || source !== this.p95Source || p99Source !== this.p99Source;
    this.p95Ms = p95;
    this.p99Ms = p99;
    this.p95Source = source;
    this.p99Source = p99Source;
    if (changed) o.onChange();
    return changed;
  }
}

/** The fleet's figures, if usable: a source that throws or returns nonsense is ignored (request path). */
function readFleet(source: FleetLatencySource | undefined, nowMs: number) {
  if (source === undefined) return undefined;
  try {
    const figures = source.read(nowMs);
    return figures !== undefined && figures.p99Ms > 0 && figures.p95Ms > 0 ? figures : undefined;
  } catch {
    return undefined;
  }
}

// Two decimals: below that a change is histogram noise, and every change emits a `policy` event.
function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

/** The policy in force for a dependency, as `dependency.policy()` reports it. */
export interface PolicySnapshot {
  /** Connect timeout of one attempt, in ms. */
  connectMs: number;
  /** Per-attempt timeout, in ms (an attempt also stops at the deadline, whichever comes first). */
  readMs: number;
  /** Attempts per call, the first included. */
  attempts: number;
  /** The calibration's warning (attempts reduced to fit the deadline …), or null. */
  warning: CalibrationWarning | null;
  /** p95 driving the hedge delay, in ms (undefined until known). */
  p95Ms: number | undefined;
  /** p99 driving the pre-call check, in ms. */
  p99Ms: number;
  /** Where each figure comes from: the static profile, the start value of `'auto'`, or the live window. */
  sources: { p95: LatencySource; p99: LatencySource };
}
