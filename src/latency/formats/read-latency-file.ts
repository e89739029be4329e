import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { InvalidInputError, InvalidOptionError } from '../../errors.js';
import { numberIn } from '../../option-checks.js';
import { MAX_DURATION_MS } from '../../policy/calibrate.js';
import type { HealthRule, HealthySelection, SliceStats } from '../healthy.js';
import { normalizeHealthRule, selectHealthy } from '../healthy.js';
import { createCsvParser } from './csv.js';
import { detectFormat } from './detect.js';
import { parseHistogramJson } from './histogram-json.js';
import { createLinesParser } from './lines.js';
import { createPrometheusParser } from './prometheus.js';
import type { LatencyFileWarning, LatencyFormat, LineParser, ParsedLatency } from './types.js';
import { LATENCY_FORMATS } from './types.js';

/** Options of {@link readLatencyFile}. */
export interface ReadLatencyFileOptions {
  /** The file's format; detected from the name and the first bytes when absent (see {@link detectFormat}). */
  format?: LatencyFormat;
  /**
   * Length of a time slice for timestamped data, in milliseconds. Each slice is judged healthy or not
   * on its own.
   * @default 60_000
   */
  sliceMs?: number;
  /** Keep only the most recent `windowMs` of timestamped data, in milliseconds. Default: the whole file. */
  windowMs?: number;
  /** Healthy-slice rule; see {@link selectHealthy}. */
  healthRule?: Partial<HealthRule>;
  /** CSV only: the latency column's name, when the header does not use a recognised one (values in ms). */
  latencyColumn?: string;
  /**
   * Prometheus only: the histogram to read when the exposition holds several, optionally with the
   * labels of the series to read: `name{route="/checkout"}` (`name{}`: every series, merged on purpose).
   */
  metric?: string;
}

/** Defaults of {@link ReadLatencyFileOptions}. */
export const READ_LATENCY_FILE_DEFAULTS: Readonly<{ sliceMs: number }> = Object.freeze({ sliceMs: 60_000 });

/** A latency file read, sliced and split into healthy and excluded slices. */
export interface LatencyFileReport {
  /** The path as given. */
  source: string;
  format: LatencyFormat;
  /** Whether the file carried timestamps (so slices are real time windows). */
  timed: boolean;
  /** Slice length used, in ms; `null` for untimed data (one slice). */
  sliceMs: number | null;
  /** Every slice read (after `windowMs`), in time order. */
  slices: SliceStats[];
  /** The healthy histogram and the slices kept and excluded, from {@link selectHealthy}. */
  selection: HealthySelection;
  /** Facts about the reading worth telling the user. */
  notes: string[];
  /** Reasons not to trust the file's percentiles as they are (see {@link LatencyFileWarning}); may be absent when there is none. */
  warnings?: LatencyFileWarning[];
}

/** Largest histogram JSON file read, in bytes (a prazo histogram is tens of KB). */
const MAX_JSON_BYTES = 16 * 1024 * 1024;

/**
 * Reads a latency file — one latency per line, CSV, prazo's histogram JSON or Prometheus text
 * exposition — and selects its healthy slices. Lines, CSV and Prometheus files are streamed line by
 * line, so their size does not matter; memory grows only with the number of slices.
 *
 * Timestamped data (CSV with a timestamp column) is cut into slices of `sliceMs`; untimed data is one
 * slice. The slices go through {@link selectHealthy}: calibrate on `report.selection.histogram`.
 *
 * @throws {InvalidInputError} naming the file, the line and the value when the file cannot be read or
 *   parsed, or its format cannot be detected.
 * @throws {InvalidOptionError} naming the option when an option is invalid.
 * @example
 * const report = await readLatencyFile('latency.csv', { sliceMs: 60_000 });
 * calibrateTimeout({ p99Ms: report.selection.histogram.percentile(99), userDeadlineMs: 1500 });
 */
export async function readLatencyFile(
  path: string,
  options: ReadLatencyFileOptions = {},
): Promise<LatencyFileReport> {
  const sliceMs = options.sliceMs ?? READ_LATENCY_FILE_DEFAULTS.sliceMs;
  checkMs('sliceMs', sliceMs);
  if (options.windowMs !== undefined) checkMs('windowMs', options.windowMs);
  // Validated before the file is read, so a bad rule fails fast on a large file.
  const healthRule = normalizeHealthRule(options.healthRule, 'healthRule.');
  if (options.format !== undefined && !LATENCY_FORMATS.includes(options.format)) {
    throw new InvalidOptionError('format', `one of ${LATENCY_FORMATS.join(', ')}`, options.format);
  }

  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw new InvalidInputError(`cannot open the file (${describeFsError(error)})`, { source: path });
  }
  let parsed: ParsedLatency;
  let format: LatencyFormat;
  try {
    const stat = await handle.stat();
    const size = stat.size;
    if (!stat.isFile()) throw new InvalidInputError('not a regular file', { source: path });
    format = options.format ?? (await detect(handle, path));
    if (format === 'json') {
      if (size > MAX_JSON_BYTES) {
        throw new InvalidInputError(`a histogram JSON file of ${size} bytes is too large`, { source: path });
      }
      parsed = parseHistogramJson(await handle.readFile({ encoding: 'utf8' }), path);
    } else {
      const parser: LineParser =
        format === 'csv'
          ? createCsvParser(path, {
              sliceMs,
              ...(options.latencyColumn === undefined ? {} : { latencyColumn: options.latencyColumn }),
            })
          : format === 'prometheus'
            ? createPrometheusParser(path, options.metric === undefined ? {} : { metric: options.metric })
            : createLinesParser(path);
      parsed = await streamLines(handle, parser);
    }
  } finally {
    await handle.close().catch(() => {});
  }

  let slices = parsed.slices;
  if (parsed.timed && options.windowMs !== undefined && slices.length > 0) {
    const endMs = slices.at(-1)!.endMs;
    slices = slices.filter((s) => s.endMs > endMs - options.windowMs!);
  }
  return {
    source: path,
    format,
    timed: parsed.timed,
    sliceMs: parsed.timed ? sliceMs : null,
    slices,
    selection: selectHealthy(slices, healthRule),
    notes: parsed.notes,
    warnings: parsed.warnings ?? [],
  };
}

async function detect(handle: Awaited<ReturnType<typeof open>>, path: string): Promise<LatencyFormat> {
  const buffer = Buffer.alloc(4096);
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
  const format = detectFormat(path, buffer.subarray(0, bytesRead).toString('utf8'));
  if (format === undefined) {
    throw new InvalidInputError(
      `cannot tell the file's format: name it with --format (${LATENCY_FORMATS.join(', ')})`,
      {
        source: path,
      },
    );
  }
  return format;
}

async function streamLines(
  handle: Awaited<ReturnType<typeof open>>,
  parser: LineParser,
): Promise<ParsedLatency> {
  const stream = handle.createReadStream({ encoding: 'utf8', start: 0, autoClose: false });
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  let lineNumber = 0;
  try {
    for await (const line of lines) {
      lineNumber += 1;
      parser.line(line, lineNumber);
    }
  } finally {
    lines.close();
    stream.destroy();
  }
  return parser.end();
}

function checkMs(option: string, value: unknown): void {
  numberIn(
    option,
    value,
    { min: 1, max: MAX_DURATION_MS },
    `a number of milliseconds from 1 to ${MAX_DURATION_MS}`,
  );
}

function describeFsError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory';
  return error instanceof Error ? error.message : String(error);
}
