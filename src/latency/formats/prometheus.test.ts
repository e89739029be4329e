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
