import { InvalidInputError } from '../../errors.js';
import { MAX_DURATION_MS } from '../../policy/calibrate.js';
import { LatencyHistogram } from '../histogram.js';
import type { LatencyFileWarning, LineParser, ParsedLatency } from './types.js';
import { parseDecimal, quote } from './values.js';

/** Options of {@link createPrometheusParser}. */
export interface PrometheusParserOptions {
  /**
   * Histogram to read (its base name, with or without `_bucket`), when the exposition holds several;
   * optionally with the labels of the series to read, `name{route="/checkout",code="200"}` (the series
   * that carry all of them are merged). `name{}` merges every series on purpose.
   */
  metric?: string;
}

interface Bucket {
  le: number;
  cumulative: number;
  line: number;
}

// name, optional {labels}, value, optional timestamp.
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?[ \t]+(\S+)(?:[ \t]+\S+)?[ \t]*$/;
/** Sub-points per bucket over which its count is spread (linear interpolation, as `histogram_quantile`). */
const POINTS_PER_BUCKET = 64;

/**
 * Parser for Prometheus text exposition (and OpenMetrics text) of a histogram: the
 * `<name>_bucket{le="…"}` lines. Other samples and comments are skipped; every series of the chosen
 * histogram (one per label set) is merged.
 *
 * Units come from the metric name: a base name ending in `_seconds` is in seconds, one ending in
 * `_milliseconds` or `_ms` in milliseconds; any other name is taken as seconds (Prometheus' base unit)
 * and a note says so. Within a bucket the calls are spread evenly between its bounds, the linear
 * interpolation `histogram_quantile()` uses, so prazo reads the p99 a Grafana panel shows; calls in the
 * `+Inf` bucket count at the largest finite bound (again as `histogram_quantile()`), with a note —
 * and with the warning `QUANTILE_ABOVE_LARGEST_BUCKET` when that puts the p99 (or a lower percentile)
 * there: the real value is somewhere above the bound. Several series with calls merged without a
 * label selector in `metric` raise `SERIES_MERGED`. Bucket counts are cumulative since the process
 * started, so the result is one untimed slice.
 *
 * @throws {InvalidInputError} naming the file, the line and the value: a malformed sample line, a `le`
 *   or count that is not a number, counts that are not cumulative, no histogram, or several histograms
 *   and no `metric` to choose one.
 */
export function createPrometheusParser(source: string, options: PrometheusParserOptions = {}): LineParser {
  // base name → series key (labels without `le`) → buckets
  const histograms = new Map<string, Map<string, Bucket[]>>();
  // base name + NUL + series key → the series' labels (without `le`), for label selectors
  const seriesLabels = new Map<string, Map<string, string>>();

  return {
    line(text, lineNumber) {
      const trimmed = text.trim();
      if (trimmed === '' || trimmed.startsWith('#')) return;
      const where = { source, line: lineNumber };
      const match = SAMPLE.exec(trimmed);
      if (match === null)
        throw new InvalidInputError(`not a Prometheus sample line: ${quote(trimmed)}`, where);
      const name = match[1]!;
      if (!name.endsWith('_bucket')) return;
      const labels = parseLabels(match[2] ?? '', where);
      const leText = labels.get('le');
      if (leText === undefined) return;
      labels.delete('le');
      const le = leText === '+Inf' || leText === 'Inf' ? Number.POSITIVE_INFINITY : parseDecimal(leText);
      if (le === undefined || le < 0 || (Number.isFinite(le) && le * 1000 > MAX_DURATION_MS)) {
        throw new InvalidInputError(`bucket bound le=${quote(leText)} is not a plausible latency`, where);
      }
      const valueText = match[3]!;
      const cumulative = parseDecimal(valueText);
      if (cumulative === undefined || cumulative < 0 || cumulative > Number.MAX_SAFE_INTEGER) {
        throw new InvalidInputError(`bucket count ${quote(valueText)} is not a number ≥ 0`, where);
      }
      const base = name.slice(0, -'_bucket'.length);
      let series = histograms.get(base);
      if (series === undefined) {
        series = new Map();
        histograms.set(base, series);
      }
      const key = [...labels]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      let buckets = series.get(key);
      if (buckets === undefined) {
        buckets = [];
        series.set(key, buckets);
        seriesLabels.set(`${base}\u0000${key}`, labels);
      }
      if (buckets.some((b) => b.le === le)) {
        throw new InvalidInputError(`duplicate bucket le=${quote(leText)} for ${base}{${key}}`, where);
      }
      buckets.push({ le, cumulative: Math.round(cumulative), line: lineNumber });
    },

    end(): ParsedLatency {
      const { base, selector } = chooseHistogram(histograms, options.metric, source);
      const chosen = selectSeries(
        base,
        histograms.get(base)!,
        selector,
        source,
        (key) => seriesLabels.get(`${base}\u0000${key}`)!,
      );
      const notes: string[] = [];
      const warnings: LatencyFileWarning[] = [];
      let scale = 1000;
      if (base.endsWith('_milliseconds') || base.endsWith('_ms')) scale = 1;
      else if (!base.endsWith('_seconds')) notes.push(`${base}: unit not in the name, read as seconds`);
      const histogram = new LatencyHistogram();
      let overflow = 0;
      let largestBound = 0;
      const withCalls: string[] = [];
      for (const [key, buckets] of chosen) {
        buckets.sort((a, b) => a.le - b.le);
        let previousBound = 0;
        let previousCount = 0;
        const finite = buckets.filter((b) => Number.isFinite(b.le));
        const top = finite.at(-1);
        if (top === undefined) {
          throw new InvalidInputError(`${base}{${key}} has no finite bucket bound`, {
            source,
            line: buckets[0]!.line,
          });
        }
        largestBound = Math.max(largestBound, top.le);
        for (const bucket of buckets) {
          const inBucket = bucket.cumulative - previousCount;
          if (inBucket < 0) {
            throw new InvalidInputError(
              `bucket counts of ${base}{${key}} are not cumulative: le=${bucket.le} has ${bucket.cumulative}, ` +
                `below ${previousCount}`,
              { source, line: bucket.line },
            );
          }
          if (Number.isFinite(bucket.le)) {
            spread(histogram, previousBound * scale, bucket.le * scale, inBucket);
            previousBound = bucket.le;
          } else {
            histogram.recordMany(top.le * scale, inBucket);
            overflow += inBucket;
          }
          previousCount = bucket.cumulative;
        }
        if (previousCount > 0) withCalls.push(key);
      }
      const total = histogram.count;
      if (overflow > 0) {
        notes.push(
          `${overflow} calls above the largest bucket (${largestBound * scale} ms) counted at that bound`,
        );
        const beyond = [50, 90, 95, 99].filter((q) => overflow > total * (1 - q / 100));
        if (beyond.length > 0) {
          const names = beyond.map((q) => `p${q}`).reverse();
          const share = `${((overflow / total) * 100).toFixed(1)} %`;
          warnings.push({
            code: 'QUANTILE_ABOVE_LARGEST_BUCKET',
            message:
              `${names.join(', ')} ${names.length === 1 ? 'falls' : 'fall'} in the +Inf bucket of ${base}: ` +
              `${overflow} of ${total} calls (${share}) are above the largest bucket (${largestBound * scale} ms), ` +
              `so ${names.length === 1 ? 'it lies' : 'they lie'} somewhere above that bound, not at it; a timeout ` +
              `from it would cut at least ${share} of the calls. Add larger buckets to the histogram.`,
          });
        }
      }
      if (selector === undefined && withCalls.length > 1) {
        const shown = withCalls.slice(0, 3).map((key) => `{${key}}`);
        if (withCalls.length > 3) shown.push(`and ${withCalls.length - 3} more`);
        warnings.push({
          code: 'SERIES_MERGED',
          message:
            `${withCalls.length} series of ${base} with calls were merged into one histogram (${shown.join(', ')}). ` +
            `Name the one to calibrate on with --metric '${base}{label="value"}', or merge on purpose with --metric '${base}{}'.`,
        });
      } else if (withCalls.length > 1) {
        notes.push(`${withCalls.length} series of ${base} merged`);
      }
      notes.push(
        'Prometheus buckets are cumulative since the process started: one slice, no healthy-window check',
      );
      return {
        slices: [{ startMs: 0, endMs: 0, count: total, errors: 0, histogram }],
        timed: false,
        notes,
        warnings,
      };
    },
  };
}

/**
 * Spreads `count` calls evenly over (lowMs, highMs]: the linear interpolation within a bucket that
 * `histogram_quantile()` uses (the fleet reader shares it).
 */
export function spread(histogram: LatencyHistogram, lowMs: number, highMs: number, count: number): void {
  if (count === 0) return;
  const points = Math.min(count, POINTS_PER_BUCKET);
  // Point i holds the calls whose rank falls in its share of the bucket: an even spread even when
  // `count` is not a multiple of `points`.
  let placed = 0;
  for (let i = 1; i <= points; i++) {
    const upTo = Math.round((count * i) / points);
    histogram.recordMany(lowMs + ((highMs - lowMs) * i) / points, upTo - placed);
    placed = upTo;
  }
}

/** The series of `base` that carry every label of `selector` (all of them without one). */
function selectSeries(
  base: string,
  series: Map<string, Bucket[]>,
  selector: Map<string, string> | undefined,
  source: string,
  labelsOf: (key: string) => Map<string, string>,
): Map<string, Bucket[]> {
  if (selector === undefined || selector.size === 0) return series;
  const chosen = new Map<string, Bucket[]>();
  for (const [key, buckets] of series) {
    const labels = labelsOf(key);
    if ([...selector].every(([name, value]) => labels.get(name) === value)) chosen.set(key, buckets);
  }
  if (chosen.size === 0) {
    const wanted = [...selector].map(([k, v]) => `${k}=${v}`).join(',');
    const found = [...series.keys()].slice(0, 5).map((key) => `{${key}}`);
    throw new InvalidInputError(`no series of ${base} has {${wanted}}; found ${found.join(', ')}`, {
      source,
    });
  }
  return chosen;
}

function chooseHistogram(
  histograms: Map<string, Map<string, Bucket[]>>,
  metricOption: string | undefined,
  source: string,
): { base: string; selector: Map<string, string> | undefined } {
  let metric = metricOption;
  let selector: Map<string, string> | undefined;
  const brace = metric?.indexOf('{') ?? -1;
  if (metric !== undefined && brace >= 0) {
    if (!metric.endsWith('}'))
      throw new InvalidInputError(
        `malformed metric selector ${quote(metric)}: expected name{label="value",…}`,
        {
          source,
        },
      );
    selector = parseLabels(metric.slice(brace + 1, -1), { source });
    metric = metric.slice(0, brace);
  }
  return { base: chooseName(histograms, metric, source), selector };
}

function chooseName(
  histograms: Map<string, Map<string, Bucket[]>>,
  metric: string | undefined,
  source: string,
): string {
  if (metric !== undefined) {
    const base = metric.endsWith('_bucket') ? metric.slice(0, -'_bucket'.length) : metric;
    if (!histograms.has(base)) {
      throw new InvalidInputError(
        `no histogram named ${quote(base)}; found ${[...histograms.keys()].join(', ') || 'none'}`,
        { source },
      );
    }
    return base;
  }
  const names = [...histograms.keys()];
  if (names.length === 0)
    throw new InvalidInputError('no histogram buckets (`_bucket{le="…"}` lines) found', { source });
  if (names.length > 1) {
    throw new InvalidInputError(`several histograms (${names.join(', ')}): choose one with --metric`, {
      source,
    });
  }
  return names[0]!;
}

/**
 * Parses the inside of `{…}`: `name="value"` pairs separated by commas, with `\\`, `\"` and `\n`
 * escapes in values.
 */
function parseLabels(text: string, where: { source: string; line?: number }): Map<string, string> {
  const labels = new Map<string, string>();
  let i = 0;
  const fail = (): never => {
    throw new InvalidInputError(
      `malformed labels {${text.length > 60 ? `${text.slice(0, 57)}...` : text}}`,
      where,
    );
  };
  const skipSpaces = () => {
    while (text[i] === ' ' || text[i] === '\t') i += 1;
  };
  while (true) {
    skipSpaces();
    if (i >= text.length) break;
    const nameMatch = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(text.slice(i));
    if (nameMatch === null) fail();
    const name = nameMatch![0];
    i += name.length;
    skipSpaces();
    if (text[i] !== '=') fail();
    i += 1;
    skipSpaces();
    if (text[i] !== '"') fail();
    i += 1;
    let value = '';
    while (true) {
      const ch = text[i];
      if (ch === undefined) fail();
      if (ch === '\\') {
        const next = text[i + 1];
        if (next === undefined) fail();
        value += next === 'n' ? '\n' : next;
        i += 2;
        continue;
      }
      if (ch === '"') break;
      value += ch;
      i += 1;
    }
    i += 1;
    labels.set(name, value);
    skipSpaces();
    if (i >= text.length) break;
    if (text[i] !== ',') fail();
    i += 1;
  }
  return labels;
}
