import {
  InvalidOptionError,
  PrometheusNoDataError,
  PrometheusNotFiniteError,
  PrometheusWrongMetricTypeError,
} from '../errors.js';
import {
  type HealthRule,
  type HealthySelection,
  normalizeHealthRule,
  type SliceStats,
  selectHealthy,
} from '../latency/healthy.js';
import { METRICS } from '../wire/metric-names.js';
import type { RangeSeries } from './api-response.js';
import {
  buildFleetSlices,
  countsByOutcome,
  type StepCounts,
  unitScale,
  valuesByTime,
} from './fleet-slices.js';
import { type LabelMatcher, parseLabelMatchers } from './label-matchers.js';
import type { PrometheusApi, QueryRange } from './prometheus-api.js';
import {
  baseSeriesQuery,
  bucketIncreaseQuery,
  classicSeriesQuery,
  countQuery,
  countSeriesQuery,
  type FleetHistogram,
  type HistogramKind,
  promDuration,
  quantileQuery,
  requestOutcomeQuery,
  selector,
} from './promql.js';

/**
 * What to read from Prometheus: a prazo dependency's own attempt histogram (its calls and errors from
 * `prazo_requests_total`), or any histogram (`metric`), with label matchers narrowing the series.
 */
export interface FleetLatencyQuery {
  /** A prazo dependency's name: reads `prazo_attempt_duration_seconds{dependency="…"}`. */
  dependency?: string;
  /** Any histogram's base name (with or without `_bucket`), e.g. `http_client_request_duration_seconds`. */
  metric?: string;
  /** Label matchers for every series read, as a selector body (`job="checkout"`) or parsed. @default [] */
  match?: string | readonly LabelMatcher[];
  /**
   * With `metric`: matchers that pick the failed calls among the histogram's series
   * (`status_code=~"5.."`); without it no call counts as failed and the error-rate rule is not applied.
   */
  errorMatch?: string | readonly LabelMatcher[];
  /** How far back to read, ms. @default 3_600_000 (1 h) */
  rangeMs?: number;
  /** Length of one step, ms: each step is one slice for the health rule. @default 60_000 */
  stepMs?: number;
  /** End of the range, epoch ms; rounded down to a multiple of `stepMs`. @default now */
  endMs?: number;
  /** `'auto'` asks Prometheus which kind the histogram is. @default 'auto' */
  kind?: HistogramKind | 'auto';
  /** The rule that picks healthy steps (the same as for files). @default HEALTH_RULE_DEFAULTS */
  healthRule?: Partial<HealthRule>;
}

/** Defaults of {@link FleetLatencyQuery}. */
export const FLEET_LATENCY_DEFAULTS = Object.freeze({
  rangeMs: 3_600_000,
  stepMs: 60_000,
  kind: 'auto' as const,
});

/** Most steps one range query may hold (Prometheus refuses more than 11 000 points per series). */
export const MAX_FLEET_STEPS = 11_000;

/** {@link FleetLatencyQuery} after validation. */
export interface NormalizedFleetLatencyQuery {
  histogram: FleetHistogram;
  /** The dependency, or `null` for another histogram. */
  dependency: string | null;
  /** Matchers of the dependency's request counter, or `null` for another histogram. */
  requestMatchers: readonly LabelMatcher[] | null;
  errorMatch: readonly LabelMatcher[] | null;
  rangeMs: number;
  stepMs: number;
  endMs: number | undefined;
  kind: HistogramKind | 'auto';
  healthRule: HealthRule;
}

/** The PromQL behind a report, to paste into Grafana or the Prometheus UI. */
export interface FleetQueries {
  /** Calls per bucket per step. */
  buckets: string;
  /** Calls and errors per step, or `null` when the histogram's own count was used. */
  counts: string | null;
  /** Errors per step (another histogram with `errorMatch`), or `null`. */
  errors: string | null;
  /** The fleet p99 per step, as a Grafana panel shows it. */
  p99: string;
}

/** What {@link readFleetLatency} found. */
export interface FleetLatencyReport {
  /** Base URL of the Prometheus server read. */
  source: string;
  /** The histogram's base name and the selector used. */
  metric: string;
  selector: string;
  kind: HistogramKind;
  startMs: number;
  endMs: number;
  stepMs: number;
  /** One slice per step holding calls, oldest first. */
  slices: SliceStats[];
  /** The healthy steps merged, and each excluded step with its reason (as for a file). */
  selection: HealthySelection;
  /** `histogram_quantile(0.99, …)` per step as Prometheus computes it, ms (`null` where NaN). */
  prometheusP99Ms: Array<{ endMs: number; p99Ms: number | null }>;
  queries: FleetQueries;
  notes: string[];
}

/**
 * Validates a {@link FleetLatencyQuery}.
 * @throws {InvalidOptionError} naming the option; {@link InvalidInputError} for unparsable matchers.
 */
export function normalizeFleetLatencyQuery(query: FleetLatencyQuery): NormalizedFleetLatencyQuery {
  if (typeof query !== 'object' || query === null)
    throw new InvalidOptionError('query', 'an object with `dependency` or `metric`', query);
  const { dependency, metric } = query;
  if ((dependency === undefined) === (metric === undefined))
    throw new InvalidOptionError('dependency', 'set, or `metric` set — exactly one of them', dependency);
  const match = toMatchers(query.match, 'match');
  const rangeMs = query.rangeMs ?? FLEET_LATENCY_DEFAULTS.rangeMs;
  const stepMs = query.stepMs ?? FLEET_LATENCY_DEFAULTS.stepMs;
  if (!(Number.isFinite(stepMs) && stepMs >= 1000 && Number.isInteger(stepMs / 1000)))
    throw new InvalidOptionError('stepMs', 'a whole number of seconds ≥ 1 s, in ms', stepMs);
  if (!(Number.isFinite(rangeMs) && rangeMs >= stepMs))
    throw new InvalidOptionError('rangeMs', `a number of ms ≥ stepMs (${stepMs})`, rangeMs);
  if (rangeMs / stepMs > MAX_FLEET_STEPS)
    throw new InvalidOptionError('rangeMs', `at most ${MAX_FLEET_STEPS} steps (rangeMs / stepMs)`, rangeMs);
  if (query.endMs !== undefined && !(Number.isFinite(query.endMs) && query.endMs > 0))
    throw new InvalidOptionError('endMs', 'an epoch time in ms', query.endMs);
  const kind = query.kind ?? FLEET_LATENCY_DEFAULTS.kind;
  if (kind !== 'auto' && kind !== 'classic' && kind !== 'native')
    throw new InvalidOptionError('kind', "'auto', 'classic' or 'native'", kind);
  const healthRule = normalizeHealthRule(query.healthRule, 'healthRule.');
  if (dependency !== undefined) {
    if (typeof dependency !== 'string' || dependency === '')
      throw new InvalidOptionError('dependency', 'a non-empty string', dependency);
    if (query.errorMatch !== undefined)
      throw new InvalidOptionError(
        'errorMatch',
        'unset with `dependency` (prazo counts its own errors)',
        query.errorMatch,
      );
    const matchers: LabelMatcher[] = [{ name: 'dependency', op: '=', value: dependency }, ...match];
    return {
      histogram: { metric: METRICS.attemptDuration.prometheus, matchers },
      dependency,
      requestMatchers: matchers,
      errorMatch: null,
      rangeMs,
      stepMs,
      endMs: query.endMs,
      kind,
      healthRule,
    };
  }
  if (typeof metric !== 'string' || !/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(metric))
    throw new InvalidOptionError('metric', 'a Prometheus metric name', metric);
  const base = metric.endsWith('_bucket') ? metric.slice(0, -'_bucket'.length) : metric;
  const errorMatch = query.errorMatch === undefined ? null : toMatchers(query.errorMatch, 'errorMatch');
  return {
    histogram: { metric: base, matchers: match },
    dependency: null,
    requestMatchers: null,
    errorMatch,
    rangeMs,
    stepMs,
    endMs: query.endMs,
    kind,
    healthRule,
  };
}

/**
 * Reads a histogram of the whole fleet from Prometheus, step by step, and picks the healthy steps with
 * the same rule as a latency file (`selectHealthy`): too few calls, an error rate above the limit, a
 * p99 far above the other steps' — each excluded step named with its reason.
 *
 * Per step it asks for the increase of every bucket summed over the fleet (`sum by (le)
 * (increase(…_bucket[step]))`; `sum(increase(…[step]))` for a native histogram), the calls and errors
 * (`prazo_requests_total` by outcome for a prazo dependency), and the fleet p99 as Prometheus computes
 * it (`histogram_quantile(0.99, sum by (le) (rate(…[step])))`), reported beside prazo's own.
 *
 * @throws {PrometheusError} subclasses with a `code`: `PROMETHEUS_UNAVAILABLE`, `PROMETHEUS_HTTP_ERROR`,
 *   `PROMETHEUS_QUERY_ERROR`, `PROMETHEUS_BAD_RESPONSE`, `PROMETHEUS_NO_DATA` (no calls in the range),
 *   `PROMETHEUS_NOT_FINITE`, `PROMETHEUS_WRONG_METRIC_TYPE` (a counter, gauge or summary).
 * @example
 * const api = createPrometheusApi({ url: 'http://prometheus:9090' });
 * const report = await readFleetLatency(api, { dependency: 'payments', rangeMs: 3_600_000, stepMs: 60_000 });
 * report.selection.histogram.percentile(99); // the fleet's healthy p99, ms
 */
export async function readFleetLatency(
  api: PrometheusApi,
  query: FleetLatencyQuery | NormalizedFleetLatencyQuery,
  options: { signal?: AbortSignal; nowMs?: number } = {},
): Promise<FleetLatencyReport> {
  const q = 'histogram' in query ? query : normalizeFleetLatencyQuery(query);
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  const end = q.endMs ?? options.nowMs ?? Date.now();
  const endMs = Math.floor(end / q.stepMs) * q.stepMs;
  const range: QueryRange = { startMs: endMs - q.rangeMs + q.stepMs, endMs, stepMs: q.stepMs };
  const h = q.histogram;
  const context = { url: api.url };
  const kind = q.kind === 'auto' ? await detectKind(api, h, q.rangeMs, endMs, signal) : q.kind;

  const queries: FleetQueries = {
    buckets: bucketIncreaseQuery(h, kind, q.stepMs),
    counts: q.requestMatchers === null ? null : requestOutcomeQuery(q.requestMatchers, q.stepMs),
    errors: q.errorMatch === null ? null : countQuery(h, kind, q.stepMs, q.errorMatch),
    p99: quantileQuery(h, kind, 0.99, q.stepMs),
  };
  const none: Promise<RangeSeries[] | null> = Promise.resolve(null);
  const [buckets, counts, errors, p99] = await Promise.all([
    api.queryRange(queries.buckets, range, signal),
    queries.counts === null ? none : api.queryRange(queries.counts, range, signal),
    queries.errors === null ? none : api.queryRange(queries.errors, range, signal),
    api.queryRange(queries.p99, range, signal),
  ]);

  const notes: string[] = [];
  const unit = unitScale(h.metric);
  if (unit.note !== undefined) notes.push(unit.note);
  let stepCounts: StepCounts | undefined;
  if (counts !== null) stepCounts = countsByOutcome(counts);
  else if (errors !== null) stepCounts = { total: new Map(), errors: valuesByTime(errors) };
  else notes.push('no error counter: the error-rate rule was not applied (set an error match to apply it)');

  const built = buildFleetSlices({
    kind,
    buckets,
    stepMs: q.stepMs,
    scaleToMs: unit.scaleToMs,
    counts: stepCounts,
    context: { ...context, query: queries.buckets },
  });
  if (built.slices.every((s) => s.count === 0)) {
    throw new PrometheusNoDataError(
      `no calls of ${selector(h.metric, h.matchers)} between ${iso(range.startMs - q.stepMs)} and ${iso(endMs)}`,
      { ...context, query: queries.buckets },
    );
  }
  if (built.overflow > 0)
    notes.push(
      `${built.overflow} calls above the largest bucket (${built.largestBoundMs} ms) counted at that bound`,
    );
  const serverP99 = new Map(p99.flatMap((s) => s.values).map(({ atMs, value }) => [atMs, value]));
  for (const slice of built.slices) {
    const value = serverP99.get(slice.endMs);
    if (value !== undefined && slice.histogram.count > 0 && !Number.isFinite(value))
      throw new PrometheusNotFiniteError(
        `histogram_quantile(0.99, …) is ${String(value)} for the step ending ${iso(slice.endMs)}, which holds ` +
          `${slice.histogram.count} calls: the buckets are incomplete (no le="+Inf" bucket?) or not a histogram`,
        { ...context, query: queries.p99, value: String(value) },
      );
  }
  const prometheusP99Ms = [...serverP99]
    .sort(([a], [b]) => a - b)
    .map(([endMs, value]) => ({ endMs, p99Ms: Number.isFinite(value) ? value * unit.scaleToMs : null }));

  return {
    source: api.url,
    metric: h.metric,
    selector: selector(kind === 'classic' ? `${h.metric}_bucket` : h.metric, h.matchers),
    kind,
    startMs: range.startMs - q.stepMs,
    endMs,
    stepMs: q.stepMs,
    slices: built.slices,
    selection: selectHealthy(built.slices, q.healthRule),
    prometheusP99Ms,
    queries,
    notes,
  };
}

/**
 * Asks Prometheus how the histogram is stored: classic `_bucket` series, or native histogram samples.
 * @throws {PrometheusWrongMetricTypeError} when the name holds floats (a counter or gauge) or a summary.
 * @throws {PrometheusNoDataError} when there is no series of it at all in the range.
 */
export async function detectKind(
  api: PrometheusApi,
  h: FleetHistogram,
  rangeMs: number,
  atMs: number,
  signal: { signal?: AbortSignal } = {},
): Promise<HistogramKind> {
  const at = { atMs, ...signal };
  const classic = await api.query(classicSeriesQuery(h, rangeMs), at);
  if (classic.some((s) => (s.value ?? 0) > 0)) return 'classic';
  const base = await api.query(baseSeriesQuery(h, rangeMs), at);
  if (base.some((s) => s.histogram !== undefined)) return 'native';
  const context = { url: api.url, query: baseSeriesQuery(h, rangeMs) };
  if (base.length > 0)
    throw new PrometheusWrongMetricTypeError(
      `${h.metric} holds plain numbers (a counter or gauge), not a histogram: give the histogram's base name`,
      { ...context, metric: h.metric, found: 'float' },
    );
  const summary = await api.query(countSeriesQuery(h, rangeMs), at);
  if (summary.some((s) => (s.value ?? 0) > 0))
    throw new PrometheusWrongMetricTypeError(
      `${h.metric} is a summary (${h.metric}_count without ${h.metric}_bucket): its quantiles cannot be ` +
        'added across processes; export a histogram instead',
      { ...context, metric: h.metric, found: 'summary' },
    );
  throw new PrometheusNoDataError(
    `no series ${selector(`${h.metric}_bucket`, h.matchers)} or ${selector(h.metric, h.matchers)} in the ` +
      `${promDuration(rangeMs)} before ${iso(atMs)}`,
    context,
  );
}

function toMatchers(value: string | readonly LabelMatcher[] | undefined, source: string): LabelMatcher[] {
  if (value === undefined) return [];
  if (typeof value === 'string') return parseLabelMatchers(value, source);
  if (!Array.isArray(value)) throw new InvalidOptionError(source, 'a selector text or label matchers', value);
  return [...value];
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
