import { parseArgs } from 'node:util';
import { type Command, EXIT, joinNegativeValues, parseFlags } from '@prazo/cli-kit';
import { InvalidInputError, InvalidOptionError } from '../errors.js';
import type { LatencyFileReport } from '../latency/formats/read-latency-file.js';
import { READ_LATENCY_FILE_DEFAULTS, readLatencyFile } from '../latency/formats/read-latency-file.js';
import type { LatencyFormat } from '../latency/formats/types.js';
import { LATENCY_FORMATS } from '../latency/formats/types.js';
import type { HealthRule, SliceSummary } from '../latency/healthy.js';
import { HEALTH_RULE_DEFAULTS } from '../latency/healthy.js';
import { LatencyHistogram } from '../latency/histogram.js';
import type { CalibratedPolicy, CalibrationOptions, CalibrationProfile } from '../policy/calibrate.js';
import { CALIBRATION_DEFAULTS, calibrateTimeout, normalizeCalibrationOptions } from '../policy/calibrate.js';
import { count, duration, durationFlag, fractionFlag, ms, numberFlag, percent, runCommand } from './args.js';
import {
  type FleetCalibrationSource,
  PROMETHEUS_FLAGS,
  PROMETHEUS_HELP,
  readPrometheusForCalibrate,
  reportPrometheusFailure,
} from './calibrate-prometheus.js';

const HELP = `Usage: prazo calibrate (--p99 DURATION | --histogram FILE | --prometheus URL) --deadline DURATION [options]

Derives per-attempt connect and read timeouts from a dependency's healthy p99 and fits the number of
attempts into the caller's deadline: read = ceil(p99 × slack), connect = min(cap, read), and
attempts × (read + overhead) ≤ deadline — reducing attempts, never the timeout.

Source of the p99 (one of):
  --p99 DURATION          healthy p99 of the dependency
  --histogram FILE        latency file: one ms per line, CSV (latency_ms[,timestamp][,status]),
                          prazo histogram JSON, or Prometheus text exposition (_bucket{le="…"})
  --format NAME           ${LATENCY_FORMATS.join(' | ')} (default: detected)
  --slice DURATION        slice length for timestamped data (default ${READ_LATENCY_FILE_DEFAULTS.sliceMs / 1000}s)
  --window DURATION       only the most recent DURATION of timestamped data (default: all)
  --column NAME           CSV latency column (values in ms) when not a recognised name
  --metric NAME           Prometheus histogram to read when there are several; NAME{label="value"}
                          reads only the series with those labels, NAME{} merges every series on purpose
  --max-error-rate X      a slice above this error rate is unhealthy (default ${HEALTH_RULE_DEFAULTS.maxErrorRate}, or 5%)
  --p99-factor X          a slice whose p99 exceeds X × the median slice p99 is unhealthy (default ${HEALTH_RULE_DEFAULTS.p99Factor})
  --min-samples N         a slice with fewer calls is not judged, only excluded (default ${HEALTH_RULE_DEFAULTS.minSamples})
${PROMETHEUS_HELP}
Policy:
  --deadline DURATION     how long the caller waits for the whole operation (required)
  --attempts N            attempts wanted, first call included (default ${CALIBRATION_DEFAULTS.attempts})
  --slack X               factor on the p99, > 1 and ≤ 3; advice 1.3–1.5 (default ${CALIBRATION_DEFAULTS.slack})
  --connect-cap DURATION  upper bound of the connect timeout (default ${CALIBRATION_DEFAULTS.connectCapMs}ms)
  --connect-p99 DURATION  connect-phase p99, when known: connect = min(cap, ceil(connect p99 × slack))
  --overhead DURATION     time reserved per attempt (default ${CALIBRATION_DEFAULTS.overheadPerAttemptMs}ms)

Output:
  --json                  machine-readable result on stdout
  -h, --help              this help

Durations are milliseconds (1500) or carry a unit (250ms, 1.5s, 2m).

Exit codes: 0 the requested attempts fit; 1 a warning was raised (ATTEMPTS_REDUCED,
DEADLINE_BELOW_ONE_ATTEMPT, READ_TIMEOUT_CLAMPED, CONNECT_TIMEOUT_CLAMPED, or about the file:
QUANTILE_ABOVE_LARGEST_BUCKET when the p99 lies in a histogram's +Inf bucket, SERIES_MERGED when label
series were merged unasked); 2 bad input (flag, file, or no healthy slice to calibrate on); 3 Prometheus
could not be read or answered something unusable (the message starts with its code, e.g.
PROMETHEUS_UNAVAILABLE).

Examples:
  prazo calibrate --p99 180 --deadline 1500 --attempts 2
  prazo calibrate --histogram examples/checkout-balance.csv --deadline 1500 --json
  prazo calibrate --prometheus http://127.0.0.1:9090 --dependency payments --range 6h --step 1m --deadline 1500
`;

const FLAGS = {
  p99: { type: 'string' },
  histogram: { type: 'string' },
  format: { type: 'string' },
  slice: { type: 'string' },
  window: { type: 'string' },
  column: { type: 'string' },
  metric: { type: 'string' },
  'max-error-rate': { type: 'string' },
  'p99-factor': { type: 'string' },
  'min-samples': { type: 'string' },
  deadline: { type: 'string' },
  attempts: { type: 'string' },
  slack: { type: 'string' },
  'connect-cap': { type: 'string' },
  'connect-p99': { type: 'string' },
  overhead: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  ...PROMETHEUS_FLAGS,
} as const;

function readFlags(argv: string[]) {
  return parseFlags(
    () =>
      parseArgs({
        args: joinNegativeValues(argv, FLAGS),
        options: FLAGS,
        strict: true,
        allowPositionals: false,
      }).values,
  );
}
type Flags = ReturnType<typeof readFlags>;

/** Library option names → the flags that set them, for error messages. */
const OPTION_FLAGS: Readonly<Record<string, string>> = Object.freeze({
  p99Ms: 'p99',
  userDeadlineMs: 'deadline',
  attempts: 'attempts',
  connectP99Ms: 'connect-p99',
  slack: 'slack',
  connectCapMs: 'connect-cap',
  overheadPerAttemptMs: 'overhead',
  sliceMs: 'slice',
  windowMs: 'window',
  format: 'format',
  'healthRule.maxErrorRate': 'max-error-rate',
  'healthRule.p99Factor': 'p99-factor',
  'healthRule.minSamples': 'min-samples',
});

/** Healthy latency percentiles printed and returned, in ms. */
interface HealthyLatency {
  count: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

/** The `--json` output of `prazo calibrate`. */
export interface CalibrateOutput extends CalibratedPolicy {
  /** The p99 calibrated on, in ms. */
  p99Ms: number;
  userDeadlineMs: number;
  requestedAttempts: number;
  /** The connect-phase p99 given with `--connect-p99`, in ms, or `null`. */
  connectP99Ms: number | null;
  options: Required<CalibrationOptions>;
  /** `"flags"` or the file read. */
  source: string;
  format: LatencyFormat | null;
  timed: boolean;
  sliceMs: number | null;
  /** Percentiles of the healthy slices merged; `null` when the p99 came from `--p99`. */
  healthy: HealthyLatency | null;
  /**
   * p99 of every slice merged, degraded ones included, in ms: what calibrating on the whole file would
   * have used. `null` when nothing was excluded or the p99 came from `--p99`.
   */
  allSlicesP99Ms: number | null;
  included: SliceSummary[];
  excluded: LatencyFileReport['selection']['excluded'];
  notes: string[];
  /** Reasons not to trust the file's percentiles as they are; any of them makes the exit code 1. */
  inputWarnings: NonNullable<LatencyFileReport['warnings']>;
  /** With `--prometheus`: the server, the histogram, the steps and the PromQL read. */
  fleet?: FleetCalibrationSource;
}

/** `prazo calibrate`: see {@link HELP}. */
export const calibrate: Command = (argv, io) =>
  runCommand('calibrate', io, OPTION_FLAGS, async () => {
    const flags = readFlags(argv);
    if (flags.help) {
      io.stdout.write(HELP);
      return EXIT.ok;
    }
    let output: CalibrateOutput;
    try {
      output = await computeCalibration(flags);
    } catch (error) {
      const code = reportPrometheusFailure('calibrate', error, io);
      if (code === undefined) throw error;
      return code;
    }
    if (flags.json) io.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
    else io.stdout.write(renderCalibration(output));
    return output.warning === null && output.inputWarnings.length === 0 ? EXIT.ok : EXIT.warning;
  });

async function computeCalibration(flags: Flags): Promise<CalibrateOutput> {
  const userDeadlineMs = durationFlag('deadline', flags.deadline);
  if (userDeadlineMs === undefined) {
    throw new InvalidInputError('--deadline is required (how long the caller waits, e.g. --deadline 1500)');
  }
  const attempts = numberFlag('attempts', flags.attempts, 'an integer ≥ 1');
  const connectP99Ms = durationFlag('connect-p99', flags['connect-p99']);
  const options: CalibrationOptions = {};
  const slack = numberFlag('slack', flags.slack);
  if (slack !== undefined) options.slack = slack;
  const connectCapMs = durationFlag('connect-cap', flags['connect-cap']);
  if (connectCapMs !== undefined) options.connectCapMs = connectCapMs;
  const overheadMs = durationFlag('overhead', flags.overhead);
  if (overheadMs !== undefined) options.overheadPerAttemptMs = overheadMs;
  const normalized = normalizeCalibrationOptions(options);

  const flagP99 = durationFlag('p99', flags.p99);
  const sources = [flagP99, flags.histogram, flags.prometheus].filter((s) => s !== undefined).length;
  if (sources !== 1) {
    throw new InvalidInputError('give exactly one of --p99 DURATION or --histogram FILE or --prometheus URL');
  }

  let report: LatencyFileReport | undefined;
  let p99Ms: number;
  let healthy: HealthyLatency | null = null;
  let allSlicesP99Ms: number | null = null;
  let fleet: FleetCalibrationSource | undefined;
  if (flags.prometheus !== undefined) {
    ({ report, fleet } = await readPrometheusForCalibrate(flags, readOptions(flags).healthRule));
  } else if (flags.histogram !== undefined) {
    report = await readLatencyFile(flags.histogram, readOptions(flags));
  }
  if (report !== undefined) {
    const histogram = report.selection.histogram;
    if (histogram.count === 0) {
      const excluded = report.selection.excluded;
      const shown = excluded.slice(0, 3).map((s) => `${sliceLabel(s, report!)}: ${s.detail}`);
      if (excluded.length > 3) shown.push(`and ${excluded.length - 3} more`);
      const why = shown.join('; ');
      throw new InvalidInputError(`no healthy slice to calibrate on (${why})`, { source: report.source });
    }
    const [p50Ms, p95Ms, p99, p999Ms] = histogram.percentiles([50, 95, 99, 99.9]) as [
      number,
      number,
      number,
      number,
    ];
    p99Ms = p99;
    healthy = { count: histogram.count, p50Ms, p95Ms, p99Ms, p999Ms, maxMs: histogram.max };
    if (report.selection.excluded.length > 0) {
      const all = new LatencyHistogram();
      for (const slice of report.slices) all.merge(slice.histogram);
      allSlicesP99Ms = all.percentile(99);
    }
  } else {
    p99Ms = flagP99!;
  }

  const profile: CalibrationProfile = { p99Ms, userDeadlineMs };
  if (attempts !== undefined) profile.attempts = attempts;
  if (connectP99Ms !== undefined) profile.connectP99Ms = connectP99Ms;
  const policy = calibrateTimeout(profile, normalized);
  return {
    ...policy,
    p99Ms,
    userDeadlineMs,
    requestedAttempts: attempts ?? CALIBRATION_DEFAULTS.attempts,
    connectP99Ms: connectP99Ms ?? null,
    options: normalized,
    source: report?.source ?? 'flags',
    format: report?.format ?? null,
    timed: report?.timed ?? false,
    sliceMs: report?.sliceMs ?? null,
    healthy,
    allSlicesP99Ms,
    included: report?.selection.included ?? [],
    excluded: report?.selection.excluded ?? [],
    notes: report?.notes ?? [],
    inputWarnings: report?.warnings ?? [],
    ...(fleet === undefined ? {} : { fleet }),
  };
}

function readOptions(flags: Flags) {
  const format = flags.format;
  if (format !== undefined && !(LATENCY_FORMATS as readonly string[]).includes(format)) {
    throw new InvalidOptionError('--format', `one of ${LATENCY_FORMATS.join(', ')}`, format);
  }
  const healthRule: Partial<HealthRule> = {};
  const maxErrorRate = fractionFlag('max-error-rate', flags['max-error-rate']);
  if (maxErrorRate !== undefined) healthRule.maxErrorRate = maxErrorRate;
  // normalizeHealthRule (inside readLatencyFile) validates these and names them; see OPTION_FLAGS.
  const p99Factor = numberFlag('p99-factor', flags['p99-factor']);
  if (p99Factor !== undefined) healthRule.p99Factor = p99Factor;
  const minSamples = numberFlag('min-samples', flags['min-samples'], 'an integer ≥ 1');
  if (minSamples !== undefined) healthRule.minSamples = minSamples;
  const sliceMs = durationFlag('slice', flags.slice);
  const windowMs = durationFlag('window', flags.window);
  return {
    healthRule,
    ...(format === undefined ? {} : { format: format as LatencyFormat }),
    ...(sliceMs === undefined ? {} : { sliceMs }),
    ...(windowMs === undefined ? {} : { windowMs }),
    ...(flags.column === undefined ? {} : { latencyColumn: flags.column }),
    ...(flags.metric === undefined ? {} : { metric: flags.metric }),
  };
}

/** Epoch timestamps from 1973 on print as UTC times; smaller ones are offsets in the file's own clock. */
const EPOCH_FLOOR_MS = 1e11;

function sliceLabel(slice: SliceSummary, report: Pick<LatencyFileReport, 'timed'>): string {
  if (!report.timed) return 'all calls';
  if (slice.startMs >= EPOCH_FLOOR_MS) {
    const start = new Date(slice.startMs).toISOString();
    const end = new Date(slice.endMs).toISOString();
    const sameDay = start.slice(0, 10) === end.slice(0, 10);
    return `${start.slice(0, 10)} ${start.slice(11, 19)}–${sameDay ? end.slice(11, 19) : `${end.slice(0, 10)} ${end.slice(11, 19)}`} UTC`;
  }
  return `${ms(slice.startMs)}–${ms(slice.endMs)}`;
}

/** Renders the human-readable table of `prazo calibrate`. */
export function renderCalibration(out: CalibrateOutput): string {
  const lines: string[] = [];
  const sliceCount = out.included.length + out.excluded.length;
  if (out.healthy === null) {
    lines.push(`prazo calibrate — p99 ${ms(out.p99Ms)} (from --p99)`);
  } else {
    const how = out.timed
      ? `${sliceCount} slice${sliceCount === 1 ? '' : 's'} of ${duration(out.sliceMs ?? 0)}`
      : 'untimed';
    lines.push(`prazo calibrate — ${out.source} (${out.format}, ${how})`);
    lines.push('');
    lines.push(
      `Healthy latency — ${out.included.length} of ${sliceCount} slice${sliceCount === 1 ? '' : 's'}, ${count(out.healthy.count)} calls`,
    );
    const rows: Array<[string, number]> = [
      ['p50', out.healthy.p50Ms],
      ['p95', out.healthy.p95Ms],
      ['p99', out.healthy.p99Ms],
      ['p99.9', out.healthy.p999Ms],
    ];
    for (const [label, value] of rows) lines.push(`  ${label.padEnd(7)}${ms(value).padStart(12)}`);
    lines.push('');
    if (out.excluded.length === 0) {
      lines.push('Excluded slices: none');
    } else {
      lines.push('Excluded slices (not calibrated on)');
      for (const slice of out.excluded) {
        lines.push(
          `  ${sliceLabel(slice, out)}  ${count(slice.count)} calls, ${percent(slice.errorRate)} errors, ` +
            `p99 ${ms(slice.p99Ms)} — ${slice.reason}: ${slice.detail}`,
        );
      }
    }
    if (out.allSlicesP99Ms !== null) {
      lines.push(
        `  (calibrated on every slice, the p99 would be ${ms(out.allSlicesP99Ms)} and the read timeout ` +
          `${ms(Math.ceil(out.allSlicesP99Ms * out.options.slack))}: a timeout that protects nothing)`,
      );
    }
    for (const note of out.notes) lines.push(`  note: ${note}`);
  }
  lines.push('');
  const o = out.options;
  lines.push(
    `Policy for a ${ms(out.userDeadlineMs)} deadline (slack ${o.slack}, ${ms(o.overheadPerAttemptMs)} overhead per attempt)`,
  );
  const connectFrom =
    out.connectP99Ms === null
      ? `read ${ms(out.readMs)}`
      : `ceil(connect p99 ${ms(out.connectP99Ms)} × ${o.slack})`;
  lines.push(
    `  connect timeout  ${ms(out.connectMs).padStart(10)}   min(cap ${ms(o.connectCapMs)}, ${connectFrom})`,
  );
  lines.push(`  read timeout     ${ms(out.readMs).padStart(10)}   ceil(p99 ${ms(out.p99Ms)} × ${o.slack})`);
  const used = out.attempts * (out.readMs + o.overheadPerAttemptMs);
  lines.push(
    `  attempts         ${String(out.attempts).padStart(10)}   ${out.attempts} × (${out.readMs} + ${count(o.overheadPerAttemptMs)}) = ${ms(used)} of ${ms(out.userDeadlineMs)}`,
  );
  lines.push('');
  const warnings = out.warnings ?? (out.warning === null ? [] : [out.warning]);
  for (const warning of out.inputWarnings) lines.push(`WARNING ${warning.code}: ${warning.message}`);
  if (warnings.length === 0 && out.inputWarnings.length === 0) {
    lines.push(
      `OK: the deadline holds the ${out.attempts} attempt${out.attempts === 1 ? '' : 's'} requested.`,
    );
  }
  for (const warning of warnings) lines.push(`WARNING ${warning.code}: ${warning.message}`);
  return `${lines.join('\n')}\n`;
}

export default calibrate;
