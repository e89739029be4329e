import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPrazoError } from '../errors.js';
import type { RangeSeries } from './api-response.js';
import { buildFleetSlices, countsByOutcome, unitScale } from './fleet-slices.js';

const context = { url: 'http://prometheus.test:9090', query: 'q' };
const BOUNDS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5];

/** Classic bucket series (cumulative per step) from calls per bucket, one array per step. */
function classic(steps: number[][], stepMs = 10_000): RangeSeries[] {
  const les = [...BOUNDS.map(String), '+Inf'];
  return les.map((le, i) => ({
    labels: { le },
    values: steps.map((calls, s) => ({
      atMs: (s + 1) * stepMs,
      value: calls.slice(0, i + 1).reduce((a, b) => a + b, 0),
    })),
    histograms: [],
  }));
}

/** histogram_quantile's own rule (linear within the bucket holding the rank), as the oracle. */
function histogramQuantile(q: number, calls: number[]): number {
  const total = calls.reduce((a, b) => a + b, 0);
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < BOUNDS.length; i++) {
    const inBucket = calls[i] ?? 0;
    if (seen + inBucket >= rank && inBucket > 0) {
      const lower = i === 0 ? 0 : BOUNDS[i - 1]!;
      return lower + (BOUNDS[i]! - lower) * ((rank - seen) / inBucket);
    }
    seen += inBucket;
  }
  return BOUNDS.at(-1)!;
}

describe('buildFleetSlices', () => {
  it('gives each step the p99 histogram_quantile gives it, in ms', () => {
    const steps = [
      [100, 300, 500, 80, 15, 5, 0],
      [0, 50, 900, 40, 9, 1, 0],
    ];
    const { slices } = buildFleetSlices({
      kind: 'classic',
      buckets: classic(steps),
      stepMs: 10_000,
      scaleToMs: 1000,
      context,
    });
    expect(slices.map((s) => [s.startMs, s.endMs, s.count])).toEqual([
      [0, 10_000, 1000],
      [10_000, 20_000, 1000],
    ]);
    steps.forEach((calls, i) => {
      const expected = histogramQuantile(0.99, calls) * 1000;
      expect(Math.abs(slices[i]!.histogram.percentile(99) - expected)).toBeLessThanOrEqual(expected * 0.02);
    });
  });

  it('matches histogram_quantile within 2 % plus one spread point for any bucket counts', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2000 }), { minLength: 6, maxLength: 6 }), (calls) => {
        const total = calls.reduce((a, b) => a + b, 0);
        fc.pre(total >= 100);
        const { slices } = buildFleetSlices({
          kind: 'classic',
          buckets: classic([[...calls, 0]]),
          stepMs: 1000,
          scaleToMs: 1000,
          context,
        });
        const expected = histogramQuantile(0.99, calls) * 1000;
        // The bucket holding the rank, and how finely its calls are spread (one point per call, ≤ 64).
        const cumulative = calls.map((_, k) => calls.slice(0, k + 1).reduce((a, b) => a + b, 0));
        const i = calls.findIndex((n, k) => cumulative[k]! >= 0.99 * total && n > 0);
        const width = (BOUNDS[i]! - (i === 0 ? 0 : BOUNDS[i - 1]!)) * 1000;
        const point = width / Math.min(calls[i]!, 64);
        expect(Math.abs(slices[0]!.histogram.percentile(99) - expected)).toBeLessThanOrEqual(
          expected * 0.02 + point + 0.01,
        );
        expect(slices[0]!.count).toBe(total);
      }),
    );
  });

  it('counts the +Inf bucket at the largest finite bound, as histogram_quantile does', () => {
    const built = buildFleetSlices({
      kind: 'classic',
      buckets: classic([[0, 0, 0, 0, 0, 90, 10]]),
      stepMs: 1000,
      scaleToMs: 1000,
      context,
    });
    expect(built.overflow).toBe(10);
    expect(built.largestBoundMs).toBe(500);
    expect(built.slices[0]!.histogram.max).toBe(500);
  });

  it('rounds extrapolated counts and raises a dip below the previous bound', () => {
    const buckets: RangeSeries[] = [
      { labels: { le: '0.1' }, values: [{ atMs: 1000, value: 10.4 }], histograms: [] },
      { labels: { le: '0.2' }, values: [{ atMs: 1000, value: 9.6 }], histograms: [] },
      { labels: { le: '+Inf' }, values: [{ atMs: 1000, value: 12.2 }], histograms: [] },
    ];
    const { slices } = buildFleetSlices({ kind: 'classic', buckets, stepMs: 1000, scaleToMs: 1000, context });
    expect(slices[0]!.histogram.count).toBe(12);
  });

  it('takes calls and errors from the counters when given', () => {
    const counts = countsByOutcome([
      { labels: { outcome: 'success' }, values: [{ atMs: 10_000, value: 950 }], histograms: [] },
      { labels: { outcome: 'failure' }, values: [{ atMs: 10_000, value: 50 }], histograms: [] },
    ]);
    const { slices } = buildFleetSlices({
      kind: 'classic',
      buckets: classic([[0, 1000, 0, 0, 0, 0, 0]]),
      stepMs: 10_000,
      scaleToMs: 1000,
      counts,
      context,
    });
    expect(slices[0]).toMatchObject({ count: 1000, errors: 50 });
  });

  it('reads native histogram buckets, the zero bucket at 0', () => {
    const buckets: RangeSeries[] = [
      {
        labels: {},
        values: [],
        histograms: [
          {
            atMs: 5000,
            histogram: {
              count: 100,
              sum: 3,
              buckets: [
                { lower: -0.001, upper: 0.001, count: 1 },
                { lower: 0.02, upper: 0.025, count: 89 },
                { lower: 0.05, upper: 0.06, count: 10 },
              ],
            },
          },
        ],
      },
    ];
    const { slices } = buildFleetSlices({ kind: 'native', buckets, stepMs: 5000, scaleToMs: 1000, context });
    expect(slices[0]!.count).toBe(100);
    expect(slices[0]!.histogram.min).toBeGreaterThanOrEqual(0);
    expect(slices[0]!.histogram.percentile(95)).toBeGreaterThan(50);
    expect(slices[0]!.histogram.percentile(95)).toBeLessThanOrEqual(60);
  });

  it.each([
    [
      'a NaN bucket count',
      [{ labels: { le: '0.1' }, values: [{ atMs: 1, value: Number.NaN }], histograms: [] }],
      'PROMETHEUS_NOT_FINITE',
    ],
    [
      'an infinite bucket count',
      [{ labels: { le: '0.1' }, values: [{ atMs: 1, value: Number.POSITIVE_INFINITY }], histograms: [] }],
      'PROMETHEUS_NOT_FINITE',
    ],
    [
      'a series without le',
      [{ labels: {}, values: [{ atMs: 1, value: 1 }], histograms: [] }],
      'PROMETHEUS_BAD_RESPONSE',
    ],
    [
      'a series with le="x"',
      [{ labels: { le: 'x' }, values: [], histograms: [] }],
      'PROMETHEUS_BAD_RESPONSE',
    ],
  ])('refuses %s with a typed error', (_what, buckets, code) => {
    expect(() =>
      buildFleetSlices({
        kind: 'classic',
        buckets: buckets as RangeSeries[],
        stepMs: 1000,
        scaleToMs: 1000,
        context,
      }),
    ).toThrow(expect.objectContaining({ code }));
    try {
      buildFleetSlices({
        kind: 'classic',
        buckets: buckets as RangeSeries[],
        stepMs: 1000,
        scaleToMs: 1000,
        context,
      });
    } catch (error) {
      expect(isPrazoError(error, code as 'PROMETHEUS_NOT_FINITE')).toBe(true);
    }
  });
});

describe('unitScale', () => {
  it.each([
    ['http_client_request_duration_seconds', 1000, false],
    ['rpc_latency_milliseconds', 1, false],
    ['rpc_latency_ms', 1, false],
    ['rpc_latency', 1000, true],
  ])('reads the unit of %s', (name, scale, noted) => {
    const u = unitScale(name);
    expect(u.scaleToMs).toBe(scale);
    expect(u.note !== undefined).toBe(noted);
  });
});
