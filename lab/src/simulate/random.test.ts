import { describe, expect, it } from 'vitest';
import { createSimRandom } from './random.js';

const draw = (n: number, f: () => number) => Array.from({ length: n }, f);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('createSimRandom', () => {
  it('replays the same sequence for the same seed and a different one for another seed', () => {
    const a = createSimRandom(42);
    const b = createSimRandom(42);
    const c = createSimRandom(43);
    const xs = draw(100, a.next);
    expect(draw(100, b.next)).toEqual(xs);
    expect(draw(100, c.next)).not.toEqual(xs);
    expect(xs.every((v) => v >= 0 && v < 1)).toBe(true);
  });

  it('forks independent streams: draws on one do not shift another', () => {
    const root = createSimRandom(1);
    const first = draw(10, root.fork(1).next);
    const other = createSimRandom(1);
    draw(1_000, other.fork(2).next);
    expect(draw(10, other.fork(1).next)).toEqual(first);
    expect(draw(10, root.fork(2).next)).not.toEqual(first);
  });

  it('draws exponential, log-normal and Pareto values with the requested parameters', () => {
    const random = createSimRandom(7);
    expect(mean(draw(100_000, () => random.exponential(10)))).toBeCloseTo(10, 0);
    const logNormal = draw(100_000, () => random.logNormal(28, 0.5));
    expect(mean(logNormal)).toBeGreaterThan(27.5);
    expect(mean(logNormal)).toBeLessThan(28.5);
    const pareto = draw(100_000, () => random.pareto(5, 3));
    expect(Math.min(...pareto)).toBeGreaterThanOrEqual(5);
    // Mean of a Pareto(xm, α) is α·xm / (α − 1) = 7.5.
    expect(mean(pareto)).toBeCloseTo(7.5, 0);
  });

  it('rejects a seed that is not a safe integer', () => {
    expect(() => createSimRandom(1.5)).toThrow(/seed/);
  });
});
