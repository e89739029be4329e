import { METRICS } from '../wire/metric-names.js';
import { formatLabelMatchers, type LabelMatcher } from './label-matchers.js';

/**
 * How a histogram is stored in Prometheus: `classic` — one `<name>_bucket{le="…"}` counter per bucket
 * bound (what prom-client and most client libraries export); `native` — one `<name>` series of
 * histogram samples with exponential buckets (Prometheus ≥ 2.40 with native histograms enabled).
 */
export type HistogramKind = 'classic' | 'native';

/** A histogram over a whole fleet: its base name (no `_bucket`) and the matchers that pick its series. */
export interface FleetHistogram {
  /** Base name of the histogram, e.g. `prazo_attempt_duration_seconds`. */
  readonly metric: string;
  /** Label matchers every series must satisfy (the dependency, the job …). */
  readonly matchers: readonly LabelMatcher[];
}

/**
 * A PromQL range duration for `ms`: whole seconds as `30s`, anything else as `1500ms`.
 * @example promDuration(30_000) // '30s'
 */
export function promDuration(ms: number): string {
  const whole = Math.round(ms);
  return whole % 1000 === 0 ? `${whole / 1000}s` : `${whole}ms`;
}

/** `name{matchers}`, or `name` alone without matchers. */
export function selector(name: string, matchers: readonly LabelMatcher[]): string {
  return matchers.length === 0 ? name : `${name}{${formatLabelMatchers(matchers)}}`;
}

/**
 * The increase of every bucket over `windowMs`, summed over the fleet: per `le` for a classic
 * histogram, one histogram sample for a native one. Evaluated at each step of a range query with
 * `windowMs` = the step, it gives each step's own calls, bucket by bucket.
 */
export function bucketIncreaseQuery(h: FleetHistogram, kind: HistogramKind, windowMs: number): string {
  const w = promDuration(windowMs);
  return kind === 'classic'
    ? `sum by (le) (increase(${selector(`${h.metric}_bucket`, h.matchers)}[${w}]))`
    : `sum(increase(${selector(h.metric, h.matchers)}[${w}]))`;
}

/**
 * The fleet's quantile `q` (0.99 for the p99) over the last `windowMs`, in the histogram's unit: the
 * query to paste into a Grafana panel (with `windowMs` replaced by `$__rate_interval`).
 * @example quantileQuery({ metric: 'prazo_attempt_duration_seconds', matchers: [] }, 'classic', 0.99, 60_000)
 * // 'histogram_quantile(0.99, sum by (le) (rate(prazo_attempt_duration_seconds_bucket[60s])))'
 */
export function quantileQuery(h: FleetHistogram, kind: HistogramKind, q: number, windowMs: number): string {
  const w = promDuration(windowMs);
  return kind === 'classic'
    ? `histogram_quantile(${q}, sum by (le) (rate(${selector(`${h.metric}_bucket`, h.matchers)}[${w}])))`
    : `histogram_quantile(${q}, sum(rate(${selector(h.metric, h.matchers)}[${w}])))`;
}

/** Calls observed by the histogram over `windowMs`, summed over the fleet (`extra` narrows them, e.g. to errors). */
export function countQuery(
  h: FleetHistogram,
  kind: HistogramKind,
  windowMs: number,
  extra: readonly LabelMatcher[] = [],
): string {
  const w = promDuration(windowMs);
  const matchers = [...h.matchers, ...extra];
  return kind === 'classic'
    ? `sum(increase(${selector(`${h.metric}_count`, matchers)}[${w}]))`
    : `sum(histogram_count(increase(${selector(h.metric, matchers)}[${w}])))`;
}

/**
 * prazo's logical requests over `windowMs`, summed over the fleet, by `outcome` (`success`, `failure`):
 * the counts and the errors of the health rule for a prazo dependency.
 */
export function requestOutcomeQuery(
  matchers: readonly LabelMatcher[],
  windowMs: number,
  metric: string = METRICS.requests.prometheus,
): string {
  return `sum by (outcome) (increase(${selector(metric, matchers)}[${promDuration(windowMs)}]))`;
}

/** Number of classic bucket series of the histogram seen over the last `rangeMs` (none: not a classic histogram). */
export function classicSeriesQuery(h: FleetHistogram, rangeMs: number): string {
  const s = selector(`${h.metric}_bucket`, [...h.matchers, { name: 'le', op: '!=', value: '' }]);
  return `count(last_over_time(${s}[${promDuration(rangeMs)}]))`;
}

/** The raw series under the histogram's base name over the last `rangeMs`: native histogram samples, or floats for a counter or gauge. */
export function baseSeriesQuery(h: FleetHistogram, rangeMs: number): string {
  return `last_over_time(${selector(h.metric, h.matchers)}[${promDuration(rangeMs)}])`;
}

/** Number of `<name>_count` series over the last `rangeMs`: a summary has them without `_bucket`. */
export function countSeriesQuery(h: FleetHistogram, rangeMs: number): string {
  return `count(last_over_time(${selector(`${h.metric}_count`, h.matchers)}[${promDuration(rangeMs)}]))`;
}

/**
 * Each process's configured read timeout for the dependency (`prazo_timeout_seconds{phase="read"}`),
 * one series per value of `by` (the scrape's `instance` and `job`).
 */
export function processTimeoutQuery(
  matchers: readonly LabelMatcher[],
  by: readonly string[] = ['instance', 'job'],
  metric: string = METRICS.timeoutSeconds.prometheus,
): string {
  return `max by (${by.join(', ')}) (${selector(metric, [...matchers, { name: 'phase', op: '=', value: 'read' }])})`;
}
