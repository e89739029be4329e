import { InvalidInputError } from '../../errors.js';
import { stripBom } from './lines.js';
import { SliceAccumulator } from './slice-accumulator.js';
import type { LineParser, ParsedLatency } from './types.js';
import { isErrorStatus, parseLatencyMs, parseTimestampMs, quote } from './values.js';

/** Options of {@link createCsvParser}. */
export interface CsvParserOptions {
  /** Length of a time slice, in milliseconds (timestamped data only). */
  sliceMs: number;
  /**
   * Name of the latency column, when the header does not use one of the recognised names. Its values
   * are milliseconds.
   */
  latencyColumn?: string;
}

/** Header names recognised as a latency in milliseconds (compared without case, `_`, `-` or spaces). */
export const LATENCY_MS_COLUMNS: readonly string[] = Object.freeze([
  'latency_ms',
  'latency',
  'duration_ms',
  'duration',
  'elapsed_ms',
  'elapsed',
  'response_time_ms',
  'response_time',
  'time_ms',
  'took_ms',
  'ms',
]);
/** Header names recognised as a latency in seconds. */
export const LATENCY_SECONDS_COLUMNS: readonly string[] = Object.freeze([
  'latency_s',
  'latency_seconds',
  'duration_s',
  'duration_seconds',
  'elapsed_s',
  'elapsed_seconds',
  'response_time_s',
  'response_time_seconds',
]);
/** Header names recognised as the call's timestamp (epoch ms or ISO 8601). */
export const TIMESTAMP_COLUMNS: readonly string[] = Object.freeze([
  'timestamp',
  'timestamp_ms',
  'time',
  'ts',
  'date',
  'datetime',
  'epoch_ms',
  'start',
  'start_time',
  'started_at',
]);
/** Header names recognised as the call's status or outcome. */
export const STATUS_COLUMNS: readonly string[] = Object.freeze([
  'status',
  'status_code',
  'http_status',
  'code',
  'outcome',
  'result',
]);

const normalise = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]/g, '');

interface Columns {
  latency: number;
  latencyScale: number;
  timestamp: number | undefined;
  status: number | undefined;
  width: number;
}

/**
 * Parser for the `csv` format. The first non-blank line is a header; the delimiter (`,`, `;` or tab) is
 * taken from it. Columns are found by name (see {@link LATENCY_MS_COLUMNS}, {@link TIMESTAMP_COLUMNS},
 * {@link STATUS_COLUMNS}); other columns are ignored. With a timestamp column, calls are cut into slices
 * of `sliceMs`; a status of 500 or more, or a word like `error` / `timeout`, counts the call as an error.
 * Fields may be double-quoted (`""` escapes a quote); a quoted field cannot span lines.
 *
 * @throws {InvalidInputError} naming the file, the line and the value.
 */
export function createCsvParser(source: string, options: CsvParserOptions): LineParser {
  const slices = new SliceAccumulator(options.sliceMs, source);
  let columns: Columns | undefined;
  let delimiter = ',';
  let samples = 0;

  const header = (text: string, lineNumber: number): Columns => {
    const clean = stripBom(text);
    delimiter = clean.includes(',') ? ',' : clean.includes('\t') ? '\t' : clean.includes(';') ? ';' : ',';
    const names = splitCsvLine(clean, delimiter, { source, line: lineNumber }).map((n) => n.trim());
    const find = (candidates: readonly string[]): number | undefined => {
      const wanted = new Set(candidates.map(normalise));
      const index = names.findIndex((n) => wanted.has(normalise(n)));
      return index === -1 ? undefined : index;
    };
    let latency: number | undefined;
    let latencyScale = 1;
    if (options.latencyColumn !== undefined) {
      latency = find([options.latencyColumn]);
      if (latency === undefined) {
        throw new InvalidInputError(
          `no column named ${quote(options.latencyColumn)} in the header (${names.join(', ')})`,
          { source, line: lineNumber },
        );
      }
    } else {
      latency = find(LATENCY_MS_COLUMNS);
      if (latency === undefined) {
        latency = find(LATENCY_SECONDS_COLUMNS);
        latencyScale = 1000;
      }
      if (latency === undefined) {
        throw new InvalidInputError(
          `the header (${names.map((n) => quote(n)).join(', ')}) names no latency column; expected one of ` +
            `${[...LATENCY_MS_COLUMNS, ...LATENCY_SECONDS_COLUMNS].join(', ')} (or name it with --column)`,
          { source, line: lineNumber },
        );
      }
    }
    return {
      latency,
      latencyScale,
      timestamp: find(TIMESTAMP_COLUMNS),
      status: find(STATUS_COLUMNS),
      width: names.length,
    };
  };

  return {
    line(text, lineNumber) {
      if (text.trim() === '') return;
      if (columns === undefined) {
        columns = header(text, lineNumber);
        return;
      }
      const where = { source, line: lineNumber };
      const fields = splitCsvLine(text, delimiter, where);
      const cell = (index: number, what: string): string => {
        const value = fields[index];
        if (value === undefined) {
          throw new InvalidInputError(
            `row has ${fields.length} field${fields.length === 1 ? '' : 's'}, the ${what} column is number ${index + 1}`,
            where,
          );
        }
        return value;
      };
      const latencyMs = parseLatencyMs(cell(columns.latency, 'latency'), where, columns.latencyScale);
      const timestampMs =
        columns.timestamp === undefined
          ? undefined
          : parseTimestampMs(cell(columns.timestamp, 'timestamp'), where);
      const error = columns.status === undefined ? false : isErrorStatus(cell(columns.status, 'status'));
      slices.add(latencyMs, timestampMs, error, lineNumber);
      samples += 1;
    },
    end(): ParsedLatency {
      if (columns === undefined) throw new InvalidInputError('empty CSV: no header', { source });
      if (samples === 0) throw new InvalidInputError('the CSV has a header but no rows', { source });
      const notes: string[] = [];
      if (columns.timestamp === undefined) notes.push('no timestamp column: all rows form one slice');
      if (columns.status === undefined) notes.push('no status column: every row counts as a success');
      return { slices: slices.slices(), timed: columns.timestamp !== undefined, notes };
    },
  };
}

/**
 * Splits one CSV line into fields. Double-quoted fields may contain the delimiter; `""` inside them is
 * a literal quote.
 *
 * @throws {InvalidInputError} when a quote is left open.
 */
export function splitCsvLine(
  line: string,
  delimiter: string,
  where: { source: string; line: number },
): string[] {
  const fields: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < line.length) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"') {
        if (line[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else {
        field += ch;
      }
    } else if (ch === '"' && field.trim() === '') {
      quoted = true;
      field = '';
    } else if (ch === delimiter) {
      fields.push(field);
      field = '';
    } else {
      field += ch;
    }
    i += 1;
  }
  if (quoted) throw new InvalidInputError(`unterminated quoted field in ${quote(line)}`, where);
  fields.push(field);
  return fields;
}
