import {
  PrometheusBadResponseError,
  type PrometheusErrorContext,
  PrometheusNotFiniteError,
} from '../errors.js';
import { spread } from '../latency/formats/prometheus.js';
import type { SliceStats } from '../latency/healthy.js';
import { LatencyHistogram } from '../latency/histogram.js';
import type { RangeSeries } from './api-response.js';
import type { HistogramKind } from './promql.js';

/** Calls and failed calls per step end (epoch ms), read from counters. */
export interface StepCounts {
  total: ReadonlyMap<number, number>;
  errors: ReadonlyMap<number, number>;
}

/** Input of {@link buildFleetSlices}. */
export interface FleetSliceInput {
  kind: HistogramKind;
  /** The answer of `bucketIncreaseQuery` over the range: per `le` (classic) or one native series. */
  buckets: readonly RangeSeries[];
  /** Length of a step, ms: each sample at time t describes (t − stepMs, t]. */
  stepMs: number;
  /** Factor from the histogram's unit to ms (1000 for `_seconds`). */
  scaleToMs: number;
  /**
   * Calls and errors per step from counters; without it a step's calls are the histogram's own count
   * and no call counts as failed.
   */
  counts?: StepCounts | undefined;
  /** Where the data came from, for errors. */
  context: PrometheusErrorContext;
}

/** What {@link buildFleetSlices} made of the answers. */
export interface FleetSlices {
  /** One slice per step that holds calls, oldest first. */
  slices: SliceStats[];
  /** Calls above the largest finite bucket bound, counted at that bound (as `histogram_quantile`). */
  overflow: number;
  /** Largest finite bucket bound seen, ms. */
  largestBoundMs: number;
}

/**
 * Turns the per-step bucket increases of a fleet histogram into time slices the health rule can judge
 * (`selectHealthy`, the same rule as for files and the live window).
 *
 * Within a bucket the calls are spread evenly between its bounds — the linear interpolation of
 * `histogram_quantile()`, so a slice's p99 is the one a Grafana panel shows for that step. Counts are
 * rounded to whole calls (`increase()` extrapolates to the window's edges); a cumulative count that
 * dips below the previous bound's (series of the fleet starting at different times) is raised to it.
 *
 * @throws {PrometheusNotFiniteError} for a NaN or infinite bucket count.
 * @throws {PrometheusBadResponseError} for a classic series without a usable `le` label.
 */
export function buildFleetSlices(input: FleetSliceInput): FleetSlices {
  const byTime = new Map<number, LatencyHistogram>();
  const histogramAt = (atMs: number): LatencyHistogram => {
    let h = byTime.get(atMs);
    if (h === undefined) {
      h = new LatencyHistogram();
      byTime.set(atMs, h);
    }
    return h;
  };
  let overflow = 0;
  let largestBoundMs = 0;
  const finite = (value: number, what: string): number => {
    if (!Number.isFinite(value))
      throw new PrometheusNotFiniteError(`${what} is ${String(value)}, not a count of calls`, {
        ...input.context,
        value: String(value),
      });
    return Math.max(0, Math.round(value));
  };

  if (input.kind === 'classic') {
    const byLe = input.buckets.map((series) => {
      const text = series.labels['le'];
      const le = text === '+Inf' || text === 'Inf' ? Number.POSITIVE_INFINITY : Number(text);
      if (text === undefined || text === '' || Number.isNaN(le) || le < 0)
        throw new PrometheusBadResponseError(
          `a bucket series has le=${JSON.stringify(text)}: expected the answer of sum by (le) (…)`,
          input.context,
        );
      return { le, series };
    });
    byLe.sort((a, b) => a.le - b.le);
    const cumulativeAt = new Map<number, Array<{ le: number; cumulative: number }>>();
    for (const { le, series } of byLe) {
      for (const { atMs, value } of series.values) {
        let list = cumulativeAt.get(atMs);
        if (list === undefined) {
          list = [];
          cumulativeAt.set(atMs, list);
        }
        list.push({ le, cumulative: finite(value, `the increase of bucket le=${series.labels['le']}`) });
      }
    }
    const top = byLe.filter((b) => Number.isFinite(b.le)).at(-1)?.le;
    if (top !== undefined) largestBoundMs = top * input.scaleToMs;
    for (const [atMs, buckets] of cumulativeAt) {
      const h = histogramAt(atMs);
      let previousBound = 0;
      let previous = 0;
      for (const { le, cumulative } of buckets) {
        const reached = Math.max(previous, cumulative);
        const inBucket = reached - previous;
        if (Number.isFinite(le)) {
          spread(h, previousBound * input.scaleToMs, le * input.scaleToMs, inBucket);
          previousBound = le;
        } else if (inBucket > 0) {
          h.recordMany(previousBound * input.scaleToMs, inBucket);
          overflow += inBucket;
        }
        previous = reached;
      }
    }
  } else {
    for (const series of input.buckets) {
      for (const { atMs, histogram } of series.histograms) {
        const h = histogramAt(atMs);
        for (const b of histogram.buckets) {
          const n = finite(b.count, 'a native bucket count');
          const upperMs = Math.max(0, b.upper) * input.scaleToMs;
          largestBoundMs = Math.max(largestBoundMs, upperMs);
          spread(h, Math.max(0, b.lower) * input.scaleToMs, upperMs, n);
        }
      }
    }
  }

  const slices: SliceStats[] = [];
  for (const atMs of [...byTime.keys()].sort((a, b) => a - b)) {
    const histogram = byTime.get(atMs)!;
    const counted = input.counts?.total.get(atMs);
    const count = counted === undefined ? histogram.count : finite(counted, 'a step’s request count');
    const failed = input.counts?.errors.get(atMs);
    const errors = failed === undefined ? 0 : Math.min(count, finite(failed, 'a step’s error count'));
    if (count === 0 && histogram.count === 0) continue;
    slices.push({ startMs: atMs - input.stepMs, endMs: atMs, count, errors, histogram });
  }
  return { slices, overflow, largestBoundMs };
}

/**
 * Calls and errors per step from the answer of `requestOutcomeQuery` (series by `outcome`): `failure`
 * counts as an error, every outcome as a call.
 */
export function countsByOutcome(series: readonly RangeSeries[]): StepCounts {
  const total = new Map<number, number>();
  const errors = new Map<number, number>();
  for (const s of series) {
    const failed = s.labels['outcome'] === 'failure';
    for (const { atMs, value } of s.values) {
      total.set(atMs, (total.get(atMs) ?? 0) + value);
      if (failed) errors.set(atMs, (errors.get(atMs) ?? 0) + value);
    }
  }
  return { total, errors };
}

/** Values of a single-series answer by time (the sum over no series is no value). */
export function valuesByTime(series: readonly RangeSeries[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const s of series) for (const { atMs, value } of s.values) out.set(atMs, (out.get(atMs) ?? 0) + value);
  return out;
}

/**
 * Factor from a histogram's unit to ms, read from its name as Prometheus names units: `_seconds` →
 * 1000, `_milliseconds` / `_ms` → 1; anything else is read as seconds (Prometheus' base unit) and
 * `note` says so.
 */
export function unitScale(metric: string): { scaleToMs: number; note?: string } {
  if (metric.endsWith('_milliseconds') || metric.endsWith('_ms')) return { scaleToMs: 1 };
  if (metric.endsWith('_seconds')) return { scaleToMs: 1000 };
  return { scaleToMs: 1000, note: `${metric}: unit not in the name, read as seconds` };
}
