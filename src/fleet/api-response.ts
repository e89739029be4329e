import {
  PrometheusBadResponseError,
  type PrometheusErrorContext,
  PrometheusHttpError,
  PrometheusQueryError,
} from '../errors.js';

/** One bucket of a native histogram sample: its bounds (in the metric's unit) and its count. */
export interface NativeBucket {
  lower: number;
  upper: number;
  count: number;
}

/** A native histogram sample as the HTTP API returns it. */
export interface NativeHistogramSample {
  count: number;
  sum: number;
  buckets: NativeBucket[];
}

/** One series of a range query: its labels, float samples and native histogram samples. */
export interface RangeSeries {
  labels: Record<string, string>;
  /** Float samples, time in epoch ms. NaN and ±Inf are kept as such (the caller decides). */
  values: Array<{ atMs: number; value: number }>;
  histograms: Array<{ atMs: number; histogram: NativeHistogramSample }>;
}

/** One series of an instant query: a float or a native histogram sample. */
export interface InstantSample {
  labels: Record<string, string>;
  atMs: number;
  value?: number;
  histogram?: NativeHistogramSample;
}

/** The `data` of a successful answer, still untyped, with the server's warnings. */
export interface ApiSuccess {
  data: unknown;
  warnings: string[];
}

/**
 * Reads one answer of the Prometheus HTTP API (`/api/v1/query`, `/api/v1/query_range`).
 *
 * @throws {PrometheusQueryError} for `status: "error"` (whatever the HTTP status), with its `errorType`.
 * @throws {PrometheusHttpError} for any other non-2xx status.
 * @throws {PrometheusBadResponseError} for a 2xx answer that is not the API's JSON envelope.
 */
export function parseApiAnswer(
  httpStatus: number,
  body: string,
  context: PrometheusErrorContext,
): ApiSuccess {
  let parsed: unknown;
  let json = true;
  try {
    parsed = JSON.parse(body);
  } catch {
    json = false;
  }
  const envelope = json && isObject(parsed) ? parsed : undefined;
  if (envelope?.['status'] === 'error') {
    const errorType = typeof envelope['errorType'] === 'string' ? envelope['errorType'] : 'unknown';
    const message = typeof envelope['error'] === 'string' ? envelope['error'] : 'no message';
    throw new PrometheusQueryError(`Prometheus refused the query (${errorType}): ${message}`, {
      ...context,
      errorType,
    });
  }
  if (httpStatus < 200 || httpStatus > 299) {
    throw new PrometheusHttpError(`Prometheus answered HTTP ${httpStatus}: ${excerpt(body)}`, {
      ...context,
      status: httpStatus,
    });
  }
  if (envelope === undefined || envelope['status'] !== 'success' || !('data' in envelope)) {
    throw new PrometheusBadResponseError(
      `not an answer of the Prometheus HTTP API (expected {"status":"success","data":…}): ${excerpt(body)}`,
      context,
    );
  }
  const warnings = Array.isArray(envelope['warnings'])
    ? envelope['warnings'].filter((w): w is string => typeof w === 'string')
    : [];
  return { data: envelope['data'], warnings };
}

/**
 * The series of a range query's `data` (`resultType: "matrix"`).
 * @throws {PrometheusBadResponseError} for another result type or a malformed series or sample.
 */
export function parseMatrix(data: unknown, context: PrometheusErrorContext): RangeSeries[] {
  const result = resultOf(data, 'matrix', context);
  return result.map((item, i) => {
    if (!isObject(item)) throw bad(`result[${i}] is not an object`, context);
    const values = optionalArray(item['values'], `result[${i}].values`, context).map((pair, j) => {
      const [atMs, text] = samplePair(pair, `result[${i}].values[${j}]`, context);
      return { atMs, value: parseSampleValue(text, `result[${i}].values[${j}]`, context) };
    });
    const histograms = optionalArray(item['histograms'], `result[${i}].histograms`, context).map(
      (pair, j) => {
        const where = `result[${i}].histograms[${j}]`;
        if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'number')
          throw bad(`${where} is not a [time, histogram] pair`, context);
        return { atMs: Math.round(pair[0] * 1000), histogram: parseNativeHistogram(pair[1], where, context) };
      },
    );
    return { labels: labelsOf(item['metric'], `result[${i}].metric`, context), values, histograms };
  });
}

/**
 * The samples of an instant query's `data` (`resultType: "vector"`, or `"scalar"` as one sample
 * without labels).
 * @throws {PrometheusBadResponseError} for another result type or a malformed sample.
 */
export function parseVector(data: unknown, context: PrometheusErrorContext): InstantSample[] {
  if (isObject(data) && data['resultType'] === 'scalar') {
    const [atMs, text] = samplePair(data['result'], 'result', context);
    return [{ labels: {}, atMs, value: parseSampleValue(text, 'result', context) }];
  }
  const result = resultOf(data, 'vector', context);
  return result.map((item, i) => {
    if (!isObject(item)) throw bad(`result[${i}] is not an object`, context);
    const labels = labelsOf(item['metric'], `result[${i}].metric`, context);
    if ('histogram' in item) {
      const pair = item['histogram'];
      if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'number')
        throw bad(`result[${i}].histogram is not a [time, histogram] pair`, context);
      return {
        labels,
        atMs: Math.round(pair[0] * 1000),
        histogram: parseNativeHistogram(pair[1], `result[${i}].histogram`, context),
      };
    }
    const [atMs, text] = samplePair(item['value'], `result[${i}].value`, context);
    return { labels, atMs, value: parseSampleValue(text, `result[${i}].value`, context) };
  });
}

/**
 * A sample value as the API writes it: a decimal string, `NaN`, `+Inf` or `-Inf`.
 * @throws {PrometheusBadResponseError} for anything else.
 */
export function parseSampleValue(text: unknown, where: string, context: PrometheusErrorContext): number {
  if (typeof text !== 'string') throw bad(`${where}: the value is not a string`, context);
  if (text === 'NaN') return Number.NaN;
  if (text === '+Inf' || text === 'Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  const value = text.trim() === '' ? Number.NaN : Number(text);
  if (Number.isNaN(value)) throw bad(`${where}: ${JSON.stringify(text)} is not a number`, context);
  return value;
}

function parseNativeHistogram(
  value: unknown,
  where: string,
  context: PrometheusErrorContext,
): NativeHistogramSample {
  if (!isObject(value)) throw bad(`${where} is not a histogram object`, context);
  const count = parseSampleValue(value['count'], `${where}.count`, context);
  const sum = parseSampleValue(value['sum'], `${where}.sum`, context);
  const buckets = optionalArray(value['buckets'], `${where}.buckets`, context).map((b, k) => {
    const at = `${where}.buckets[${k}]`;
    if (!Array.isArray(b) || b.length !== 4 || typeof b[0] !== 'number')
      throw bad(`${at} is not a [boundary rule, lower, upper, count] bucket`, context);
    return {
      lower: parseSampleValue(b[1], `${at} lower bound`, context),
      upper: parseSampleValue(b[2], `${at} upper bound`, context),
      count: parseSampleValue(b[3], `${at} count`, context),
    };
  });
  return { count, sum, buckets };
}

function resultOf(data: unknown, type: 'matrix' | 'vector', context: PrometheusErrorContext): unknown[] {
  if (!isObject(data)) throw bad('`data` is not an object', context);
  if (data['resultType'] !== type)
    throw bad(
      `expected resultType ${JSON.stringify(type)}, got ${JSON.stringify(data['resultType'])}`,
      context,
    );
  const result = data['result'];
  if (!Array.isArray(result)) throw bad('`data.result` is not an array', context);
  return result;
}

function samplePair(pair: unknown, where: string, context: PrometheusErrorContext): [number, unknown] {
  if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'number' || !Number.isFinite(pair[0]))
    throw bad(`${where} is not a [time, "value"] pair`, context);
  return [Math.round(pair[0] * 1000), pair[1]];
}

function labelsOf(value: unknown, where: string, context: PrometheusErrorContext): Record<string, string> {
  if (value === undefined) return {};
  if (!isObject(value)) throw bad(`${where} is not an object of labels`, context);
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw bad(`${where}.${k} is not a string`, context);
    labels[k] = v;
  }
  return labels;
}

function optionalArray(value: unknown, where: string, context: PrometheusErrorContext): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw bad(`${where} is not an array`, context);
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function bad(message: string, context: PrometheusErrorContext): PrometheusBadResponseError {
  return new PrometheusBadResponseError(`unexpected answer from Prometheus: ${message}`, context);
}

function excerpt(body: string): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  if (flat === '') return '(empty body)';
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}
