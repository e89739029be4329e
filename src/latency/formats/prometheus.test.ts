import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPrazoError } from '../../errors.js';
import { createPrometheusParser } from './prometheus.js';

const feed = (text: string, metric?: string) => {
  const parser = createPrometheusParser('scrape.prom', metric === undefined ? {} : { metric });
  text.split('\n').forEach((line, i) => {
    parser.line(line, i + 1);
  });
  return parser.end();
};

const exposition = `# HELP checkout_balance_duration_seconds Latency of the balance call.
# TYPE checkout_balance_duration_seconds histogram
checkout_balance_duration_seconds_bucket{route="/balance",le="0.05"} 500
checkout_balance_duration_seconds_bucket{route="/balance",le="0.1"} 900
checkout_balance_duration_seconds_bucket{route="/balance",le="0.2"} 995
checkout_balance_duration_seconds_bucket{route="/balance",le="+Inf"} 1000
checkout_balance_duration_seconds_sum{route="/balance"} 61.2
checkout_balance_duration_seconds_count{route="/balance"} 1000
# a second series of the same histogram
checkout_balance_duration_seconds_bucket{route="/pay",le="0.05"} 0
checkout_balance_duration_seconds_bucket{route="/pay",le="0.1"} 0
checkout_balance_duration_seconds_bucket{route="/pay",le="0.2"} 0
checkout_balance_duration_seconds_bucket{route="/pay",le="+Inf"} 0
process_cpu_seconds_total 12.5
`;

describe('prometheus format', () => {
  it('reads a histogram in seconds, merging its series, as one untimed slice', () => {
    const parsed = feed(exposition);
    expect(parsed.timed).toBe(false);
    expect(parsed.slices).toHaveLength(1);
    expect(parsed.slices[0]!.count).toBe(1000);
    expect(parsed.slices[0]!.errors).toBe(0);
  });

  it('interpolates within a bucket as histogram_quantile does', () => {
    const histogram = feed(exposition).slices[0]!.histogram;
    // p50 = 500th call: the top of the first bucket (50 ms); p90 = the top of the second (100 ms).
    expect(histogram.percentile(50)).toBeCloseTo(50, -0.5);
    expect(histogram.percentile(90)).toBeCloseTo(100, -0.5);
    // p99 = 990th call: 90 of the 95 calls into (100, 200] ms → ≈ 194.7 ms (within a sub-point).
    expect(Math.abs(histogram.percentile(99) - 194.7)).toBeLessThan(3);
  });

  it('counts the +Inf bucket at the largest finite bound and says so', () => {
    const parsed = feed(exposition);
    expect(parsed.slices[0]!.histogram.max).toBeCloseTo(200, -0.5);
    expect(parsed.notes).toContain('5 calls above the largest bucket (200 ms) counted at that bound');
  });

  it('takes a name ending in _milliseconds as milliseconds', () => {
    const parsed = feed('rpc_milliseconds_bucket{le="100"} 10\nrpc_milliseconds_bucket{le="+Inf"} 10\n');
    expect(parsed.slices[0]!.histogram.max).toBeCloseTo(100, -0.5);
  });

  it('assumes seconds for a name without a unit, with a note', () => {
    const parsed = feed('rpc_latency_bucket{le="0.1"} 10\nrpc_latency_bucket{le="+Inf"} 10\n');
    expect(parsed.slices[0]!.histogram.max).toBeCloseTo(100, -0.5);
    expect(parsed.notes[0]).toBe('rpc_latency: unit not in the name, read as seconds');
  });

  it('asks which histogram to read when there are several, and reads the one named', () => {
    const two = `${exposition}other_seconds_bucket{le="1"} 1\nother_seconds_bucket{le="+Inf"} 1\n`;
    expect(() => feed(two)).toThrow('several histograms (checkout_balance_duration_seconds, other_seconds)');
    expect(feed(two, 'other_seconds_bucket').slices[0]!.count).toBe(1);
    expect(() => feed(two, 'missing')).toThrow('no histogram named "missing"');
  });

  it('warns QUANTILE_ABOVE_LARGEST_BUCKET when the p99 falls in the +Inf bucket', () => {
    const offScale = (above: number) =>
      feed(
        `rpc_seconds_bucket{le="0.1"} 900\nrpc_seconds_bucket{le="0.25"} ${1000 - above}\nrpc_seconds_bucket{le="+Inf"} 1000\n`,
      ).warnings ?? [];
    expect(offScale(10)).toEqual([]); // exactly 1 %: the 990th call is still at 250 ms
    const [warning] = offScale(50);
    expect(warning?.code).toBe('QUANTILE_ABOVE_LARGEST_BUCKET');
    expect(warning?.message).toMatch(
      /^p99 falls in the \+Inf bucket of rpc_seconds: 50 of 1000 calls \(5\.0 %\)/,
    );
    expect(warning?.message).toContain('above the largest bucket (250 ms)');
    expect(offScale(60)[0]?.message).toMatch(/^p99, p95 fall in the \+Inf bucket/);
  });

  it('warns SERIES_MERGED when several series with calls are merged without a selector', () => {
    const routes = exposition
      .replaceAll('{route="/pay",le="0.2"} 0', '{route="/pay",le="0.2"} 7')
      .replaceAll('{route="/pay",le="+Inf"} 0', '{route="/pay",le="+Inf"} 7');
    const merged = feed(routes);
    expect(merged.slices[0]!.count).toBe(1007);
    expect(merged.warnings?.map((w) => w.code)).toEqual(['SERIES_MERGED']);
    expect(merged.warnings?.[0]?.message).toContain(
      '2 series of checkout_balance_duration_seconds with calls',
    );
    expect(merged.warnings?.[0]?.message).toContain('{route=/balance}');
  });

  it('reads the series a label selector names, and merges every series on purpose with {}', () => {
    const routes = exposition.replaceAll('{route="/pay",le="+Inf"} 0', '{route="/pay",le="+Inf"} 7');
    const balance = feed(routes, 'checkout_balance_duration_seconds{route="/balance"}');
    expect(balance.slices[0]!.count).toBe(1000);
    expect(balance.warnings).toEqual([]);
    const all = feed(routes, 'checkout_balance_duration_seconds{}');
    expect(all.slices[0]!.count).toBe(1007);
    expect(all.warnings?.map((w) => w.code)).not.toContain('SERIES_MERGED');
    expect(() => feed(routes, 'checkout_balance_duration_seconds{route="/none"}')).toThrow(
      'no series of checkout_balance_duration_seconds has {route=/none}',
    );
    expect(() => feed(routes, 'checkout_balance_duration_seconds{route=')).toThrow(
      'malformed metric selector',
    );
  });

  it('throws nothing but InvalidInputError on arbitrary metric selectors', () => {
    const piece = fc.constantFrom(
      'checkout_balance_duration_seconds',
      '{',
      '}',
      'route',
      '=',
      '"',
      '/pay',
      ',',
      '\\',
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(piece, fc.string({ maxLength: 3 })), { maxLength: 10 }), (pieces) => {
        try {
          feed(exposition, pieces.join(''));
        } catch (error) {
          return isPrazoError(error, 'INVALID_INPUT');
        }
        return true;
      }),
      { numRuns: 2_000 },
    );
  });

  describe('names the file, the line and the value', () => {
    it.each([
      [
        'x_seconds_bucket{le="0.1"} 5\nx_seconds_bucket{le="+Inf"} 3\n',
        'scrape.prom:2: bucket counts of x_seconds{} are not cumulative',
      ],
      ['x_seconds_bucket{le="abc"} 5\n', 'scrape.prom:1: bucket bound le="abc"'],
      ['x_seconds_bucket{le="0.1"} many\n', 'scrape.prom:1: bucket count "many"'],
      ['x_seconds_bucket{le="0.1" 5\n', 'scrape.prom:1: not a Prometheus sample line'],
      ['x_seconds_bucket{le=0.1} 5\n', 'scrape.prom:1: malformed labels'],
      ['x_seconds_bucket{le="0.1"} 5\nx_seconds_bucket{le="0.1"} 6\n', 'scrape.prom:2: duplicate bucket'],
      ['x_seconds_bucket{le="+Inf"} 5\n', 'scrape.prom:1: x_seconds{} has no finite bucket bound'],
      ['up 1\n', 'scrape.prom: no histogram buckets'],
    ])('%j', (text, message) => {
      expect(() => feed(text)).toThrow(message);
    });
  });

  it('throws nothing but InvalidInputError on arbitrary lines', () => {
    const piece = fc.constantFrom(
      'x_seconds_bucket',
      '{',
      '}',
      'le=',
      '"',
      '0.1',
      '+Inf',
      ',',
      ' ',
      '5',
      '\n',
      '#',
      'a="b\\"',
      '-1',
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(piece, fc.string({ maxLength: 4 })), { maxLength: 24 }), (pieces) => {
        try {
          feed(pieces.join(''));
        } catch (error) {
          return isPrazoError(error, 'INVALID_INPUT');
        }
        return true;
      }),
      { numRuns: 10_000 },
    );
  });
});
