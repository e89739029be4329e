import { createRandom } from '@prazo/lab/random';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPrazoError } from '../errors.js';
import { LatencyHistogram } from './histogram.js';

/** Nearest-rank percentile of a sorted array: the definition the histogram promises. */
function exactPercentile(sorted: readonly number[], p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

function gaussian(random: () => number): number {
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

const distributions: Record<string, (random: () => number) => number> = {
  uniform: (r) => 0.1 + r() * 500,
  lognormal: (r) => 40 * Math.exp(0.6 * gaussian(r)),
  'long-tailed mixture (2 % GC pauses of 1–3 s)': (r) =>
    r() < 0.02 ? 1000 + r() * 2000 : 5 * Math.exp(0.4 * gaussian(r)),
  pareto: (r) => 2 / (1 - r()) ** (1 / 1.2),
  'sub-millisecond loopback': (r) => 0.1 + r() * 0.8,
};

describe('LatencyHistogram', () => {
  for (const [name, draw] of Object.entries(distributions)) {
    it(`reports percentiles within 1 % of the exact value (${name})`, () => {
      const random = createRandom(42);
      const h = new LatencyHistogram();
      const values: number[] = [];
      for (let i = 0; i < 50_000; i++) {
        const v = draw(random);
        values.push(v);
        h.record(v);
      }
      values.sort((a, b) => a - b);
      for (const p of [1, 10, 50, 90, 95, 99, 99.9, 99.99, 100]) {
        const exact = exactPercentile(values, p);
        const reported = h.percentile(p);
        expect(
          Math.abs(reported - exact) / exact,
          `p${p}: exact ${exact}, reported ${reported}`,
        ).toBeLessThan(0.01);
      }
      expect(h.count).toBe(values.length);
      expect(h.min).toBe(values[0]);
      expect(h.max).toBe(values.at(-1));
    });
  }

  it('keeps percentiles within 1 % for any sample (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.1, max: 3_600_000, noNaN: true }), { minLength: 1, maxLength: 300 }),
        fc.double({ min: 0, max: 100, noNaN: true }),
        (values, p) => {
          const h = new LatencyHistogram();
          for (const v of values) h.record(v);
          const exact = exactPercentile(
            [...values].sort((a, b) => a - b),
            p,
          );
          return Math.abs(h.percentile(p) - exact) / exact < 0.01;
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('answers several percentiles in one scan, in the order asked', () => {
    const h = new LatencyHistogram();
    for (let i = 1; i <= 1000; i++) h.record(i);
    const [p99, p50, p0] = h.percentiles([99, 50, 0]);
    expect(p99).toBeCloseTo(990, -1);
    expect(p50).toBeCloseTo(500, -1);
    expect(p0).toBe(1);
  });

  it('computes the exact mean, and 0 everywhere when empty', () => {
    const h = new LatencyHistogram();
    expect([h.count, h.min, h.max, h.mean(), h.percentile(99)]).toEqual([0, 0, 0, 0, 0]);
    h.record(10);
    h.record(30);
    h.recordMany(20, 2);
    expect(h.mean()).toBe(20);
    expect(h.count).toBe(4);
  });

  it('ignores NaN and non-positive counts, and counts negative latencies as 0', () => {
    const h = new LatencyHistogram();
    h.record(Number.NaN);
    h.recordMany(5, 0);
    h.recordMany(5, -1);
    expect(h.count).toBe(0);
    h.record(-3);
    expect([h.count, h.min, h.max]).toEqual([1, 0, 0]);
  });

  it('keeps values beyond 71 minutes in the last bucket without losing the exact max', () => {
    const h = new LatencyHistogram();
    h.record(1e12);
    expect(h.max).toBe(1e12);
    expect(h.percentile(100)).toBe(1e12);
  });

  it('merges and resets', () => {
    const a = new LatencyHistogram();
    const b = new LatencyHistogram();
    for (let i = 1; i <= 100; i++) a.record(i);
    for (let i = 101; i <= 200; i++) b.record(i);
    const merged = a.clone().merge(b);
    expect(merged.count).toBe(200);
    expect(merged.percentile(50)).toBeCloseTo(100, -0.5);
    expect(merged.max).toBe(200);
    expect(a.count).toBe(100);
    merged.reset();
    expect(merged.count).toBe(0);
    expect(merged.percentile(50)).toBe(0);
  });

  it('round-trips through its JSON form', () => {
    const h = new LatencyHistogram();
    const random = createRandom(7);
    for (let i = 0; i < 5000; i++) h.record(20 * Math.exp(gaussian(random)));
    const copy = LatencyHistogram.fromJSON(JSON.parse(JSON.stringify(h)));
    expect(copy.percentiles([50, 99, 99.9])).toEqual(h.percentiles([50, 99, 99.9]));
    expect([copy.count, copy.min, copy.max, copy.mean()]).toEqual([h.count, h.min, h.max, h.mean()]);
  });

  it('rejects malformed JSON with a typed error naming the field', () => {
    const good = new LatencyHistogram();
    good.record(5);
    const base = good.toJSON();
    const cases: Array<[unknown, RegExp]> = [
      [null, /prazo histogram/],
      [{ ...base, format: 'x' }, /format/],
      [{ ...base, buckets: [[1e9, 1]] }, /outside/],
      [{ ...base, buckets: [[3000, -1]] }, /positive integer/],
      [{ ...base, count: 7 }, /bucket total/],
      [{ ...base, sumMs: 'a' }, /sumMs/],
    ];
    for (const [input, message] of cases) {
      expect(() => LatencyHistogram.fromJSON(input, 'h.json')).toThrow(message);
    }
  });

  it('never throws anything but a typed input error on arbitrary JSON (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        try {
          LatencyHistogram.fromJSON(value);
          return true;
        } catch (error) {
          return isPrazoError(error, 'INVALID_INPUT');
        }
      }),
      { numRuns: 10_000 },
    );
  });
});
