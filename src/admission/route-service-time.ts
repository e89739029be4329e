import type { Clock } from '../clock.js';
import { LatencyHistogram } from '../latency/histogram.js';
import { createSlicedWindow, type SlicedWindow } from '../latency/sliced-window.js';
import type { Criticality } from '../wire/criticality-header.js';
import { REFUSAL_REASONS, type RefusalReason } from './admission-decision.js';

/** The route key shared by every route beyond `maxRoutes`. */
export const OTHER_ROUTE = 'other';

const SLICES = 3;
const CRITICALITY_INDEX: Readonly<Record<Criticality, number>> = { critical: 0, default: 1, sheddable: 2 };

/**
 * One route's live service times and counts. The window is written on every finished request (O(1));
 * its percentile is read at most once per `refreshMs`, when a request arrives.
 */
export class RouteStats {
  readonly key: string;
  /** The expected service time in force, in ms; undefined while the window has too few samples. */
  expectedMs: number | undefined;
  /** Requests handed to the handler, by criticality (critical, default, sheddable). */
  readonly admitted = new Float64Array(3);
  /** Refusals, indexed `reason × 3 + criticality` (see {@link REFUSAL_REASONS}). */
  readonly refused = new Float64Array(REFUSAL_REASONS.length * 3);
  readonly #window: SlicedWindow;
  #nextRefreshAt = Number.NEGATIVE_INFINITY;

  constructor(key: string, window: SlicedWindow) {
    this.key = key;
    this.#window = window;
  }

  /** Records the service time of a request that finished, in ms. */
  record(serviceMs: number): void {
    this.#window.record(serviceMs);
  }

  countAdmitted(criticality: Criticality): void {
    this.admitted[CRITICALITY_INDEX[criticality]]!++;
  }

  countRefused(reason: RefusalReason, criticality: Criticality): void {
    this.refused[REFUSAL_REASONS.indexOf(reason) * 3 + CRITICALITY_INDEX[criticality]]!++;
  }

  /** Reads the window into {@link RouteStats.expectedMs} when the last reading is older than `refreshMs`. */
  refreshIfDue(nowMs: number, table: RouteServiceTimes): void {
    if (nowMs < this.#nextRefreshAt) return;
    this.#nextRefreshAt = nowMs + table.refreshMs;
    const merged = table.scratch;
    merged.reset();
    for (const slice of this.#window.slices()) merged.merge(slice.histogram);
    this.expectedMs = merged.count >= table.minSamples ? merged.percentile(table.percentile) : undefined;
  }
}

/**
 * The routes' service times, with a bounded number of routes: the first `maxRoutes` keys get their own
 * entry (about 80 KB each, allocated on first use), every later key shares {@link OTHER_ROUTE}.
 */
export class RouteServiceTimes {
  readonly percentile: number;
  readonly minSamples: number;
  readonly refreshMs: number;
  /** Histogram the slices are merged into at a refresh (one per table: refreshes never overlap). */
  readonly scratch = new LatencyHistogram();
  readonly #routes = new Map<string, RouteStats>();
  readonly #maxRoutes: number;
  readonly #sliceMs: number;
  readonly #clock: Clock;

  constructor(o: {
    percentile: number;
    minSamples: number;
    refreshMs: number;
    maxRoutes: number;
    windowMs: number;
    clock: Clock;
  }) {
    this.percentile = o.percentile;
    this.minSamples = o.minSamples;
    this.refreshMs = o.refreshMs;
    this.#maxRoutes = o.maxRoutes;
    this.#sliceMs = o.windowMs / SLICES;
    this.#clock = o.clock;
  }

  /** The entry of `key` (created on first use; {@link OTHER_ROUTE} once `maxRoutes` are tracked). */
  route(key: string): RouteStats {
    const found = this.#routes.get(key);
    if (found !== undefined) return found;
    const name = this.#routes.size < this.#maxRoutes ? key : OTHER_ROUTE;
    const shared = this.#routes.get(name);
    if (shared !== undefined) return shared;
    const stats = new RouteStats(
      name,
      createSlicedWindow({ slices: SLICES, sliceMs: this.#sliceMs, clock: this.#clock }),
    );
    this.#routes.set(name, stats);
    return stats;
  }

  /** Every tracked route. */
  routes(): IterableIterator<RouteStats> {
    return this.#routes.values();
  }
}
