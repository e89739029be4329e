import { describe, expect, it } from 'vitest';
import { createRandom, lognormalMs, standardNormal } from './random.js';

const draws = (n: number, draw: () => number) => Array.from({ length: n }, draw).sort((a, b) => a - b);

describe('createRandom', () => {
  it('replays the same sequence for the same seed', () => {
    const a = createRandom(42);
    const b = createRandom(42);
    expect(Array.from({ length: 5 }, a)).toEqual(Array.from({ length: 5 }, b));
  });

  it('gives different sequences for different seeds', () => {
    expect(createRandom(1)()).not.toBe(createRandom(2)());
  });

  it('stays in [0, 1) and is roughly uniform', () => {
    const values = draws(20_000, createRandom(7));
    expect(values[0]).toBeGreaterThanOrEqual(0);
    expect(values.at(-1)).toBeLessThan(1);
    expect(values[10_000]).toBeGreaterThan(0.48);
    expect(values[10_000]).toBeLessThan(0.52);
  });

  it('treats a non-finite seed as 0 instead of producing NaN', () => {
    expect(Number.isNaN(createRandom(Number.NaN)())).toBe(false);
  });
});

describe('standardNormal', () => {
  it('has mean about 0 and its 99th percentile about 2.33', () => {
    const values = draws(40_000, () => standardNormal(createRandomOnce));
    const mean = values.reduce((s, v) => s + v, 0) / values.length;
    expect(Math.abs(mean)).toBeLessThan(0.03);
    expect(values[Math.floor(values.length * 0.99)]).toBeCloseTo(2.33, 0);
  });
});
const createRandomOnce = createRandom(3);

describe('lognormalMs', () => {
  it('reproduces the requested median and p99 within a few per cent', () => {
    const random = createRandom(11);
    const values = draws(40_000, () => lognormalMs(random, 50, 180));
    const median = values[20_000]!;
    const p99 = values[Math.floor(values.length * 0.99)]!;
    expect(median).toBeGreaterThan(48);
    expect(median).toBeLessThan(52);
    expect(p99).toBeGreaterThan(170);
    expect(p99).toBeLessThan(190);
  });

  it('is constant when the median equals the p99', () => {
    expect(lognormalMs(createRandom(1), 80, 80)).toBeCloseTo(80, 9);
  });
});
