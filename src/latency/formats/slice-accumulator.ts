import { InvalidInputError } from '../../errors.js';
import type { SliceStats } from '../healthy.js';
import { LatencyHistogram } from '../histogram.js';

/** Most slices a file may produce: each holds a histogram, so memory is bounded by this. */
export const MAX_SLICES = 2000;

/**
 * Collects samples into time slices of `sliceMs` aligned on multiples of `sliceMs` (whole minutes for
 * the 60 s default on epoch timestamps), in any arrival order. Untimed samples all go into one slice.
 */
export class SliceAccumulator {
  readonly #sliceMs: number;
  readonly #source: string;
  readonly #slices = new Map<number, SliceStats>();

  constructor(sliceMs: number, source: string) {
    this.#sliceMs = sliceMs;
    this.#source = source;
  }

  /** Adds one call. `timestampMs` undefined puts it in the single untimed slice. */
  add(latencyMs: number, timestampMs: number | undefined, error: boolean, line: number): void {
    const key = timestampMs === undefined ? 0 : Math.floor(timestampMs / this.#sliceMs);
    let slice = this.#slices.get(key);
    if (slice === undefined) {
      if (this.#slices.size >= MAX_SLICES) {
        throw new InvalidInputError(
          `more than ${MAX_SLICES} slices of ${this.#sliceMs} ms: use a longer slice (--slice) or a shorter file`,
          { source: this.#source, line },
        );
      }
      const startMs = timestampMs === undefined ? 0 : key * this.#sliceMs;
      slice = {
        startMs,
        endMs: timestampMs === undefined ? 0 : startMs + this.#sliceMs,
        count: 0,
        errors: 0,
        histogram: new LatencyHistogram(),
      };
      this.#slices.set(key, slice);
    }
    slice.count += 1;
    if (error) slice.errors += 1;
    slice.histogram.record(latencyMs);
  }

  /** The slices in time order. */
  slices(): SliceStats[] {
    return [...this.#slices.values()].sort((a, b) => a.startMs - b.startMs);
  }
}
