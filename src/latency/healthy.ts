import { integerIn, numberIn } from '../option-checks.js';
import { LatencyHistogram } from './histogram.js';

/** What one time slice of latency data holds. */
export interface SliceStats {
  /** Start of the slice, epoch ms (inclusive). */
  startMs: number;
  /** End of the slice, epoch ms (exclusive). */
  endMs: number;
  /** Requests that ended in the slice (successes and errors). */
  count: number;
  /** Requests of `count` that failed (timeouts, 5xx, connection errors). */
  errors: number;
  /** Latencies recorded in the slice. */
  histogram: LatencyHistogram;
}

/**
 * The rule that decides which slices describe the dependency's *healthy* behaviour.
 *
 * A slice is excluded, in this order, when
 * 1. it holds fewer than `minSamples` requests (`too-few-samples`: its p99 would be noise);
 * 2. its error rate is above `maxErrorRate` (`error-rate`: the dependency was failing);
 * 3. its p99 is above `p99Factor` × the median p99 of the slices that passed 1 and 2 (`p99-outlier`:
 *    the dependency was slow). The median is the lower median, so with two slices the faster wins.
 *
 * @see The article: calibrating on a window with degradation in it inflates p99 and yields a timeout
 * that protects nothing.
 */
export interface HealthRule {
  /** Highest error share of a healthy slice. @default 0.05 */
  maxErrorRate: number;
  /** How far above the median slice p99 a healthy slice's p99 may be. @default 2 */
  p99Factor: number;
  /** Fewest requests a slice needs to be judged. @default 20 */
  minSamples: number;
}

/** Defaults of {@link HealthRule}. */
export const HEALTH_RULE_DEFAULTS: Readonly<HealthRule> = Object.freeze({
  maxErrorRate: 0.05,
  p99Factor: 2,
  minSamples: 20,
});

/** A slice as reported by {@link selectHealthy}. */
export interface SliceSummary {
  startMs: number;
  endMs: number;
  count: number;
  errors: number;
  errorRate: number;
  p50Ms: number;
  p99Ms: number;
}

/** Why a slice was left out of the healthy histogram. */
export type ExclusionReason = 'error-rate' | 'p99-outlier' | 'too-few-samples';

/** The outcome of {@link selectHealthy}. */
export interface HealthySelection {
  /** Merged histogram of the healthy slices (empty when none is healthy). */
  histogram: LatencyHistogram;
  included: SliceSummary[];
  excluded: Array<SliceSummary & { reason: ExclusionReason; detail: string }>;
  /** The reference p99 the slices were judged against, when it was given and below their median p99. */
  anchoredTo?: number;
}

/**
 * Validates and completes a partial {@link HealthRule}.
 * @throws {InvalidOptionError} naming the option.
 */
export function normalizeHealthRule(rule: Partial<HealthRule> = {}, prefix = ''): HealthRule {
  const merged = { ...HEALTH_RULE_DEFAULTS, ...stripUndefined(rule) };
  numberIn(`${prefix}maxErrorRate`, merged.maxErrorRate, { min: 0, max: 1 }, 'a number between 0 and 1');
  numberIn(`${prefix}p99Factor`, merged.p99Factor, { min: 1 }, 'a finite number ≥ 1');
  integerIn(`${prefix}minSamples`, merged.minSamples, 1, Number.POSITIVE_INFINITY, 'an integer ≥ 1');
  return merged;
}

/**
 * Splits slices into healthy and excluded ones by {@link HealthRule} and merges the healthy ones.
 * Empty slices are ignored (neither included nor excluded).
 *
 * `referenceP99Ms`, when given, is a p99 known to be healthy (a calibrated profile): a slice's p99 is
 * then judged against the lower of the median slice p99 and that reference, so that slices which
 * are all slow — a window holding little but an incident, as after a capacity drop or through a slow
 * tail — are not taken for the dependency's healthy behaviour because nothing faster is left to
 * compare them with.
 */
export function selectHealthy(
  slices: readonly SliceStats[],
  rule?: Partial<HealthRule>,
  referenceP99Ms?: number,
): HealthySelection {
  const r = normalizeHealthRule(rule);
  const excluded: HealthySelection['excluded'] = [];
  const candidates: Array<{ slice: SliceStats; summary: SliceSummary }> = [];
  for (const slice of slices) {
    if (slice.count === 0) continue;
    const [p50Ms = 0, p99Ms = 0] = slice.histogram.percentiles([50, 99]);
    const errorRate = slice.errors / slice.count;
    const summary: SliceSummary = {
      startMs: slice.startMs,
      endMs: slice.endMs,
      count: slice.count,
      errors: slice.errors,
      errorRate,
      p50Ms,
      p99Ms,
    };
    if (slice.count < r.minSamples) {
      excluded.push({
        ...summary,
        reason: 'too-few-samples',
        detail: `${slice.count} requests, fewer than ${r.minSamples}`,
      });
    } else if (errorRate > r.maxErrorRate) {
      excluded.push({
        ...summary,
        reason: 'error-rate',
        detail: `error rate ${pct(errorRate)} above ${pct(r.maxErrorRate)}`,
      });
    } else {
      candidates.push({ slice, summary });
    }
  }
  const p99s = candidates.map((c) => c.summary.p99Ms).sort((a, b) => a - b);
  const sliceMedian = p99s[Math.floor((p99s.length - 1) / 2)] ?? 0;
  const anchored = referenceP99Ms !== undefined && referenceP99Ms > 0 && referenceP99Ms < sliceMedian;
  const median = anchored ? referenceP99Ms : sliceMedian;
  const histogram = new LatencyHistogram();
  const included: SliceSummary[] = [];
  for (const { slice, summary } of candidates) {
    if (summary.p99Ms > median * r.p99Factor) {
      excluded.push({
        ...summary,
        reason: 'p99-outlier',
        detail: anchored
          ? `p99 ${round(summary.p99Ms)} ms above ${r.p99Factor} × the calibrated p99 (${round(median)} ms), which is below the median slice p99`
          : `p99 ${round(summary.p99Ms)} ms above ${r.p99Factor} × the median slice p99 (${round(median)} ms)`,
      });
    } else {
      included.push(summary);
      histogram.merge(slice.histogram);
    }
  }
  excluded.sort((a, b) => a.startMs - b.startMs);
  return anchored ? { histogram, included, excluded, anchoredTo: median } : { histogram, included, excluded };
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)} %`;
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}
