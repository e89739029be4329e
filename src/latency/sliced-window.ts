import { type Clock, systemClock } from '../clock.js';
import { integerIn, numberIn } from '../option-checks.js';
import {
  type HealthRule,
  type HealthySelection,
  normalizeHealthRule,
  type SliceStats,
  selectHealthy,
} from './healthy.js';
import { LatencyHistogram } from './histogram.js';

/** Options of {@link createSlicedWindow}. */
export interface SlicedWindowOptions {
  /** Number of slices kept. @default 6 */
  slices?: number;
  /** Length of one slice in ms. @default 10_000 */
  sliceMs?: number;
  /** Rule deciding which slices are healthy. @default HEALTH_RULE_DEFAULTS */
  health?: Partial<HealthRule>;
  /** Source of time. @default systemClock */
  clock?: Clock;
}

/** Defaults of {@link SlicedWindowOptions}: 6 × 10 s, one minute of history. */
export const SLICED_WINDOW_DEFAULTS = Object.freeze({ slices: 6, sliceMs: 10_000 });

/**
 * A ring of time slices, each with its own latency histogram, request count and error count.
 * Memory is fixed (one histogram per slice); `record` is O(1).
 */
export interface SlicedWindow {
  /**
   * Records one finished request. `latencyMs` goes into the histogram when given (leave it out for
   * failures whose duration says nothing about the dependency, such as a timeout cut by the client).
   * `nowMs` is the time now on the window's clock, for a caller that has just read it.
   */
  record(latencyMs: number | undefined, error?: boolean, nowMs?: number): void;
  /** The slices still in the window, oldest first (the current, partial slice last). */
  slices(): SliceStats[];
  /**
   * The merged histogram of the healthy slices, and the excluded slices with the reason for each;
   * `referenceP99Ms`: a p99 known to be healthy, which slices are judged against when it is below
   * their median p99 (`selectHealthy`).
   */
  healthy(referenceP99Ms?: number): HealthySelection;
  /** Forgets everything. */
  reset(): void;
}

interface Slot {
  id: number;
  count: number;
  errors: number;
  histogram: LatencyHistogram;
}

/**
 * Creates a {@link SlicedWindow} driven by `clock`.
 * @throws {InvalidOptionError} for a non-integer or non-positive `slices` or `sliceMs`.
 * @example
 * const window = createSlicedWindow({ clock });
 * window.record(42);
 * window.healthy().histogram.percentile(99);
 */
export function createSlicedWindow(options: SlicedWindowOptions = {}): SlicedWindow {
  const slices = options.slices ?? SLICED_WINDOW_DEFAULTS.slices;
  const sliceMs = options.sliceMs ?? SLICED_WINDOW_DEFAULTS.sliceMs;
  const clock = options.clock ?? systemClock;
  integerIn('slices', slices, 1, 1000, 'an integer between 1 and 1000');
  numberIn('sliceMs', sliceMs, { min: 1 }, 'a number ≥ 1');
  const rule = normalizeHealthRule(options.health, 'health.');
  const ring: Slot[] = Array.from({ length: slices }, () => ({
    id: Number.NEGATIVE_INFINITY,
    count: 0,
    errors: 0,
    histogram: new LatencyHistogram(),
  }));

  const slotFor = (id: number): Slot => {
    const slot = ring[((id % slices) + slices) % slices]!;
    if (slot.id !== id) {
      slot.id = id;
      slot.count = 0;
      slot.errors = 0;
      slot.histogram.reset();
    }
    return slot;
  };

  const live = (): Slot[] => {
    const current = Math.floor(clock.now() / sliceMs);
    return ring.filter((s) => s.id > current - slices && s.id <= current).sort((a, b) => a.id - b.id);
  };

  const snapshot = (): SliceStats[] =>
    live().map((s) => ({
      startMs: s.id * sliceMs,
      endMs: (s.id + 1) * sliceMs,
      count: s.count,
      errors: s.errors,
      histogram: s.histogram,
    }));

  return {
    record(latencyMs, error = false, nowMs = clock.now()) {
      const slot = slotFor(Math.floor(nowMs / sliceMs));
      slot.count++;
      if (error) slot.errors++;
      if (latencyMs !== undefined) slot.histogram.record(latencyMs);
    },
    slices: snapshot,
    healthy: (referenceP99Ms) => selectHealthy(snapshot(), rule, referenceP99Ms),
    reset() {
      for (const slot of ring) {
        slot.id = Number.NEGATIVE_INFINITY;
        slot.count = 0;
        slot.errors = 0;
        slot.histogram.reset();
      }
    },
  };
}
