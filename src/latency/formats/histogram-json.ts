import { InvalidInputError } from '../../errors.js';
import { LatencyHistogram } from '../histogram.js';
import type { ParsedLatency } from './types.js';

/**
 * Reads prazo's histogram JSON (what {@link LatencyHistogram.toJSON} writes) into one untimed slice.
 * A histogram carries no timestamps or errors, so the healthy-window check cannot apply to it.
 *
 * @param text - the whole file (a histogram JSON is small and of fixed size).
 * @throws {InvalidInputError} naming the file when the text is not JSON or not a prazo histogram.
 */
export function parseHistogramJson(text: string, source: string): ParsedLatency {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`not valid JSON (${(error as Error).message})`, { source });
  }
  const histogram = LatencyHistogram.fromJSON(json, source);
  return {
    slices: [{ startMs: 0, endMs: 0, count: histogram.count, errors: 0, histogram }],
    timed: false,
    notes: ['a histogram file has no time slices: no healthy-window check'],
  };
}
