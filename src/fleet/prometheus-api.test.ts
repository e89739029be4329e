import { afterEach, describe, expect, it } from 'vitest';
import { isPrazoError, type PrometheusErrorCode } from '../errors.js';
import {
  classicFleet,
  type FakeAnswer,
  type FakeRequest,
  matrix,
  type ScriptedStep,
  startFakePrometheus,
  vector,
} from './fake-prometheus.test-helper.js';
import { createPrometheusApi } from './prometheus-api.js';
import { readFleetLatency } from './read-fleet-latency.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function serve(answer: (req: FakeRequest) => FakeAnswer | 'hang') {
  const server = await startFakePrometheus(answer);
  closers.push(server.close);
  return server;
}

async function failure(promise: Promise<unknown>): Promise<Error & { code: string; query?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code: string };
  }
  throw new Error('expected a rejection');
}

const STEP = 60_000;
const END = 1_800_000_000_000;
/** Ten healthy steps around 40 ms, one with 400 ms answers, one with 20 % failures. */
function fleetSteps(): ScriptedStep[] {
  return Array.from({ length: 12 }, (_, i) => ({
    endMs: END - (11 - i) * STEP,
    buckets:
      i === 4 ? { '0.05': 500, '0.5': 500, '+Inf': 0 } : { '0.03': 300, '0.05': 690, '0.075': 10, '+Inf': 0 },
    failures: i === 8 ? 200 : 0,
  }));
}

describe('the Prometheus API client', () => {
  it('posts the query as a form and reads the answer', async () => {
    const server = await serve((req) =>
      req.path.endsWith('query_range') ? matrix([]) : vector([{ metric: { job: 'a' }, value: [1, '2'] }]),
    );
    const api = createPrometheusApi({ url: `${server.url}/` });
    expect(api.url).toBe(server.url);
    const samples = await api.query('up', { atMs: 1_700_000_000_000 });
    expect(samples).toEqual([{ labels: { job: 'a' }, atMs: 1000, value: 2 }]);
    expect(server.requests[0]).toMatchObject({ path: '/api/v1/query', query: 'up', time: '1700000000' });
    await api.queryRange('up', { startMs: 60_000, endMs: 120_000, stepMs: 30_000 });
    expect(server.requests[1]).toMatchObject({
      path: '/api/v1/query_range',
      start: '60',
      end: '120',
      step: '30',
    });
  });

  it.each<[string, (req: FakeRequest) => FakeAnswer, PrometheusErrorCode, RegExp]>([
    [
      'an HTTP error',
      () => ({ status: 500, body: 'internal error' }),
      'PROMETHEUS_HTTP_ERROR',
      /HTTP 500: internal error/,
    ],
    [
      'status: error',
      () => ({ status: 400, body: JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'bad' }) }),
      'PROMETHEUS_QUERY_ERROR',
      /\(bad_data\): bad/,
    ],
    [
      'a body that is not the API',
      () => ({ status: 200, body: 'hello' }),
      'PROMETHEUS_BAD_RESPONSE',
      /not an answer/,
    ],
    [
      'a matrix where a vector is due',
      () => matrix([]),
      'PROMETHEUS_BAD_RESPONSE',
      /expected resultType "vector"/,
    ],
  ])('fails on %s with a typed error naming the query', async (_what, answer, code, message) => {
    const server = await serve(answer);
    const error = await failure(createPrometheusApi({ url: server.url }).query('up'));
    expect(isPrazoError(error, code)).toBe(true);
    expect(error.message).toMatch(message);
    expect(error.query).toBe('up');
  });

  it('fails with PROMETHEUS_UNAVAILABLE when nothing listens', async () => {
    const server = await serve(() => vector([]));
    await server.close();
    const error = await failure(createPrometheusApi({ url: server.url }).query('up'));
    expect(error.code).toBe('PROMETHEUS_UNAVAILABLE');
    expect(error.message).toMatch(/cannot read Prometheus at http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/);
  });

  it('gives up on a server that does not answer after timeoutMs', async () => {
    const server = await serve(() => 'hang');
    const t0 = performance.now();
    const error = await failure(createPrometheusApi({ url: server.url, timeoutMs: 200 }).query('up'));
    expect(error.code).toBe('PROMETHEUS_UNAVAILABLE');
    expect(error.message).toMatch(/no answer within 200 ms/);
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  it('stops when the caller cancels', async () => {
    const server = await serve(() => 'hang');
    const controller = new AbortController();
    const pending = createPrometheusApi({ url: server.url }).query('up', { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    const error = await failure(pending);
    expect(error.code).toBe('PROMETHEUS_UNAVAILABLE');
    expect(error.message).toMatch(/cancelled/);
  });

  it.each([
    [{ url: 'ftp://x' }, 'url'],
    [{ url: 'not a url' }, 'url'],
    [{ url: 'http://x', timeoutMs: 0 }, 'timeoutMs'],
  ])('refuses options %j naming %s', (options, option) => {
    expect(() => createPrometheusApi(options)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', option }),
    );
  });
});

describe('readFleetLatency over HTTP', () => {
  it('calibrates on the healthy steps and names each excluded one', async () => {
    const server = await serve(classicFleet(fleetSteps()));
    const report = await readFleetLatency(createPrometheusApi({ url: server.url }), {
      dependency: 'payments',
      match: 'job="checkout"',
      rangeMs: 12 * STEP,
      stepMs: STEP,
      endMs: END + 1234,
    });
    expect(report.kind).toBe('classic');
    expect(report.endMs).toBe(END);
    expect(report.slices).toHaveLength(12);
    expect(report.selection.excluded.map((s) => [s.endMs, s.reason])).toEqual([
      [END - 7 * STEP, 'p99-outlier'],
      [END - 3 * STEP, 'error-rate'],
    ]);
    const p99 = report.selection.histogram.percentile(99);
    expect(p99).toBeGreaterThan(50);
    expect(p99).toBeLessThanOrEqual(75);
    const range = server.requests.find((r) => r.query.startsWith('sum by (le)'));
    expect(range).toMatchObject({
      start: String((END - 11 * STEP) / 1000),
      end: String(END / 1000),
      step: '60',
    });
    expect(range?.query).toBe(
      'sum by (le) (increase(prazo_attempt_duration_seconds_bucket{dependency="payments",job="checkout"}[60s]))',
    );
    expect(report.prometheusP99Ms[0]).toEqual({ endMs: END - 11 * STEP, p99Ms: 50 });
  });

  it.each<[string, (req: FakeRequest) => FakeAnswer, PrometheusErrorCode, RegExp]>([
    [
      'empty vectors (no such series)',
      () => vector([]),
      'PROMETHEUS_NO_DATA',
      /no series prazo_attempt_duration_seconds_bucket\{dependency="payments"\} or prazo_attempt_duration_seconds\{dependency="payments"\}/,
    ],
    [
      'a counter under the name',
      (req) =>
        req.query.startsWith('last_over_time(') ? vector([{ metric: {}, value: [1, '5'] }]) : vector([]),
      'PROMETHEUS_WRONG_METRIC_TYPE',
      /holds plain numbers \(a counter or gauge\), not a histogram/,
    ],
    [
      'a summary under the name',
      (req) => (req.query.includes('_count') ? vector([{ metric: {}, value: [1, '3'] }]) : vector([])),
      'PROMETHEUS_WRONG_METRIC_TYPE',
      /is a summary .* cannot be added across processes/,
    ],
    [
      'a NaN quantile on a step with calls',
      (req) => {
        const steps = fleetSteps();
        steps[2]!.p99 = 'NaN';
        return classicFleet(steps)(req);
      },
      'PROMETHEUS_NOT_FINITE',
      /histogram_quantile\(0\.99, …\) is NaN for the step ending .* which holds 1000 calls/,
    ],
    [
      'an infinite quantile',
      (req) => {
        const steps = fleetSteps();
        steps[5]!.p99 = '+Inf';
        return classicFleet(steps)(req);
      },
      'PROMETHEUS_NOT_FINITE',
      /is Infinity/,
    ],
    [
      'buckets with no calls in the range',
      (req) =>
        classicFleet([
          { endMs: END, buckets: { '0.05': 0, '+Inf': 0 } },
          { endMs: END - STEP, buckets: { '0.05': 0, '+Inf': 0 } },
        ])(req),
      'PROMETHEUS_NO_DATA',
      /no calls of prazo_attempt_duration_seconds\{dependency="payments"\} between/,
    ],
  ])('fails on %s with a clear typed error', async (_what, answer, code, message) => {
    const server = await serve(answer);
    const error = await failure(
      readFleetLatency(createPrometheusApi({ url: server.url }), {
        dependency: 'payments',
        rangeMs: 12 * STEP,
        stepMs: STEP,
        endMs: END,
      }),
    );
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
  });

  it('reads a native histogram when the server has one', async () => {
    const histogram = (n: number) => ({
      count: String(n),
      sum: '1',
      buckets: [[0, '0.02', '0.025', String(n)]],
    });
    const server = await serve((req) => {
      if (req.query.startsWith('count(')) return vector([]);
      if (req.query.startsWith('last_over_time('))
        return vector([{ metric: {}, histogram: [1, histogram(10)] }]);
      if (req.query.startsWith('sum(increase('))
        return matrix([{ metric: {}, histograms: [[END / 1000, histogram(500)]] }]);
      if (req.query.startsWith('sum(histogram_count('))
        return matrix([{ metric: {}, values: [[END / 1000, '5']] }]);
      if (req.query.startsWith('histogram_quantile('))
        return matrix([{ metric: {}, values: [[END / 1000, '0.0249']] }]);
      return { status: 400, body: '{"status":"error","errorType":"bad_data","error":"unscripted"}' };
    });
    const report = await readFleetLatency(createPrometheusApi({ url: server.url }), {
      metric: 'http_client_request_duration_seconds',
      errorMatch: 'status_code=~"5.."',
      rangeMs: STEP,
      stepMs: STEP,
      endMs: END,
    });
    expect(report.kind).toBe('native');
    expect(report.queries.p99).toBe(
      'histogram_quantile(0.99, sum(rate(http_client_request_duration_seconds[60s])))',
    );
    expect(report.queries.errors).toBe(
      'sum(histogram_count(increase(http_client_request_duration_seconds{status_code=~"5.."}[60s])))',
    );
    expect(report.slices[0]).toMatchObject({ count: 500, errors: 5 });
    expect(report.selection.histogram.percentile(99)).toBeCloseTo(24.9, 0);
  });

  it('says when no error counter was read', async () => {
    const server = await serve((req) =>
      classicFleet(fleetSteps())({
        ...req,
        query: req.query.replace('http_client_request_duration_seconds', 'x'),
      }),
    );
    const report = await readFleetLatency(createPrometheusApi({ url: server.url }), {
      metric: 'http_client_request_duration_seconds_bucket',
      rangeMs: 12 * STEP,
      stepMs: STEP,
      endMs: END,
    });
    expect(report.metric).toBe('http_client_request_duration_seconds');
    expect(report.notes.join(' ')).toMatch(/no error counter: the error-rate rule was not applied/);
    expect(report.selection.excluded.map((s) => s.reason)).toEqual(['p99-outlier']);
  });

  it.each([
    [{ rangeMs: STEP, stepMs: 1500 }, 'stepMs'],
    [{ rangeMs: 1000, stepMs: 60_000 }, 'rangeMs'],
    [{ rangeMs: 20_000 * 1000, stepMs: 1000 }, 'rangeMs'],
    [{ metric: 'x' }, 'dependency'],
    [{ errorMatch: 'a="b"' }, 'errorMatch'],
    [{ kind: 'exponential' }, 'kind'],
  ])('refuses %j naming %s', async (extra, option) => {
    const api = createPrometheusApi({ url: 'http://127.0.0.1:9' });
    await expect(readFleetLatency(api, { dependency: 'payments', ...extra } as never)).rejects.toMatchObject({
      code: 'INVALID_OPTION',
      option,
    });
  });
});
