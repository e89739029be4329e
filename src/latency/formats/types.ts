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
  /** What makes the file's figures unsafe to calibrate on as they are; absent when nothing does. */
  warnings?: LatencyFileWarning[];
}

/**
 * A reason not to trust a latency file's percentiles as they are, with a stable `code`:
 * - `QUANTILE_ABOVE_LARGEST_BUCKET`: so many calls lie above a histogram's largest finite bucket that
 *   the p99 (or p95 …) is somewhere above that bound, and the file cannot say where;
 * - `SERIES_MERGED`: several label series with calls (routes, status classes …) were merged into one
 *   histogram without being asked to.
 */
export interface LatencyFileWarning {
  code: 'QUANTILE_ABOVE_LARGEST_BUCKET' | 'SERIES_MERGED';
  message: string;
}

/** A streaming parser: fed one line at a time (1-based line numbers), then asked for the result. */
export interface LineParser {
  line(text: string, lineNumber: number): void;
  end(): ParsedLatency;
}
