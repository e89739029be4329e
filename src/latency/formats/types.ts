import type { SliceStats } from '../healthy.js';

/**
 * Latency file formats prazo reads:
 * - `lines`: one latency in milliseconds per line;
 * - `csv`: a header naming a latency column, optionally a timestamp and a status/outcome column;
 * - `json`: prazo's histogram JSON ({@link LatencyHistogram.toJSON});
 * - `prometheus`: Prometheus text exposition of a histogram (`_bucket{le="…"}` lines).
 */
export type LatencyFormat = 'lines' | 'csv' | 'json' | 'prometheus';

/** Every {@link LatencyFormat}, in the order detection tries them. */
export const LATENCY_FORMATS: readonly LatencyFormat[] = Object.freeze([
  'json',
  'prometheus',
  'csv',
  'lines',
]);

/** What a format parser produces: the calls cut into slices. */
export interface ParsedLatency {
  /** Time slices in order; untimed data is a single slice with `startMs = endMs = 0`. */
  slices: SliceStats[];
  /** Whether the data carried timestamps (and so real time slices). */
  timed: boolean;
  /** Facts about the reading worth telling the user (a unit assumed, a cumulative scrape …). */
  notes: string[];
}

/** A streaming parser: fed one line at a time (1-based line numbers), then asked for the result. */
export interface LineParser {
  line(text: string, lineNumber: number): void;
  end(): ParsedLatency;
}
