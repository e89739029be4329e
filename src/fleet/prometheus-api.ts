import type { Dispatcher } from 'undici';
import { InvalidOptionError, type PrometheusErrorContext, PrometheusUnavailableError } from '../errors.js';
import { numberIn } from '../option-checks.js';
import { undici } from '../transport/undici-module.js';
import {
  type InstantSample,
  parseApiAnswer,
  parseMatrix,
  parseVector,
  type RangeSeries,
} from './api-response.js';

/** Options of {@link createPrometheusApi}. */
export interface PrometheusApiOptions {
  /** Base URL of the Prometheus server, e.g. `http://127.0.0.1:9090` (a path prefix is kept). */
  url: string;
  /** Longest wait for one answer, ms; past it the read fails with `PROMETHEUS_UNAVAILABLE`. @default 10_000 */
  timeoutMs?: number;
  /** Extra request headers (an `Authorization` for a Prometheus behind a proxy …). @default {} */
  headers?: Readonly<Record<string, string>>;
}

/** Defaults of {@link PrometheusApiOptions}. */
export const PROMETHEUS_API_DEFAULTS = Object.freeze({ timeoutMs: 10_000 });

/** A range of evaluation times: from `startMs` to `endMs` every `stepMs` (epoch ms). */
export interface QueryRange {
  startMs: number;
  endMs: number;
  stepMs: number;
}

/** The two reads prazo makes from the Prometheus HTTP API. */
export interface PrometheusApi {
  /** Base URL, without a trailing slash. */
  readonly url: string;
  /** `/api/v1/query` at `atMs` (default: the server's now). */
  query(promql: string, options?: { atMs?: number; signal?: AbortSignal }): Promise<InstantSample[]>;
  /** `/api/v1/query_range` over `range`. */
  queryRange(promql: string, range: QueryRange, options?: { signal?: AbortSignal }): Promise<RangeSeries[]>;
}

/**
 * Validates {@link PrometheusApiOptions} and fills in the defaults.
 * @throws {InvalidOptionError} naming the option.
 */
export function normalizePrometheusApiOptions(
  options: PrometheusApiOptions,
): Required<PrometheusApiOptions> & { url: string } {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('options', 'an object with `url`', options);
  let parsed: URL | undefined;
  try {
    parsed = typeof options.url === 'string' ? new URL(options.url) : undefined;
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    throw new InvalidOptionError('url', 'an http(s) URL of a Prometheus server', options.url);
  const timeoutMs = options.timeoutMs ?? PROMETHEUS_API_DEFAULTS.timeoutMs;
  numberIn('timeoutMs', timeoutMs, { min: 1, max: 600_000 }, 'a number of ms from 1 to 600000');
  const headers = options.headers ?? {};
  if (typeof headers !== 'object' || headers === null)
    throw new InvalidOptionError('headers', 'an object of header strings', headers);
  const base = `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
  return { url: base, timeoutMs, headers };
}

let ownAgent: Dispatcher | undefined;

/**
 * The dispatcher of the Prometheus reads: the process's global one (whichever copy of undici, or
 * `install()`, set it), or, while there is none, one `Agent` of prazo's copy kept for these reads
 * (never made global: importing or using prazo sets no global dispatcher).
 */
function readDispatcher(): Dispatcher {
  const global = undici.getGlobalDispatcher();
  if (global !== undefined) return global;
  ownAgent ??= new undici.Agent();
  return ownAgent;
}

/**
 * A client of the Prometheus HTTP API over undici. Queries go as form-encoded POSTs (no URL length
 * limit); every answer is checked by `parseApiAnswer`, so a failure is always a typed
 * `PrometheusError` with a `code`. Nothing is kept open between reads.
 *
 * @throws {InvalidOptionError} for an invalid option.
 * @example
 * const api = createPrometheusApi({ url: 'http://127.0.0.1:9090' });
 * const [p99] = await api.query('histogram_quantile(0.99, sum by (le) (rate(prazo_attempt_duration_seconds_bucket[5m])))');
 */
export function createPrometheusApi(options: PrometheusApiOptions): PrometheusApi {
  const o = normalizePrometheusApiOptions(options);
  const post = async (
    path: string,
    form: Record<string, string>,
    promql: string,
    signal: AbortSignal | undefined,
  ): Promise<unknown> => {
    const context: PrometheusErrorContext = { url: o.url, query: promql };
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), o.timeoutMs);
    timer.unref();
    const onAbort = (): void => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await undici.request(`${o.url}${path}`, {
        dispatcher: readDispatcher(),
        method: 'POST',
        headers: {
          ...o.headers,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams(form).toString(),
        signal: controller.signal,
      });
      const text = await res.body.text();
      return parseApiAnswer(res.statusCode, text, context).data;
    } catch (error) {
      if (error instanceof Error && 'code' in error && String(error.code).startsWith('PROMETHEUS_'))
        throw error;
      const why = controller.signal.aborted
        ? signal?.aborted
          ? 'the read was cancelled'
          : `no answer within ${o.timeoutMs} ms`
        : describeNetworkError(error);
      throw new PrometheusUnavailableError(`cannot read Prometheus at ${o.url}: ${why}`, {
        ...context,
        cause: error,
      });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  };
  return {
    url: o.url,
    async query(promql, queryOptions = {}) {
      const form: Record<string, string> = { query: promql };
      if (queryOptions.atMs !== undefined) form['time'] = seconds(queryOptions.atMs);
      const data = await post('/api/v1/query', form, promql, queryOptions.signal);
      return parseVector(data, { url: o.url, query: promql });
    },
    async queryRange(promql, range, queryOptions = {}) {
      const form = {
        query: promql,
        start: seconds(range.startMs),
        end: seconds(range.endMs),
        step: seconds(range.stepMs),
      };
      const data = await post('/api/v1/query_range', form, promql, queryOptions.signal);
      return parseMatrix(data, { url: o.url, query: promql });
    },
  };
}

function seconds(ms: number): string {
  return String(ms / 1000);
}

function describeNetworkError(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const e = error as { code?: unknown; message?: unknown; cause?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  const message = typeof e.message === 'string' ? e.message : String(error);
  return code !== undefined && !message.includes(code) ? `${code}: ${message}` : message;
}
