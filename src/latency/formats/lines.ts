import { InvalidInputError } from '../../errors.js';
import { SliceAccumulator } from './slice-accumulator.js';
import type { LineParser, ParsedLatency } from './types.js';
import { parseLatencyMs } from './values.js';

/**
 * Parser for the `lines` format: one latency in milliseconds per line. Blank lines and lines starting
 * with `#` are skipped. The data is untimed, so it forms one slice and every call counts as a success.
 *
 * @param source - file name used in error messages.
 * @throws {InvalidInputError} (from `line`) naming the file, the line and the value that is not a
 *   latency; (from `end`) when the file held no latency at all.
 */
export function createLinesParser(source: string): LineParser {
  const slices = new SliceAccumulator(1, source);
  let samples = 0;
  return {
    line(text, lineNumber) {
      const trimmed = text.trim();
      if (trimmed === '' || trimmed.startsWith('#')) return;
      slices.add(
        parseLatencyMs(stripBom(trimmed), { source, line: lineNumber }),
        undefined,
        false,
        lineNumber,
      );
      samples += 1;
    },
    end(): ParsedLatency {
      if (samples === 0) throw new InvalidInputError('no latency values found', { source });
      return { slices: slices.slices(), timed: false, notes: [] };
    },
  };
}

/** Drops a UTF-8 byte-order mark that editors put at the start of a file. */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
