import { describe, expect, it } from 'vitest';
import { createRandom } from '../../random.js';
import { createWaterfallSampler } from './sampler.js';
import type { DeadlineWaterfall, WaterfallPick } from './waterfall.js';

const waterfall = (pick: WaterfallPick, elapsedMs: number, id: number): DeadlineWaterfall => ({
  config: 'prazo',
  pick,
  variant: 'hedged',
  status: pick === 'failing' ? 504 : 200,
  receivedAtMs: id,
  elapsedMs,
  userDeadlineMs: 2_000,
  limitMs: 1_900,
  source: 'ledger',
  candidates: 0,
  rows: [],
});

describe('the /checkout waterfall sampler', () => {
  it('holds one failing and the slowest successful /checkout, whatever the traffic, and builds only what it picks', () => {
    const random = createRandom(7);
    const sampler = createWaterfallSampler(createRandom(11));
    const built: number[] = [];
    let slowest = 0;
    for (let i = 0; i < 20_000; i++) {
      const ok = random() < 0.7;
      const elapsedMs = random() * 2_000;
      if (ok) slowest = Math.max(slowest, elapsedMs);
      const pick = sampler.consider(ok, elapsedMs);
      if (pick === null) continue;
      built.push(i);
      sampler.keep(pick, waterfall(pick, elapsedMs, i));
    }
    const samples = sampler.peek();
    expect(samples.failures + samples.successes).toBe(20_000);
    expect(samples.slow?.elapsedMs).toBe(slowest);
    expect(samples.slow?.candidates).toBe(samples.successes);
    expect(samples.failing?.pick).toBe('failing');
    expect(samples.failing?.candidates).toBe(samples.failures);
    // About ln(n) replacements for each of the two over n candidates in random order: ~10 each here.
    expect(built.length).toBeLessThan(60);
  });

  it('draws every failing /checkout with the same chance (a reservoir of one)', () => {
    const counts = [0, 0, 0, 0, 0];
    const random = createRandom(3);
    for (let trial = 0; trial < 5_000; trial++) {
      const sampler = createWaterfallSampler(random);
      for (let i = 0; i < 5; i++) {
        const pick = sampler.consider(false, 100 + i);
        if (pick) sampler.keep(pick, waterfall(pick, 100 + i, i));
      }
      counts[sampler.peek().failing!.receivedAtMs]!++;
    }
    // Each of the five is kept in about a fifth of the trials (1 000 ± 4 standard deviations).
    for (const count of counts)
      expect(Math.abs(count - 1_000)).toBeLessThan(4 * Math.sqrt(5_000 * 0.2 * 0.8));
  });

  it('does not pick a successful /checkout that is not slower than the one it holds', () => {
    const sampler = createWaterfallSampler();
    expect(sampler.consider(true, 300)).toBe('slow');
    sampler.keep('slow', waterfall('slow', 300, 1));
    expect(sampler.consider(true, 299)).toBeNull();
    expect(sampler.consider(true, 300)).toBeNull();
    expect(sampler.consider(true, 301)).toBe('slow');
  });

  it('starts over once taken (a new phase)', () => {
    const sampler = createWaterfallSampler();
    sampler.keep(sampler.consider(false, 10)!, waterfall('failing', 10, 1));
    sampler.keep(sampler.consider(true, 10)!, waterfall('slow', 10, 2));
    const taken = sampler.take();
    expect(taken.failing?.receivedAtMs).toBe(1);
    expect(taken.slow?.receivedAtMs).toBe(2);
    expect(sampler.peek()).toEqual({ failing: null, slow: null, failures: 0, successes: 0 });
    expect(sampler.consider(true, 1)).toBe('slow');
  });
});
