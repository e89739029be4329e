import { type CliIo, EXIT } from '@prazo/cli-kit';
import { InvalidInputError, isPrazoError, PrometheusError } from '../errors.js';
import { createPrometheusApi, PROMETHEUS_API_DEFAULTS } from '../fleet/prometheus-api.js';
import {
  FLEET_LATENCY_DEFAULTS,
  type FleetLatencyReport,
  readFleetLatency,
} from '../fleet/read-fleet-latency.js';
import type { LatencyFileReport } from '../latency/formats/read-latency-file.js';
import type { HealthRule } from '../latency/healthy.js';
import { duration, durationFlag } from './args.js';

/** The flags `prazo calibrate` takes for a Prometheus source (merged into its own). */
export const PROMETHEUS_FLAGS = {
  prometheus: { type: 'string' },
  dependency: { type: 'string' },
  match: { type: 'string' },
  'error-match': { type: 'string' },
  range: { type: 'string' },
  step: { type: 'string' },
  'prometheus-timeout': { type: 'string' },
} as const;

/** Their lines in `prazo calibrate --help`. */
export const PROMETHEUS_HELP = `  --prometheus URL        read the whole fleet's histogram from a Prometheus server (HTTP API), with:
    --dependency NAME       a prazo dependency: prazo_attempt_duration_seconds{dependency="NAME"},
                            calls and errors from prazo_requests_total
    --metric NAME           or any histogram (classic or native), e.g. http_client_request_duration_seconds
    --match LABELS          label matchers for every series read, e.g. 'job="checkout",route="/pay"'
    --error-match LABELS    with --metric: matchers of the failed calls, e.g. 'status_code=~"5.."'
    --range DURATION        how far back to read (default ${FLEET_LATENCY_DEFAULTS.rangeMs / 3_600_000}h; units ms, s, m, h)
    --step DURATION         one slice per step, whole seconds (default ${FLEET_LATENCY_DEFAULTS.stepMs / 60_000}m)
    --prometheus-timeout DURATION  longest wait for one answer (default ${duration(PROMETHEUS_API_DEFAULTS.timeoutMs)})
`;

/** Where the fleet figures came from, in the `--json` output (`fleet`): the server, the steps and the PromQL. */
export type FleetCalibrationSource = { url: string } & Pick<
  FleetLatencyReport,
  'metric' | 'selector' | 'kind' | 'startMs' | 'endMs' | 'stepMs' | 'queries' | 'prometheusP99Ms'
>;

interface PrometheusFlagValues {
  prometheus?: string | undefined;
  dependency?: string | undefined;
  metric?: string | undefined;
  match?: string | undefined;
  'error-match'?: string | undefined;
  range?: string | undefined;
  step?: string | undefined;
  'prometheus-timeout'?: string | undefined;
  /** File-form flags, refused with --prometheus. */
  slice?: string | undefined;
  window?: string | undefined;
  format?: string | undefined;
  column?: string | undefined;
}

/** File-form flags and what to use instead with --prometheus. */
const FILE_ONLY = { slice: '--step', window: '--range', format: null, column: null } as const;

/**
 * Reads the fleet's histogram for `prazo calibrate --prometheus` and shapes it like a file's report,
 * so the command prints both the same way.
 *
 * @throws {InvalidInputError} or {@link InvalidOptionError} for bad flags; a `PrometheusError` with a
 *   `code` when Prometheus cannot be read or answers something unusable.
 */
export async function readPrometheusForCalibrate(
  flags: PrometheusFlagValues,
  healthRule: Partial<HealthRule>,
): Promise<{ report: LatencyFileReport; fleet: FleetCalibrationSource }> {
  if ((flags.dependency === undefined) === (flags.metric === undefined))
    throw new InvalidInputError('with --prometheus, give exactly one of --dependency NAME or --metric NAME');
  for (const [flag, instead] of Object.entries(FILE_ONLY)) {
    if (flags[flag as keyof typeof FILE_ONLY] !== undefined)
      throw new InvalidInputError(
        `--${flag} applies to --histogram files${instead === null ? '' : `; with --prometheus use ${instead}`}`,
      );
  }
  if (flags.dependency !== undefined && flags['error-match'] !== undefined)
    throw new InvalidInputError(
      '--error-match goes with --metric (a prazo dependency counts its own errors)',
    );
  const timeoutMs = durationFlag('prometheus-timeout', flags['prometheus-timeout']);
  const api = createPrometheusApi({
    url: flags.prometheus ?? '',
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
  const rangeMs = hoursFlag('range', flags.range);
  const stepMs = durationFlag('step', flags.step);
  const fleet = await readFleetLatency(api, {
    ...(flags.dependency === undefined ? {} : { dependency: flags.dependency }),
    ...(flags.metric === undefined ? {} : { metric: flags.metric }),
    ...(flags.match === undefined ? {} : { match: flags.match }),
    ...(flags['error-match'] === undefined ? {} : { errorMatch: flags['error-match'] }),
    ...(rangeMs === undefined ? {} : { rangeMs }),
    ...(stepMs === undefined ? {} : { stepMs }),
    healthRule,
  });
  const report: LatencyFileReport = {
    source: `${fleet.source} ${fleet.selector}`,
    format: 'prometheus',
    timed: true,
    sliceMs: fleet.stepMs,
    slices: fleet.slices,
    selection: fleet.selection,
    notes: [`${fleet.kind} histogram, fleet-wide: every process's series summed`, ...fleet.notes],
  };
  return {
    report,
    fleet: {
      url: fleet.source,
      metric: fleet.metric,
      selector: fleet.selector,
      kind: fleet.kind,
      startMs: fleet.startMs,
      endMs: fleet.endMs,
      stepMs: fleet.stepMs,
      queries: fleet.queries,
      prometheusP99Ms: fleet.prometheusP99Ms,
    },
  };
}

/**
 * Writes a Prometheus failure as one line with its code and returns {@link EXIT.sourceFailed}; returns
 * `undefined` for any other error (the caller rethrows it).
 */
export function reportPrometheusFailure(command: string, error: unknown, io: CliIo): number | undefined {
  if (!(error instanceof PrometheusError) && !(isPrazoError(error) && error.code.startsWith('PROMETHEUS_')))
    return undefined;
  const e = error as PrometheusError;
  const query = e.query === undefined ? '' : ` (query: ${e.query})`;
  io.stderr.write(`prazo ${command}: ${e.code}: ${e.message.replace(/\s*\n\s*/g, ' ')}${query}\n`);
  return EXIT.sourceFailed;
}

/** A duration flag that also takes hours (`1h`, `1.5h`), for ranges. */
function hoursFlag(flag: string, text: string | undefined): number | undefined {
  const hours = text === undefined ? null : /^\s*(\d+(?:\.\d+)?)\s*h\s*$/.exec(text);
  if (hours) return Number(hours[1]) * 3_600_000;
  return durationFlag(flag, text);
}
