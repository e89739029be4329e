import { PrometheusBadResponseError } from '../errors.js';
import { assessDrift, type DriftAssessment, type DriftDirection } from '../latency/drift-check.js';
import type { HealthySelection } from '../latency/healthy.js';
import type { InstantSample } from './api-response.js';
import { type LabelMatcher, parseLabelMatchers } from './label-matchers.js';
import type { PrometheusApi } from './prometheus-api.js';
import { processTimeoutQuery } from './promql.js';
import { readFleetLatency } from './read-fleet-latency.js';

/** One process's configured read timeout, as Prometheus scraped it. */
export interface ProcessTimeout {
  /** The labels that tell the process apart (`instance`, `job`). */
  process: Record<string, string>;
  /** Its read timeout, ms. */
  readMs: number;
}

/** How one process's read timeout compares with the fleet's healthy p99 × slack. */
export interface ProcessDrift extends ProcessTimeout {
  assessment: DriftAssessment;
  /** Set when the process drifted: which way. */
  direction: DriftDirection | undefined;
}

/** What a fleet drift check found for one dependency. */
export interface FleetDriftReport {
  dependency: string;
  /** The fleet's healthy p99, ms (`null` when its healthy steps hold too few calls to judge). */
  fleetP99Ms: number | null;
  /** `ceil(fleetP99Ms × slack)`: the read timeout a calibration on the fleet would choose. */
  recommendedMs: number | null;
  /** Every process seen, drifted or not, ordered by their labels. */
  processes: ProcessDrift[];
  /** The processes whose read timeout lies outside the tolerance. */
  drifted: ProcessDrift[];
  /** The PromQL of the per-process timeouts. */
  query: string;
}

/**
 * Compares each process's read timeout with the fleet's healthy p99 × slack, by the rule the drift
 * monitor applies to one process (`assessDrift`). Pure.
 */
export function assessFleetDrift(input: {
  processes: readonly ProcessTimeout[];
  selection: HealthySelection;
  slack: number;
  tolerance: number;
  minSamples: number;
}): ProcessDrift[] {
  return input.processes.map((p) => {
    const assessment = assessDrift({
      configuredMs: p.readMs,
      selection: input.selection,
      slack: input.slack,
      tolerance: input.tolerance,
      minSamples: input.minSamples,
    });
    return {
      ...p,
      assessment,
      direction: assessment.status === 'insufficient' ? undefined : assessment.direction,
    };
  });
}

/**
 * Turns the answer of `processTimeoutQuery` into one timeout per process (seconds → ms).
 * @throws {PrometheusBadResponseError} for a sample that is not a finite, positive number.
 */
export function processTimeouts(
  samples: readonly InstantSample[],
  context: { url: string; query: string },
): ProcessTimeout[] {
  return samples
    .map((s) => {
      if (s.value === undefined || !Number.isFinite(s.value) || s.value <= 0)
        throw new PrometheusBadResponseError(
          `process ${JSON.stringify(s.labels)} reports a read timeout of ${String(s.value)} s`,
          context,
        );
      return { process: s.labels, readMs: s.value * 1000 };
    })
    .sort((a, b) => (labelKey(a.process) < labelKey(b.process) ? -1 : 1));
}

/** Options of {@link checkFleetDrift}. */
export interface FleetDriftOptions {
  /** The prazo dependency, as in its `dependency` label. */
  dependency: string;
  /** Extra matchers for every series (`job="checkout"`). @default [] */
  match?: string | readonly LabelMatcher[];
  /** Labels that tell processes apart. @default ['instance', 'job'] */
  by?: readonly string[];
  /** Range and step over which the fleet's healthy p99 is read. @default 600_000 and 30_000 */
  rangeMs?: number;
  stepMs?: number;
  /** As the drift monitor: slack, tolerance, least healthy samples. */
  slack: number;
  tolerance: number;
  minSamples: number;
  /** End of the range, epoch ms. @default now */
  nowMs?: number;
  signal?: AbortSignal;
}

/**
 * Reads the fleet's healthy p99 and every process's read timeout (`prazo_timeout_seconds{phase="read"}`
 * by `instance` and `job`) and says which processes drifted from the fleet's healthy p99 × slack.
 *
 * @throws the `PrometheusError` of a failed read.
 */
export async function checkFleetDrift(
  api: PrometheusApi,
  options: FleetDriftOptions,
): Promise<FleetDriftReport> {
  const match =
    typeof options.match === 'string'
      ? parseLabelMatchers(options.match, 'match')
      : [...(options.match ?? [])];
  const matchers: LabelMatcher[] = [{ name: 'dependency', op: '=', value: options.dependency }, ...match];
  const query = processTimeoutQuery(matchers, options.by);
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  const [fleet, samples] = await Promise.all([
    readFleetLatency(
      api,
      {
        dependency: options.dependency,
        match,
        rangeMs: options.rangeMs ?? 600_000,
        stepMs: options.stepMs ?? 30_000,
      },
      { ...signal, ...(options.nowMs === undefined ? {} : { nowMs: options.nowMs }) },
    ),
    api.query(query, { ...signal, ...(options.nowMs === undefined ? {} : { atMs: options.nowMs }) }),
  ]);
  const processes = assessFleetDrift({
    processes: processTimeouts(samples, { url: api.url, query }),
    selection: fleet.selection,
    slack: options.slack,
    tolerance: options.tolerance,
    minSamples: options.minSamples,
  });
  const { histogram } = fleet.selection;
  const fleetP99Ms = histogram.count >= options.minSamples ? histogram.percentile(99) : null;
  return {
    dependency: options.dependency,
    fleetP99Ms,
    recommendedMs: fleetP99Ms === null ? null : Math.ceil(fleetP99Ms * options.slack),
    processes,
    drifted: processes.filter((p) => p.direction !== undefined),
    query,
  };
}

function labelKey(labels: Record<string, string>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',');
}
